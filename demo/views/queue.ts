/** The queue view is leasehold/inspector's, the same one `<leasehold-inspector>` shows. */
export { QueueView } from 'leasehold/inspector';
