/**
 * leasehold/inspector: `<leasehold-inspector>`, an operator's view of any queue that an app
 * mounts in its own page (load it when first shown: `await import('leasehold/inspector')`),
 * and `httpTransport`, the client of leasehold/inspector/http for a queue in a server process.
 * The views it is made of (and the DOM helpers they use) are exported too, for pages that lay
 * them out themselves: the demo page is built from them.
 */
export { defineInspector } from './element.js';
export type { LeaseholdInspectorElement } from './element.js';
export { httpTransport } from './client.js';
export type { HttpTransportOptions } from './client.js';
export { QueueView } from './queue.js';
export { DeadLettersView } from './dead.js';
export { TimelinePanel } from './timeline/panel.js';
export { TimelineModel } from './timeline/model.js';
export type { Item, LeaseEnd, LeaseSpan, Mark, WaitSpan } from './timeline/model.js';
export { byLane, colour, drawAxis, drawLane, INK, LABEL, LANE, patterns, x } from './timeline/draw.js';
export type { LaneMode, Scale } from './timeline/draw.js';
export type { DeadLettersViewOptions } from './dead.js';
export { THEME_CSS, VIEW_CSS } from './styles.js';
export { eventLabel, seconds } from './format.js';
export { h, icon, setAttr, setIcon, setText, svg } from './dom.js';
export type { Props } from './dom.js';
