/** The timeline's model is the inspector's own (src/inspector/timeline/), taken from the source tree. */
export { TimelineModel } from '../../src/inspector/timeline/model.js';
export type { Item, LeaseEnd, LeaseSpan, Mark, WaitSpan } from '../../src/inspector/timeline/model.js';
