/**
 * `consumer.status`: what a consumer is doing, in the words a page shows (delivering, retrying,
 * offline, idle, stopped), kept as a snapshot that stays the same object until it changes, with
 * listeners told on a microtask (so a batch of acks is one notice, not one per message; a notice
 * may find the status as it was, when changes in one tick undid each other).
 * @internal
 */
import { Listeners } from '../transport/notifier.js';
import type { ConsumerState, ConsumerStatus } from './types.js';

/** What the consumer's last `RetryLaterError` said, until the next answer. */
interface Retry {
  readonly offline: boolean;
  readonly nextTryAt: number;
  readonly error: string | null;
}

export class StatusKeeper {
  #status: ConsumerStatus = Object.freeze({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: null });
  readonly #listeners = new Listeners();
  #held = 0;
  #retry: Retry | null = null;
  #deliveredAt: number | null = null;
  #stopped = false;

  /** The current snapshot: the same object until one of its fields changes. */
  get status(): ConsumerStatus {
    const state: ConsumerState = this.#stopped ? 'stopped' : this.#retry ? (this.#retry.offline ? 'offline' : 'retrying') : this.#held > 0 ? 'delivering' : 'idle';
    const nextTryAt = this.#stopped ? null : (this.#retry?.nextTryAt ?? null);
    const lastError = this.#retry?.error ?? null;
    const s = this.#status;
    if (s.state === state && s.nextTryAt === nextTryAt && s.lastError === lastError && s.lastDeliveredAt === this.#deliveredAt) return s;
    return (this.#status = Object.freeze({ state, nextTryAt, lastError, lastDeliveredAt: this.#deliveredAt }));
  }

  subscribe(listener: () => void): () => void {
    return this.#listeners.add(listener);
  }

  /** Leases held now (handlers running or being acked). */
  holding(count: number): void {
    if (count === this.#held) return;
    this.#held = count;
    this.#changed();
  }

  /** Acks landed at `now`: the server answered, so an outage is over. */
  delivered(now: number): void {
    this.#deliveredAt = now;
    this.#retry = null;
    this.#changed();
  }

  /** A `RejectError` landed: refused, but answered, so an outage is over. */
  answered(): void {
    if (this.#retry === null) return;
    this.#retry = null;
    this.#changed();
  }

  /** A handler threw a `RetryLaterError`: nothing is claimed before `nextTryAt`. */
  retrying(offline: boolean, nextTryAt: number, error: string | null): void {
    this.#retry = { offline, nextTryAt, error };
    this.#changed();
  }

  /**
   * A claim after the retry time found nothing and nothing is held: nothing is left for this
   * consumer to retry (another consumer took it, or it was cancelled).
   */
  nothingLeft(now: () => number): void {
    if (this.#retry === null || this.#held > 0 || now() < this.#retry.nextTryAt) return;
    this.#retry = null;
    this.#changed();
  }

  stopped(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#changed();
  }

  /** Tells the listeners on a microtask: changes made together are told once. */
  #changed(): void {
    this.#listeners.notify();
  }
}
