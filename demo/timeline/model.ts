/** The timeline's model is leasehold/inspector's, which the inspector's own timeline draws too. */
export { TimelineModel } from 'leasehold/inspector';
export type { Item, LeaseEnd, LeaseSpan, Mark, WaitSpan } from 'leasehold/inspector';
