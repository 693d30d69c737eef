/**
 * leasehold/inspector: `<leasehold-inspector>`, an operator's view of any queue that an app
 * mounts in its own page (load it when first shown: `await import('leasehold/inspector')`),
 * and `httpTransport`, the client of leasehold/inspector/http for a queue in a server process.
 * For a page that lays the views out itself: the views (queue, dead letters, timeline), their
 * CSS, and the default event preview to build an app's own on. Drawing, the timeline's model and
 * DOM helpers are not exported: a page has its own.
 */
export { defineInspector } from './element.js';
export type { LeaseholdInspectorElement } from './element.js';
export { httpTransport } from './client.js';
export type { HttpTransportOptions } from './client.js';
export { QueueView } from './queue.js';
export type { QueueViewOptions } from './queue.js';
export { DeadLettersView } from './dead.js';
export { TimelinePanel } from './timeline/panel.js';
export type { DeadLettersViewOptions } from './dead.js';
export { defaultPreview } from './format.js';
export type { EventPreview } from './format.js';
export { THEME_CSS, VIEW_CSS } from './styles.js';
