/**
 * `consume()`: the worker loop for the plain queue, on any Transport. One loop (the pump) does
 * every claim and every ack of a consumer, so the acks of handlers that finish together share a
 * call that also claims for the free slots (`ackAndClaimMany`), and a lone ack takes the next
 * message in the same call (`ackAndClaim`); handlers run concurrently beside it, each under its
 * own lease.
 */
import { ClosedError, LeaseLostError, StorageError } from '../errors.js';
import type { Lease, Transport } from '../transport/contract.js';
import { readClock, reasonFrom } from '../validate.js';
import { IdleTimer, Notices } from '../worker/idle.js';
import { LeaseKeeper } from '../worker/keeper.js';
import { retryDelay } from '../worker/options.js';
import { abortControllerClass, Job } from './job.js';
import { checkGrace, type ConsumeConfig, resolveConsume } from './options.js';
import { ackAll, ackAllAndClaim, claimUpTo } from './batch.js';
import { RejectError, RetryLaterError } from './outcomes.js';
import { StatusKeeper } from './status.js';
import type { ConsumeErrorInfo, ConsumeHandler, ConsumeOptions, Consumer, ConsumerStatus } from './types.js';

/** The first wait before a failed settle is tried again, doubled per failure up to the most. */
const SETTLE_RETRY_MIN_MS = 50;
const SETTLE_RETRY_MAX_MS = 2_000;

/** A fault that may pass (the database restarting or busy, a connection dropped): a settle worth trying again. */
function passing(error: unknown): boolean {
  return error instanceof StorageError && (error.code === 'STORAGE_UNAVAILABLE' || error.code === 'STORAGE_BUSY');
}

/**
 * Runs `handler` for every message `transport` delivers, until stopped: resolve → ack; throw →
 * nack with the back-off delay (the transport's `maxAttempts` then dead-letters a message that
 * keeps failing); throw a `RetryLaterError` → released without spending an attempt, and nothing
 * is claimed for its `afterMs`; throw a `RejectError` → a dead letter at once. Up to
 * `concurrency` messages at once (and, with `rate`, so many starts per window), each of a
 * different group; a handler
 * that outlives half its visibility has its lease extended, and its `signal` aborts if the lease
 * is lost. Idle, it waits for the transport's change notices (where it has them), wakes at the
 * next time it knows a lease or park runs out, and otherwise polls with back-off.
 *
 * An ack, nack, release or reject that fails on a fault that may pass (`StorageError` with code
 * `STORAGE_UNAVAILABLE` or `STORAGE_BUSY`: a database restarting, a dropped connection) is tried
 * again with back-off for as long as the lease may live (`visibilityMs` from its first failure),
 * keeping its slot: once the database is back the ack lands and the group goes on, rather than
 * waiting for the lease to run out and delivering the message again. Fencing still decides: a
 * `LeaseLostError` ends the tries. Each failure is reported to `onError` with `retryInMs`.
 *
 * Delivery is at least once: after a crash, a lost lease or an ack that could not land in time
 * the message is delivered again, so give handlers' side effects idempotency keys.
 *
 * @returns the running {@link Consumer}; it starts claiming on the next microtask.
 * @throws TypeError / RangeError naming the first bad argument or option (nothing has run).
 */
export function consume<E = unknown>(transport: Transport<E>, handler: ConsumeHandler<E>, options?: ConsumeOptions<E>): Consumer {
  return new Consuming(resolveConsume(transport, handler, options));
}

class Consuming<E> implements Consumer {
  readonly done: Promise<void>;
  handled = 0;
  failed = 0;
  retried = 0;
  rejected = 0;
  lost = 0;
  released = 0;
  stopping = false;
  readonly #cfg: ConsumeConfig<E>;
  readonly #Controller = abortControllerClass();
  /** Every lease held: handlers running, and finished ones waiting for their ack. */
  readonly #jobs = new Set<Job<E>>();
  /** Handlers that resolved, in order, for the pump to ack. */
  #acks: Job<E>[] = [];
  /** A claim may find something: false after a claim came back short, true again on a notice or timer. */
  #maybeWork = true;
  /** The transport's change notices: a notice during a claim is not overwritten by its empty result. */
  readonly #notices: Notices;
  /** Extends the leases of running handlers (one timer for all). */
  readonly #keeper: LeaseKeeper<E>;
  readonly #idleTimer: IdleTimer;
  #wake: (() => void) | undefined;
  #graceEnds = Infinity;
  #graceTimer: unknown;
  #finished = false;
  readonly #stopped: () => void;
  /** A handler's RetryLaterError: claim nothing until after this time (the consumer's clock). */
  #pausedUntil = -Infinity;
  /** When the handlers of the current rate window started, oldest first (only with `rate`). */
  readonly #starts: number[] = [];
  readonly #status = new StatusKeeper();

  constructor(cfg: ConsumeConfig<E>) {
    this.#cfg = cfg;
    this.#keeper = new LeaseKeeper<E>({
      ...cfg,
      onFailure: (error, job) => {
        cfg.onError(error, job ? { phase: 'extend', lease: job.lease } : { phase: 'extend' });
        if (error instanceof LeaseLostError) (job as Job<E>).abort(error);
      },
    });
    this.#idleTimer = new IdleTimer(cfg, (error) => this.#failed(error, 'stats'));
    const onAbort = () => void this.stop();
    cfg.signal?.addEventListener('abort', onAbort);
    this.#notices = new Notices(cfg.transport, () => {
      this.#maybeWork = true;
      this.#kick();
    });
    this.#stopped = () => {
      this.#notices.close();
      this.#keeper.close();
      cfg.signal?.removeEventListener('abort', onAbort);
      cfg.scheduler.clearTimeout(this.#graceTimer);
    };
    if (cfg.signal?.aborted) void this.stop();
    this.subscribe = this.subscribe.bind(this); // detachable, as useSyncExternalStore takes it
    this.done = this.#pump();
  }

  get workerId(): string {
    return this.#cfg.workerId;
  }

  get active(): number {
    return this.#jobs.size;
  }

  get status(): ConsumerStatus {
    return this.#status.status;
  }

  subscribe(listener: () => void): () => void {
    return this.#status.subscribe(listener);
  }

  stop(options?: { graceMs?: number }): Promise<void> {
    if (options !== undefined && (typeof options !== 'object' || options === null)) throw new TypeError('options must be an object');
    const graceMs = options?.graceMs ?? this.#cfg.graceMs;
    checkGrace('options.graceMs', graceMs);
    if (this.#finished) return this.done;
    this.stopping = true;
    this.#status.stopped();
    this.#kick();
    const now = this.#now();
    if (now + graceMs < this.#graceEnds) {
      this.#graceEnds = now + graceMs;
      this.#cfg.scheduler.clearTimeout(this.#graceTimer);
      if (graceMs === 0) this.#releaseAll();
      else if (graceMs !== Infinity) this.#graceTimer = this.#cfg.scheduler.setTimeout(() => this.#releaseAll(), graceMs);
    }
    return this.done;
  }

  #now(): number {
    try {
      return readClock(this.#cfg.clock);
    } catch {
      return 0; // only the grace deadline's order uses it; a broken clock must not break stop()
    }
  }

  #kick(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #pump(): Promise<void> {
    await undefined; // start claiming after consume() has returned
    try {
      if (this.#cfg.reclaimOwnLeases) await this.#reclaimOwnLeases();
      for (;;) {
        const acks = this.#acks.splice(0);
        const slots = this.stopping ? 0 : this.#cfg.concurrency - this.#jobs.size + acks.length;
        const { room, waitMs } = this.#room();
        const free = Math.min(slots, room);
        if (acks.length === 1 && free > 0) await this.#ackAndClaim(acks[0]!);
        else if (acks.length > 0) await this.#ackAll(acks, free);
        else if (this.stopping && this.#jobs.size === 0) break;
        else if (free > 0 && this.#maybeWork) await this.#claim(free);
        else if (slots > 0 && waitMs > 0) await this.#idle(false, waitMs); // held back: a RetryLaterError, or the rate
        else await this.#idle(free > 0);
      }
    } catch (error) {
      // Only a bug gets here; stop cleanly rather than leave leases to run out.
      this.#cfg.onError(error, { phase: 'claim' });
      this.stopping = true;
      this.#status.stopped();
      this.#releaseAll();
      while (this.#jobs.size > 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    } finally {
      this.#finished = true;
      this.#stopped();
    }
  }

  /**
   * How many handlers may start now, and if none, in how long one may: a RetryLaterError holds
   * every claim back until its time, and `rate` bounds the starts in any window.
   */
  #room(): { room: number; waitMs: number } {
    const rate = this.#cfg.rate;
    // The common case reads no clock: nothing was ever held back and no rate is set.
    if (rate === null && this.#pausedUntil === -Infinity) return { room: Infinity, waitMs: 0 };
    const now = this.#now();
    // Inclusive, as a park is: held through its last millisecond.
    if (now <= this.#pausedUntil) return { room: 0, waitMs: this.#pausedUntil - now + 1 };
    if (rate === null) return { room: Infinity, waitMs: 0 };
    while (this.#starts.length > 0 && this.#starts[0]! <= now - rate.perMs) this.#starts.shift();
    const room = rate.max - this.#starts.length;
    return room > 0 ? { room, waitMs: 0 } : { room: 0, waitMs: Math.max(1, this.#starts[0]! + rate.perMs - now) };
  }

  /** Starts the handler of each lease (or gives them straight back if a stop began meanwhile). */
  #start(leases: Lease<E>[]): void {
    if (this.#cfg.rate !== null && leases.length > 0) {
      const now = this.#now();
      for (let i = 0; i < leases.length; i++) this.#starts.push(now);
    }
    for (const lease of leases) {
      const job = this.#keeper.keep(new Job(lease, this.#Controller));
      this.#jobs.add(job);
      this.#cfg.events?.claimed(job, lease);
      if (this.stopping) this.#release(job);
      else void this.#run(job, lease);
    }
    if (leases.length > 0) {
      this.#idleTimer.busy();
      this.#status.holding(this.#jobs.size);
    }
  }

  async #run(job: Job<E>, lease: Lease<E>): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      await this.#cfg.handler(lease.event, lease, job.context);
    } catch (error) {
      failure = { error };
    }
    this.#cfg.events?.handled(job);
    if (job.released) return;
    await this.#keeper.stop(job);
    if (job.released) return;
    if (job.lost) return this.#drop(job, () => (this.lost += 1));
    if (!failure) {
      this.#acks.push(job);
      return this.#kick();
    }
    const { error } = failure;
    if (error instanceof RetryLaterError) {
      // Not the message's fault: back without spending an attempt, and no claims meanwhile. The
      // reason stays with the message, for every tab's status to show.
      const reason = reasonFrom(error);
      if (await this.#settle(job, 'release', () => this.#cfg.transport.release(job.lease, error.afterMs, reason))) {
        this.retried += 1;
        this.#cfg.events?.ended(job, job.lease, { type: 'retried', retryInMs: error.afterMs });
      }
      this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + error.afterMs);
      // Claims start again once the hold is over (inclusive, as a park's).
      this.#status.retrying(error.offline, this.#pausedUntil + 1, reason ?? null);
      this.#idleTimer.changed();
      return this.#drop(job);
    }
    if (error instanceof RejectError) {
      const reason = reasonFrom(error);
      if (await this.#settle(job, 'reject', () => this.#cfg.transport.reject(job.lease, reason))) {
        this.rejected += 1;
        this.#status.answered();
        this.#cfg.events?.ended(job, job.lease, { type: 'dead', reason: reason ?? null });
      }
      return this.#drop(job);
    }
    this.failed += 1;
    this.#cfg.onError(failure.error, { phase: 'handler', lease: job.lease });
    const retryInMs = retryDelay(this.#cfg.backoff, lease.attempt, this.#cfg.random);
    const nacked = () => this.#cfg.transport.nack(job.lease, retryInMs, reasonFrom(error));
    if (await this.#settle(job, 'nack', nacked)) this.#cfg.events?.ended(job, job.lease, { type: 'failed', error, retryInMs });
    this.#idleTimer.changed(); // a new park: the next idle wait reads when it ends
    this.#drop(job);
  }

  /** The job's lease is settled (or given up): no slot, no renewal. */
  #forget(job: Job<E>): void {
    this.#jobs.delete(job);
    this.#status.holding(this.#jobs.size);
    if (!job.stopped) void this.#keeper.stop(job);
  }

  /** The job's lease is no longer ours: free its slot. */
  #drop(job: Job<E>, count?: () => void): void {
    count?.();
    this.#forget(job);
    this.#kick();
  }

  /**
   * Runs a nack, release or reject of `job`'s lease, reporting each failure and trying again
   * after one that may pass, while the lease may live; true if it landed.
   */
  async #settle(job: Job<E>, phase: 'nack' | 'release' | 'reject', call: () => Promise<unknown>): Promise<boolean> {
    for (;;) {
      try {
        await call();
        return true;
      } catch (error) {
        const retryInMs = this.#retryIn(job, error);
        this.#failed(error, phase, job.lease, retryInMs);
        if (error instanceof LeaseLostError) this.lost += 1;
        if (retryInMs === null) return false;
        await new Promise<void>((resolve) => this.#cfg.scheduler.setTimeout(resolve, retryInMs));
      }
    }
  }

  /**
   * After `job`'s settle failed with `error`: how long until it is tried again, or null when it
   * is not (an error that will not pass, a lost lease, or no time left in the lease).
   */
  #retryIn(job: Job<E>, error: unknown): number | null {
    if (!passing(error)) return null;
    const now = this.#now();
    // The lease was renewed up to the handler's end: it lives at most visibilityMs from here.
    job.settleUntil ??= now + this.#cfg.visibilityMs;
    if (now >= job.settleUntil) return null;
    const backoff = Math.min(SETTLE_RETRY_MAX_MS, SETTLE_RETRY_MIN_MS * 2 ** job.settleFailures);
    job.settleFailures += 1;
    return Math.max(1, Math.min(backoff, job.settleUntil - now));
  }

  /** The pump acks `job` again in `delayMs` (it keeps its slot meanwhile). */
  #ackLater(job: Job<E>, delayMs: number): void {
    this.#cfg.scheduler.setTimeout(() => {
      this.#acks.push(job);
      this.#kick();
    }, delayMs);
  }

  #failed(error: unknown, phase: 'ack' | 'nack' | 'release' | 'reject' | 'claim' | 'stats', lease?: Lease<E>, retryInMs: number | null = null): void {
    const info: ConsumeErrorInfo<E> = lease ? { phase, lease } : { phase };
    if (retryInMs !== null) info.retryInMs = retryInMs;
    this.#cfg.onError(error, info);
    // A closed transport will refuse everything from now on.
    if (error instanceof ClosedError && !this.stopping) void this.stop();
  }

  async #ackAndClaim(job: Job<E>): Promise<void> {
    const { transport, workerId, visibilityMs, minPriority } = this.#cfg;
    const notices = this.#notices.count;
    try {
      const next = await transport.ackAndClaim(job.lease, workerId, visibilityMs, { minPriority });
      this.handled += 1;
      this.#status.delivered(this.#now());
      this.#cfg.events?.ended(job, job.lease, { type: 'acked' });
      this.#forget(job);
      if (next) this.#start([next]);
      else if (notices === this.#notices.count) this.#maybeWork = false;
    } catch (error) {
      const retryInMs = this.#retryIn(job, error);
      this.#failed(error, 'ack', job.lease, retryInMs);
      if (error instanceof LeaseLostError) this.lost += 1;
      if (retryInMs === null) this.#forget(job);
      else this.#ackLater(job, retryInMs);
    }
  }

  async #ackAll(jobs: Job<E>[], free: number): Promise<void> {
    const leases = jobs.map((job) => job.lease);
    // A lost lease is reported here; the whole call's failure by #afterBatch, with its retry.
    const report = (error: unknown, lease?: Lease<E>) => lease && this.#failed(error, 'ack', lease);
    if (free === 0) {
      const { acked, lost, failure } = await ackAll(this.#cfg.transport, leases, report);
      this.#acked(jobs, acked);
      this.lost += lost;
      this.#afterBatch(jobs, failure);
      return;
    }
    const { workerId, visibilityMs, minPriority } = this.#cfg;
    const notices = this.#notices.count;
    const { acked, lost, claimed, failure } = await ackAllAndClaim(this.#cfg.transport, leases, { workerId, visibilityMs, max: free, minPriority }, report);
    this.#acked(jobs, acked);
    this.lost += lost;
    this.#afterBatch(jobs, failure);
    if (claimed === null) {
      this.#maybeWork = false; // try again after the idle back-off, not at once
      return;
    }
    this.#start(claimed);
    if (claimed.length < free && notices === this.#notices.count) this.#maybeWork = false;
  }

  /**
   * After a batch ack: every job is done with, unless the whole call failed on a fault that may
   * pass (then nothing was acked), when each is acked again later while its lease may live. A
   * failed call is reported once, with the first job's wait.
   */
  #afterBatch(jobs: Job<E>[], failure: { error: unknown } | null): void {
    let reported = failure === null;
    for (const job of jobs) {
      const retryInMs = failure ? this.#retryIn(job, failure.error) : null;
      if (!reported) this.#failed(failure!.error, 'ack', undefined, retryInMs);
      reported = true;
      if (retryInMs === null) this.#forget(job);
      else this.#ackLater(job, retryInMs);
    }
  }

  /** Counts the acks that landed (`acked`: the same lease objects as the jobs'), and reports each. */
  #acked(jobs: Job<E>[], acked: Lease<E>[]): void {
    this.handled += acked.length;
    if (acked.length > 0) this.#status.delivered(this.#now());
    const events = this.#cfg.events;
    if (!events || acked.length === 0) return;
    const landed = new Set(acked);
    for (const job of jobs) if (landed.has(job.lease)) events.ended(job, job.lease, { type: 'acked' });
  }

  /** Ends an earlier run's leases under this worker id (`reclaimOwnLeases`); a failure is reported, and claiming goes on. */
  async #reclaimOwnLeases(): Promise<void> {
    try {
      await this.#cfg.transport.expireLeases(this.#cfg.workerId);
    } catch (error) {
      this.#failed(error, 'claim');
    }
  }

  async #claim(free: number): Promise<void> {
    const { workerId, visibilityMs, minPriority } = this.#cfg;
    const notices = this.#notices.count;
    let leases: Lease<E>[];
    try {
      leases = await claimUpTo(this.#cfg.transport, workerId, visibilityMs, free, minPriority);
    } catch (error) {
      this.#failed(error, 'claim');
      this.#maybeWork = false; // try again after the idle back-off, not at once
      return;
    }
    this.#start(leases);
    if (leases.length < free && notices === this.#notices.count) this.#maybeWork = false;
    if (leases.length === 0 && this.#jobs.size === 0) this.#status.nothingLeft(() => this.#now());
  }

  /**
   * Nothing to claim (or no free slot): waits for a kick — a finished handler, a change notice,
   * stop — and, with a free slot, for the poll back-off or the next known ready time.
   */
  async #idle(withTimer: boolean, holdMs = 0): Promise<void> {
    const { scheduler } = this.#cfg;
    let delay = holdMs > 0 ? holdMs : Infinity;
    let polling = false;
    if (withTimer) {
      const next = await this.#idleTimer.next();
      if (this.#maybeWork || this.stopping || this.#acks.length > 0) return;
      [delay, polling] = [next.delayMs, next.polling];
    }
    let fired = false;
    let timer: unknown;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      if (delay !== Infinity) {
        timer = scheduler.setTimeout(() => {
          fired = true;
          this.#kick();
        }, delay);
      }
    });
    scheduler.clearTimeout(timer);
    if (!fired) return;
    this.#maybeWork = true;
    this.#idleTimer.waited(polling);
  }

  /** After the grace: abort every handler still running and give its lease back at once. */
  #releaseAll(): void {
    for (const job of this.#jobs) if (!job.stopped) this.#release(job);
  }

  #release(job: Job<E>): void {
    job.released = true;
    job.abort();
    void (async () => {
      await this.#keeper.stop(job);
      // The consumer gave up, not the message: back at once, no attempt spent.
      if (await this.#settle(job, 'release', () => this.#cfg.transport.release(job.lease, 0))) this.released += 1;
      this.#drop(job);
    })();
  }
}
