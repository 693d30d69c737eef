/**
 * The types both worker loops — `Runtime.run` and `consume()` — take in their options: the
 * timers they run on, the signal that stops them, and the retry back-off. One definition each, so
 * the two loops cannot drift apart in what an option means.
 */

/** A timer the worker loops can be driven by: `globalThis`'s by default, a manual one in tests. */
export interface Scheduler {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The part of `AbortSignal` the loops use (typed structurally: the core has no DOM types). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * The retry delay after a failed delivery `attempt` (1 for the first):
 * `min(maxMs, baseMs × factor^(attempt − 1))`, of which the share `jitter` is drawn at random.
 * The same option, with the same defaults, in `consume()` and the `Runtime`.
 */
export interface BackoffOptions {
  /** First delay, ms (finite, ≥ 0). Default 1000. */
  baseMs?: number;
  /** Longest delay, ms (finite, ≥ baseMs). Default 60 000 (or baseMs, if larger). */
  maxMs?: number;
  /** Growth per attempt (finite, ≥ 1). Default 2. */
  factor?: number;
  /** 0–1: this share of each delay is random (0: exact; 1: anywhere from 0 to the delay). Default 0. */
  jitter?: number;
}

/**
 * The options both worker loops take, with one meaning and one default each. Durations are
 * milliseconds. `consume()` and the `Runtime` add their own (concurrency, a store…) to these.
 */
export interface WorkerLoopOptions {
  /** Names this worker in leases (non-empty). Default: the loop's name and a random id. */
  workerId?: string;
  /**
   * At start, end the leases an earlier run under this `workerId` left (`transport.expireLeases`):
   * a worker restarted after a crash (kill -9, a pod rescheduled under the same name) takes its
   * groups back at once instead of after `visibilityMs`, each delivery counted as an attempt.
   * Needs an explicit `workerId` that no other live worker uses: a live worker's leases ended
   * this way are delivered again while it works on them. Default false.
   */
  reclaimOwnLeases?: boolean;
  /**
   * How long a claim holds a message before another worker may take it over (> 0). Default
   * 30 000. While a handler runs its lease is extended, so a slow handler keeps it.
   */
  visibilityMs?: number;
  /**
   * Extend a running handler's lease at most this long after it was claimed or last extended
   * (> 0, < visibilityMs): checked every quarter of it, a lease is extended once between three
   * quarters of it and all of it have passed. Default `visibilityMs / 2`.
   */
  renewEveryMs?: number;
  /** The retry delays after a handler fails. */
  backoff?: BackoffOptions;
  /** Random numbers in [0, 1) for the back-off's jitter. Default `Math.random`. */
  random?: () => number;
  /**
   * Shortest and longest idle wait (> 0). Idle, a loop wakes on the transport's change notices
   * (where it has them), at the next time the transport says a lease or a delay runs out, and
   * otherwise polls from `idleMinMs`, doubling up to `idleMaxMs`. Defaults: 50; and for
   * `idleMaxMs` 10 000 when every wake-up is announced (`consume()` on a transport with change
   * notices), else 1000 (the `Runtime` also fires its store's timers, which nothing announces).
   */
  idleMinMs?: number;
  idleMaxMs?: number;
  /** The clock durations are read with; use the transport's. Default `Date.now`. */
  clock?: () => number;
  /**
   * Timers for lease renewal and idle waits (and each loop's own: the stop grace, the yield
   * `Runtime.run` makes every 64 busy steps, so a manual scheduler must fire 0 ms timers too).
   * Default: `globalThis.setTimeout`.
   */
  scheduler?: Scheduler;
}
