/**
 * leasehold/http: the client half of an outbox's delivery. `httpDelivery({ url })` is a
 * `consume()` handler that sends each event with its delivery id as `Idempotency-Key` and turns
 * the answer into an ack, a retry later (no attempt spent) or a dead letter;
 * `reportLostOrigin()` tells the server a device database was lost. The server half that reads
 * exactly these headers is `leasehold/receiver`. See docs/http.md.
 */
export { httpDelivery, reportLostOrigin, retryAfterMs } from './delivery.js';
export type { Classification, HttpDeliveryOptions, LostOriginReport, ReportLostOriginOptions } from './delivery.js';
