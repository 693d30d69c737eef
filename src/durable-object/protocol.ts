/**
 * What travels between a leasehold Durable Object and its clients (HTTP body, RPC answer,
 * WebSocket call, answer and notice): the shared call and answer of remote/wire.ts, plus what the object adds.
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

/**
 * A call over the object's WebSocket (`GET …/changes`): the body of `POST /call` with the id its
 * answer echoes. The socket's connection is the caller: its own changes are not echoed to it.
 */
export interface SocketCall extends Omit<CallBody, 'client'> {
  id: number;
}

/** The object's answer to a {@link SocketCall}; notices (`{"changed": queue}`) share the socket. */
export type SocketAnswer = CallAnswer & { id: number };

/**
 * The largest call the client sends over the socket, in bytes of JSON: workerd closes a socket
 * whose incoming message passes 1 MiB (Cloudflare allows 32 MiB; local workerd keeps 1 MiB), so
 * a larger call goes over HTTP.
 */
export const SOCKET_CALL_MAX_BYTES = 1_000_000;

/** The queue name in an alarm's notice: time may have made work claimable in any queue. */
export const ANY_QUEUE = '*';
