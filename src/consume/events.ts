/**
 * `onEvent`: what happened to each message a consumer held, with timings, for metrics and
 * tracing (OpenTelemetry spans, Prometheus histograms, a log) without leasehold depending on
 * any of them. Times are read from the consumer's clock, and only when a listener is set: a
 * consumer without one reads no clock for it.
 */
import type { Lease } from '../transport/contract.js';

/** Fields every {@link ConsumeEvent} carries. */
interface EventBase<E> {
  /** The lease the event is about (for `claimed`, the new lease). */
  lease: Lease<E>;
  /** When it happened, by the consumer's clock. */
  at: number;
}

/** Fields of the events that end a delivery: how long the handler ran, and since the claim. */
interface Ended {
  /** How long the handler ran (until it resolved or threw). */
  handlerMs: number;
  /** From the claim to this outcome (the handler, then the ack or nack call). */
  totalMs: number;
}

/**
 * One step in the life of a message this consumer held:
 * - `claimed`: a claim gave it a lease; its handler starts now.
 * - `acked`: the handler resolved and the ack landed.
 * - `failed`: the handler threw; the message was nacked, to be delivered again after `retryInMs`.
 * - `retried`: the handler threw a `RetryLaterError`; released for `retryInMs`, no attempt spent.
 * - `dead`: the handler threw a `RejectError`; the message went to the dead letters with `reason`.
 *
 * A message the transport moves to the dead letters itself (`maxAttempts` reached at a claim)
 * never reaches a handler and raises no event: read `stats().dead` for it. An outcome whose call
 * failed (an ack that found the lease lost…) goes to `onError` instead.
 */
export type ConsumeEvent<E = unknown> =
  | (EventBase<E> & { type: 'claimed' })
  | (EventBase<E> & Ended & { type: 'acked' })
  | (EventBase<E> & Ended & { type: 'failed'; error: unknown; retryInMs: number })
  | (EventBase<E> & Ended & { type: 'retried'; retryInMs: number })
  | (EventBase<E> & Ended & { type: 'dead'; reason: string | null });

/** The outcomes {@link Events.ended} reports, with their own fields. */
type Outcome<E> = Exclude<ConsumeEvent<E>, { type: 'claimed' }> extends infer T ? (T extends EventBase<E> & Ended ? Omit<T, keyof EventBase<E> | keyof Ended> : never) : never;

/**
 * Reports events to the consumer's listener; what the listener throws surfaces as an unhandled
 * rejection and cannot break the consumer.
 * @internal
 */
export class Events<E> {
  readonly #listener: (event: ConsumeEvent<E>) => void;
  readonly #clock: () => number;
  /** Per lease being handled: when it was claimed and when its handler returned. */
  readonly #times = new WeakMap<object, { claimed: number; handled: number }>();

  constructor(listener: (event: ConsumeEvent<E>) => void, clock: () => number) {
    this.#listener = listener;
    this.#clock = clock;
  }

  /** `job` (any object kept for the delivery) got `lease`. */
  claimed(job: object, lease: Lease<E>): void {
    const at = this.#now();
    this.#times.set(job, { claimed: at, handled: at });
    this.#emit({ type: 'claimed', lease, at });
  }

  /** The handler of `job` returned or threw. */
  handled(job: object): void {
    const times = this.#times.get(job);
    if (times) times.handled = this.#now();
  }

  /** `job`'s delivery ended with `outcome`. */
  ended(job: object, lease: Lease<E>, outcome: Outcome<E>): void {
    const times = this.#times.get(job);
    if (!times) return;
    this.#times.delete(job);
    const at = this.#now();
    this.#emit({ ...outcome, lease, at, handlerMs: times.handled - times.claimed, totalMs: at - times.claimed } as ConsumeEvent<E>);
  }

  #now(): number {
    try {
      return this.#clock();
    } catch {
      return Number.NaN; // a broken clock makes timings NaN, never a broken consumer
    }
  }

  #emit(event: ConsumeEvent<E>): void {
    try {
      this.#listener(event);
    } catch (error) {
      void Promise.reject(error);
    }
  }
}
