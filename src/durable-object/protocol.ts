/**
 * What travels between a leasehold Durable Object and its clients (HTTP body, RPC answer,
 * WebSocket notice). Types and one constant; kept apart from the object so the client's
 * declarations never reach for the Workers runtime.
 * @internal
 */
import type { WireError } from '../browser/wire.js';
import type { ObjectOptions } from './core.js';
import type { Target } from './methods.js';

/** What `POST /call` accepts. `now` and `options` are test hooks (see `LEASEHOLD_TEST_HOOKS`). */
export interface CallBody {
  target: Target;
  method: string;
  /** Encoded with the codec of `leasehold/durable-object/client` (keeps undefined, NaN, cycles…). */
  args: unknown;
  /** Identifies the caller's connection, so its own change notices are not echoed back. */
  client?: string;
  /** The named queue a transport call addresses; default `'default'`. */
  queue?: string;
  now?: number;
  options?: ObjectOptions;
}

/** The answer of `POST /call` and of the `call` RPC method. */
export type CallAnswer =
  /** `rowsWritten`: rows the call wrote, as Cloudflare bills them (what a message costs). */
  | { ok: true; value?: unknown; changed: boolean; rowsWritten: number }
  | { ok: false; error: WireError };

/** The queue name in an alarm's notice: time may have made work claimable in any queue. */
export const ANY_QUEUE = '*';
