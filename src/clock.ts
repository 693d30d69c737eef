/**
 * Time in leasehold is integer-ish milliseconds read from an injected clock, never from the
 * system directly, so tests and the demo can stop, step and slow time down.
 */

/** Returns the current time in milliseconds. Must be finite and should never go backwards. */
export type Clock = () => number;

/** The default clock: wall time, `Date.now()`. */
export const systemClock: Clock = () => Date.now();

/**
 * A clock that moves only when told to. Pass `clock.now` wherever a {@link Clock} is expected.
 *
 * @throws RangeError from the constructor, `advance` and `set` for a non-finite time, a negative
 *   step, or a time before the current one (time never goes backwards).
 */
export class ManualClock {
  #time: number;

  constructor(start = 0) {
    if (!Number.isFinite(start)) throw new RangeError(`start must be a finite number, got ${String(start)}`);
    this.#time = start;
  }

  /** The current time; a bound function, usable directly as a {@link Clock}. */
  readonly now: Clock = () => this.#time;

  /** Moves time forward by `ms` (≥ 0) and returns the new time. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ms must be a finite number ≥ 0, got ${String(ms)}`);
    this.#time += ms;
    return this.#time;
  }

  /** Sets the time to `time`, which must not be earlier than now. */
  set(time: number): number {
    if (!Number.isFinite(time)) throw new RangeError(`time must be a finite number, got ${String(time)}`);
    if (time < this.#time) throw new RangeError(`time must not go backwards: ${time} < ${this.#time}`);
    this.#time = time;
    return this.#time;
  }
}
