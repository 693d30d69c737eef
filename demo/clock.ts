/**
 * The demo's time. Every lease, park and countdown on the page is measured with this clock: the
 * database reads it at each call (`openBrowserDatabase({ clock })`), the workers wait on it, and
 * the page moves it — with animation frames × speed while playing, by buttons while paused.
 *
 * Not `ManualClock`: a lesson restarts time at 0 after it has emptied the queue, and a waiter
 * list lets workers sleep on demo time, so nothing polls while the clock stands still.
 */
import type { Scheduler } from 'leasehold';

export const SPEEDS = [0.1, 0.25, 0.5, 1, 2, 4] as const;

interface Waiter {
  at: number;
  resolve: () => void;
}

export class DemoClock {
  #time: number;
  speed: number;
  paused: boolean;
  readonly #waiters = new Set<Waiter>();
  readonly #listeners = new Set<() => void>();

  constructor(start: number, speed: number, paused: boolean) {
    this.#time = start;
    this.speed = speed;
    this.paused = paused;
  }

  /** Whole milliseconds: what the database and every label see. Bound, so it is a `Clock`. */
  readonly now = (): number => Math.floor(this.#time);

  /** One animation frame's worth of real time, scaled. Capped so a hidden tab does not leap on return. */
  tick(realMs: number): void {
    if (this.paused) return;
    this.advance(Math.min(realMs, 100) * this.speed);
  }

  advance(ms: number): void {
    if (ms <= 0) return;
    this.#time += ms;
    this.#changed();
  }

  /** Moves time to `ms`; backwards only when the queue is empty (a lesson's restart). */
  set(ms: number): void {
    this.#time = ms;
    this.#changed();
  }

  setSpeed(speed: number): void {
    this.speed = speed;
    this.#notify();
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    this.#notify();
  }

  /** Resolves once the clock reads `at` or later, or when `signal` aborts (then never: the caller is gone). */
  until(at: number, signal?: AbortSignal): Promise<void> {
    if (this.now() >= at) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = { at, resolve };
      this.#waiters.add(waiter);
      signal?.addEventListener('abort', () => this.#waiters.delete(waiter), { once: true });
    });
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.until(this.now() + ms, signal);
  }

  /** Called after every change of time, speed or pause. Returns unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /**
   * A `Scheduler` on demo time for a `Runtime` (its lease renewal), stopped by `signal` so a
   * crashed worker's renewal dies with it.
   */
  scheduler(signal: AbortSignal): Scheduler {
    return {
      setTimeout: (callback, ms) => {
        const cancel = new AbortController();
        signal.addEventListener('abort', () => cancel.abort(), { once: true });
        void this.sleep(ms, cancel.signal).then(() => {
          if (!cancel.signal.aborted) callback();
        });
        return cancel;
      },
      clearTimeout: (handle) => (handle as AbortController | undefined)?.abort(),
    };
  }

  #changed(): void {
    const now = this.now();
    for (const waiter of [...this.#waiters]) {
      if (waiter.at <= now) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
    this.#notify();
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/** "12.3 s": how every time on the page is written. */
export { seconds } from '../src/inspector/format.js';
