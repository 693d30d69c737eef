/**
 * The public types of `consume()`: the handler, its options and the handle it returns.
 *
 * Terminology
 * - **slot**: room for one lease. `concurrency` slots, so up to that many messages (of as many
 *   different groups: a transport leases one message per group at a time) are handled at once.
 * - **idle**: every claim found nothing deliverable. The consumer then waits for a change
 *   notice, the next time it knows a lease or park runs out, or its poll back-off.
 */
import type { AbortSignalLike, WorkerLoopOptions } from '../worker/types.js';
import type { ConsumeEvent } from './events.js';
import type { Lease } from '../transport/contract.js';

/**
 * The host's `AbortSignal` where its types declare one (DOM, Node, workers), so a handler can
 * pass it straight to `fetch`; the structural subset otherwise (the core compiles without them).
 */
export type ConsumeSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } } ? S : AbortSignalLike & { readonly reason?: unknown };

/** What a handler receives besides the event and its lease. */
export interface HandlerContext {
  /**
   * Aborts when the handler should give up: the lease was lost (another worker took the message
   * over; `reason` is the `LeaseLostError`), or `stop()` ran out of grace (`reason` is an
   * `AbortError`). Whatever the handler does afterwards, the message is not acked by it.
   */
  signal: ConsumeSignal;
}

/**
 * Handles one message. Resolving acks it (deleted for good); throwing (or rejecting) nacks it
 * with the back-off delay, and the transport's `maxAttempts` dead-letters it in the end.
 * Throwing a `RetryLaterError` releases it without spending an attempt (and the consumer claims
 * nothing for its `afterMs`); throwing a `RejectError` dead-letters it at once with its reason.
 */
export type ConsumeHandler<E = unknown> = (event: E, lease: Lease<E>, context: HandlerContext) => unknown;

/** Where an error reported to `onError` came from. */
export type ConsumePhase = 'handler' | 'claim' | 'ack' | 'nack' | 'release' | 'reject' | 'extend' | 'stats';

/** What `onError` learns besides the error. */
export interface ConsumeErrorInfo<E = unknown> {
  phase: ConsumePhase;
  /** The lease concerned (absent for `claim` and `stats`). */
  lease?: Lease<E>;
  /**
   * An ack, nack, release or reject that failed on a fault that may pass (`STORAGE_UNAVAILABLE`,
   * `STORAGE_BUSY`) is tried again in this many ms, while its lease may live; absent when it is
   * not tried again.
   */
  retryInMs?: number;
}

/**
 * Options of {@link consume}: those of both worker loops ({@link WorkerLoopOptions}: `workerId`
 * defaults to `consume-` and a random id), and a consumer's own. Durations are milliseconds.
 */
export interface ConsumeOptions<E = unknown> extends WorkerLoopOptions {
  /** Messages handled at once, each of a different group (integer 1–1000). Default 1. */
  concurrency?: number;
  /** Claim only groups of at least this priority (integer 0–4). Default 0. */
  minPriority?: number;
  /** Aborting it stops the consumer as `stop()` does, with `graceMs`. */
  signal?: AbortSignalLike;
  /** How long `stop()` (and `signal`) let running handlers finish (≥ 0; `Infinity` waits for them). Default 10 000. */
  graceMs?: number;
  /**
   * Receives every error the consumer survives: handler failures (the message is nacked), and
   * transport failures (claims are retried after the idle back-off; a message whose ack or nack
   * failed is delivered again when its lease runs out). Default: `console.error`, if any.
   * A `LeaseLostError` is reported too (phase `extend` or `ack`): the message moved on without us.
   */
  onError?: (error: unknown, info: ConsumeErrorInfo<E>) => void;
  /**
   * Receives each step of each message this consumer holds — claimed, then acked, failed,
   * retried or dead — with timings by `clock` (see {@link ConsumeEvent}): enough to feed metrics
   * or tracing spans. Called synchronously; what it throws cannot break the consumer. Default none.
   */
  onEvent?: (event: ConsumeEvent<E>) => void;
  /**
   * Start at most `max` handlers (an integer ≥ 1) in any `perMs` (> 0) window: for a server
   * that allows so many requests a second. Default: no bound.
   */
  rate?: { max: number; perMs: number };
}

/**
 * What a consumer is doing, in {@link ConsumerStatus.state}:
 * - `idle`: it holds no lease and is waiting for work;
 * - `delivering`: handlers are running (or their acks are on the way);
 * - `retrying`: a handler threw a `RetryLaterError` (the server answered "later": 429, 503) and
 *   no answer has come since; claims resume at `nextTryAt`;
 * - `offline`: the same, for a `RetryLaterError` with `offline: true` (no answer came at all);
 * - `stopped`: `stop()` was called (or its signal aborted, or its transport closed): it claims
 *   nothing more. Handlers still in their grace may finish; `done` says when all is settled.
 */
export type ConsumerState = 'idle' | 'delivering' | 'retrying' | 'offline' | 'stopped';

/**
 * A consumer's {@link Consumer.status}: a snapshot, the same object until a field changes. Times
 * are read from the consumer's `clock`.
 */
export interface ConsumerStatus {
  /** See {@link ConsumerState}. */
  readonly state: ConsumerState;
  /**
   * While `retrying` or `offline`: when the consumer claims again (the end of the latest
   * `RetryLaterError`'s `afterMs`, + 1 by the inclusive rule of a park). It stays the same
   * through that try: a time in the past means the try is under way. Null in any other state.
   */
  readonly nextTryAt: number | null;
  /**
   * The latest `RetryLaterError`'s message while `retrying` or `offline` (and after `stop()`
   * cut one short); null otherwise. Cleared, with the state, by the next answer: an ack that
   * lands, or a `RejectError` (the server refused, so it was reached); or when the consumer,
   * past `nextTryAt`, holds nothing and finds nothing to claim (nothing left for it to retry).
   */
  readonly lastError: string | null;
  /** When the latest ack of this consumer landed; null before the first. */
  readonly lastDeliveredAt: number | null;
}

/** The running consumer that {@link consume} returns. */
export interface Consumer {
  /** The worker id in its leases. */
  readonly workerId: string;
  /**
   * Stops claiming, lets running handlers finish for `graceMs` (default: the `graceMs` option;
   * those that finish are acked or nacked as usual), then aborts the rest and releases what is
   * still held (at once and without spending an attempt: the consumer gave up, the message did
   * not fail). Resolves when all of that is settled.
   * Calling it again returns the same promise; a shorter `graceMs` shortens the grace.
   * @throws RangeError / TypeError for a bad `graceMs`.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** Resolves when the consumer has stopped and everything it held is settled. Never rejects. */
  readonly done: Promise<void>;
  /** Leases held right now (handlers running or being acked). */
  readonly active: number;
  /** Messages whose handler resolved and whose ack landed. */
  readonly handled: number;
  /** Handler failures (each nacked with the back-off delay). */
  readonly failed: number;
  /** Messages released by a handler's `RetryLaterError` (no attempt spent). */
  readonly retried: number;
  /** Messages dead-lettered by a handler's `RejectError`. */
  readonly rejected: number;
  /** Leases lost (to a renewal or an ack that found the message taken over): the work was dropped. */
  readonly lost: number;
  /** Leases given back by `stop()` after the grace ran out. */
  readonly released: number;
  /** Whether `stop()` (or the signal) was called. */
  readonly stopping: boolean;
  /**
   * What the consumer is doing now, for a page to show (see {@link ConsumerStatus}): the same
   * object until something in it changes, so `useSyncExternalStore(consumer.subscribe, () =>
   * consumer.status)` works as it is. Reading it reads no clock and calls no transport.
   */
  readonly status: ConsumerStatus;
  /**
   * Calls `listener` (no arguments) after {@link status} changed, on a microtask: changes made
   * together (a batch of acks, an ack and the next claim) are told once, and a notice may find
   * the same status object when they undid each other. What the listener
   * throws surfaces as an unhandled rejection and cannot break the consumer. Returns the
   * unsubscribe; may be passed detached.
   * @throws TypeError if `listener` is not a function.
   */
  subscribe(listener: () => void): () => void;
}
