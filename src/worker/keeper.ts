/**
 * Keeps the leases a worker holds alive while their handlers run, for both worker loops: one
 * timer for every lease held (not one per lease), armed only while a lease is kept. It ticks
 * every quarter of `renewEveryMs` and extends each lease claimed or last extended at least three
 * quarters of it ago — so once between ¾ and all of `renewEveryMs`, and at the first tick after
 * a stall (a frozen tab, a starved process). Time is measured on the loop's own clock from when it
 * claimed or extended, not by comparing `expiresAt` with it: the transport's clock may be
 * another machine's (PostgreSQL's).
 * @internal
 */
import { ClosedError, LeaseLostError } from '../errors.js';
import type { Lease, Transport } from '../transport/contract.js';
import { readClock } from '../validate.js';
import type { Scheduler } from './types.js';

/** A lease under the keeper's care. A loop may subclass it to carry its own per-lease state. */
export class Kept<E = unknown> {
  /** The latest lease: the claimed one, or the last extension (same `(seq, attempt)`). */
  lease: Lease<E>;
  /** An extend found the lease gone (or the transport closed): nothing can be acked under it now. */
  lost = false;
  /** {@link LeaseKeeper.stop} was called: no more extensions. */
  stopped = false;
  /** The loop's clock when the lease was claimed, or when its last extension was asked for. */
  since = 0;
  /** The extend under way, if any. */
  pending: Promise<void> | undefined;

  constructor(lease: Lease<E>) {
    this.lease = lease;
  }
}

export interface KeeperConfig<E> {
  transport: Pick<Transport<E>, 'extend'>;
  visibilityMs: number;
  renewEveryMs: number;
  scheduler: Scheduler;
  clock: () => number;
  /**
   * Hears every failed extend of a lease not yet stopped (after `lost` is set; a failure other
   * than a lost lease or a closed transport, a busy database, is tried again at the next tick),
   * and a clock that failed (no `kept`; nothing is extended until it reads again).
   */
  onFailure?: (error: unknown, kept?: Kept<E>) => void;
}

export class LeaseKeeper<E = unknown> {
  readonly #cfg: KeeperConfig<E>;
  readonly #kept = new Set<Kept<E>>();
  #timer: unknown;

  constructor(cfg: KeeperConfig<E>) {
    this.#cfg = cfg;
  }

  /** Starts keeping `kept` (whose lease was just claimed). */
  keep<K extends Kept<E>>(kept: K): K {
    kept.since = this.#now();
    this.#kept.add(kept);
    this.#arm();
    return kept;
  }

  /** Stops keeping `kept` and waits for an extend already under way, so its `lease` and `lost` are final. */
  async stop(kept: Kept<E>): Promise<void> {
    kept.stopped = true;
    this.#kept.delete(kept);
    if (this.#kept.size === 0) this.close();
    await kept.pending;
  }

  /** Clears the timer (the loop is done; leases still kept are no longer extended). */
  close(): void {
    this.#cfg.scheduler.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const periodMs = this.#cfg.renewEveryMs / 4;
    const dueMs = this.#cfg.renewEveryMs - periodMs;
    this.#timer = this.#cfg.scheduler.setTimeout(() => {
      this.#timer = undefined;
      const now = this.#now();
      // NaN (a failed clock) is never due.
      for (const kept of this.#kept) if (kept.pending === undefined && !kept.lost && now - kept.since >= dueMs) this.#extend(kept, now);
      if (this.#kept.size > 0) this.#arm();
    }, periodMs);
  }

  #now(): number {
    try {
      return readClock(this.#cfg.clock);
    } catch (error) {
      this.#cfg.onFailure?.(error);
      return Number.NaN;
    }
  }

  #extend(kept: Kept<E>, now: number): void {
    const { transport, visibilityMs, onFailure } = this.#cfg;
    const pending = transport.extend(kept.lease, visibilityMs).then(
      (renewed) => {
        kept.lease = renewed;
        kept.since = now;
      },
      (error: unknown) => {
        if (kept.stopped) return;
        if (error instanceof LeaseLostError || error instanceof ClosedError) kept.lost = true;
        onFailure?.(error, kept);
      },
    );
    kept.pending = pending;
    void pending.then(() => {
      if (kept.pending === pending) kept.pending = undefined;
    });
  }
}
