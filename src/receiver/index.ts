/**
 * leasehold/receiver: the server half of an outbox, framework-free. Every delivery
 * `leasehold/http` sends (or any client that speaks its headers) is applied once, in the app's
 * own transaction, and every repeat gets the first answer; per device database (origin) it
 * reports which numbers were removed on purpose, which are still to come and which were lost.
 *
 * `createReceiver({ store, apply })` with `sqliteReceipts(db)` (better-sqlite3, sqlite-wasm, a
 * Durable Object's storage) or `postgresReceipts(db)` (`fromPg(pool)`, `fromPglite(pglite)`);
 * `receiver.handle` is a `Request → Response` handler (Workers, Bun, Deno; Node through
 * `toNodeListener`), `receiver.receive` the same as a plain function. See docs/receiver.md.
 */
export { createReceiver } from './receiver.js';
export type { ApplyContext, ApplyFunction, ApplyResult, GapsReport, QueueGaps, ReceiveAnswer, ReceiveInput, Receiver, ReceiverOptions } from './receiver.js';
export { Refusal } from './store.js';
export type { ReceiptStore, Repeat } from './store.js';
export type { Delivery } from './protocol.js';
export { sqliteReceipts, RECEIVER_COMPONENT } from './sqlite.js';
export { postgresReceipts, RECEIVER_PG_VERSION } from './postgres.js';
export type { PostgresReceiptsOptions } from './postgres.js';
export { toNodeListener } from './node.js';
export type { NodeListenerOptions } from './node.js';
