/**
 * What travels between a leasehold Durable Object and its clients (HTTP body, RPC answer,
 * WebSocket notice): the shared call and answer of remote/wire.ts, plus what the object adds.
 * Types and one constant; kept apart from the object so the client's declarations never reach
 * for the Workers runtime.
 * @internal
 */
import type { Answer, RemoteCall } from '../remote/wire.js';

/** What `POST /call` accepts. */
export interface CallBody extends Omit<RemoteCall, 'args'> {
  /** Encoded with the codec of `leasehold/durable-object/client` (keeps undefined, NaN, cycles…). */
  args: unknown;
  /** Identifies the caller's connection, so its own change notices are not echoed back. */
  client?: string;
}

/**
 * The answer of `POST /call` and of the `call` RPC method. `changed`: the call may have made work
 * claimable (the caller's own connection gets no notice for it). `rowsWritten`: rows the call
 * wrote, as Cloudflare bills them (what a message costs).
 */
export type CallAnswer = (Answer & { ok: true; changed: boolean; rowsWritten: number }) | (Answer & { ok: false });

/** The queue name in an alarm's notice: time may have made work claimable in any queue. */
export const ANY_QUEUE = '*';
