/**
 * The timeline's drawing is the inspector's own (src/inspector/timeline/), taken from the source
 * tree: drawing helpers are not part of leasehold/inspector's public API.
 */
export { byLane, colour, drawAxis, drawLane, INK, LABEL, LANE, patterns, x } from '../../src/inspector/timeline/draw.js';
export type { LaneMode, Scale } from '../../src/inspector/timeline/draw.js';
