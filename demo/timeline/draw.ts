/** The timeline's drawing is leasehold/inspector's, which the inspector's own timeline uses too. */
export { byLane, colour, drawAxis, drawLane, INK, LABEL, LANE, patterns, x } from 'leasehold/inspector';
export type { LaneMode, Scale } from 'leasehold/inspector';
