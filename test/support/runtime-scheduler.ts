/**
 * A scheduler that runs on a ManualClock: timers fire only when the test moves time with
 * `advance`, each at its own due time, so lease renewals and idle waits need no real sleeps.
 */
import type { Scheduler } from '../../src/worker/types.js';

interface Timer {
  due: number;
  callback: () => void;
}

/** Lets every pending promise callback and I/O callback run (a macrotask turn, not a sleep). */
export const flush = (): Promise<void> =>
  new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

/** A clock the scheduler can move: a ManualClock, or any clock with `now` and `advance`. */
export interface SteppableClock {
  now(): number;
  advance(ms: number): unknown;
}

export class ManualScheduler implements Scheduler {
  readonly #timers = new Map<number, Timer>();
  #next = 0;

  constructor(readonly clock: SteppableClock) {}

  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.#next;
    this.#timers.set(id, { due: this.clock.now() + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** How many timers are waiting. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves the clock forward by `ms`, firing every timer due on the way at its own due time
   * (earliest first, ties in the order they were set) and letting the work it starts settle.
   */
  async advance(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    await flush(); // work already under way may be about to set a timer
    for (;;) {
      let first: [number, Timer] | undefined;
      for (const entry of this.#timers) if (entry[1].due <= end && (!first || entry[1].due < first[1].due)) first = entry;
      if (!first) break;
      this.#timers.delete(first[0]);
      if (first[1].due > this.clock.now()) this.clock.advance(first[1].due - this.clock.now());
      first[1].callback();
      await flush();
    }
    if (end > this.clock.now()) this.clock.advance(end - this.clock.now());
    await flush();
  }
}
