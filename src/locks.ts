/**
 * The lock values the SQL backends store in a group's `locked_until` and a message's
 * `not_before`: later than any clock reading, so a claim's walk passes such a group over as it
 * passes a parked one, with no new condition on the claim's path. The in-memory transport keeps
 * held and blocked groups out of its heaps instead and needs neither.
 * @internal
 */

/** The lock of a group held at a dead letter (`onDeadLetter: 'hold'`). */
export const HELD = Number.MAX_SAFE_INTEGER;
/**
 * The delay a message waiting on `after` carries, and so the lock of its group while it is the
 * head: later than any clock reading and below {@link HELD}, so every path that gives a group its
 * new head's delay blocks the group with no new condition. The message's own delay waits in
 * `delay_until` until the last message it names is gone.
 */
export const BLOCKED = HELD - 1;

/**
 * The bound of a coalescing window published without `maxWaitMs`: later than any clock reading,
 * so `min(now + debounceMs, bound)` is the window's end alone.
 */
export const NO_DEADLINE = Number.MAX_SAFE_INTEGER;
