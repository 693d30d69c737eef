/**
 * The synchronous core of the SQL backends, as a host needs it. Every contract method of
 * `SqliteTransport` and `SqliteStore` is an {@link Operation}: its arguments checked up front,
 * then a synchronous body that runs at a clock reading the runner supplies and says whether it
 * made work claimable. The public async methods run an operation in a transaction of their own,
 * on their own clock; a host (the browser owner, a Durable Object) runs the same operation inside
 * its transaction or savepoint, on the caller's clock reading, next to its own writes (the call
 * journal), and learns what changed from the outcome: no listener, no hidden state, no waiting
 * for a microtask.
 * @internal
 */

/** What one call did: its answer, and whether it may have made work claimable (a change notice is due). */
export interface Outcome<T = unknown> {
  value: T;
  changed: boolean;
}

/** One checked call, ready to run. */
export interface Operation<T = unknown> {
  /**
   * Whether the body must run inside a transaction: every write, and the reads that must see one
   * instant (`stats`, `inspect`). A runner may run any operation inside one.
   */
  readonly transaction: boolean;
  /**
   * Runs the call synchronously: it never awaits, so nothing interleaves inside it. `now` is read
   * at most once, when the body needs the time (a clock that throws then fails the call, and a
   * transaction around it rolls back).
   */
  run(now: () => number): Outcome<T>;
  /**
   * The call as one statement, for a runner that would otherwise open a transaction for this
   * call alone: SQLite makes a single statement atomic by itself, and skipping `BEGIN` and
   * `COMMIT` saves two statements per call. Returns the outcome, or undefined — having written
   * nothing — when the call needs more than one statement after all; the runner then runs `run`
   * as usual (which reads the clock again). A runner that runs calls inside a transaction of its
   * own (a host, next to its journal) ignores it.
   */
  alone?(now: () => number): Outcome<T> | undefined;
}

/** The key under which a SQL backend hands out its operations, by contract method name. */
export const operation: unique symbol = Symbol('leasehold.operation');

/** A backend that can hand its calls to a host as operations. */
export interface Operational {
  /**
   * The operation of contract method `method` with `args`: throws (TypeError, RangeError,
   * ClosedError) before anything runs when the arguments are bad or the backend is closed.
   * `method` must be one of the contract's methods (the host checks it against its method table).
   */
  [operation](method: string, args: readonly unknown[]): Operation;
}

/** An operation that writes (or must see one instant), in a transaction. */
export function inTransaction<T>(run: (now: () => number) => Outcome<T>): Operation<T> {
  return { transaction: true, run };
}

/** An operation that reads with plain statements, outside any transaction. */
export function outsideTransaction<T>(run: (now: () => number) => Outcome<T>): Operation<T> {
  return { transaction: false, run };
}

/** An outcome that made nothing claimable. */
export function unchanged<T>(value: T): Outcome<T> {
  return { value, changed: false };
}

/** An outcome after which waiting consumers should look again. */
export function changed<T>(value: T): Outcome<T> {
  return { value, changed: true };
}

/**
 * A contract's methods as operation factories: the same parameters, an {@link Operation} of the
 * same answer. `Except` names the methods that stay local (`close`).
 */
export type OperationsOf<T, Except extends keyof T = never> = {
  [K in Exclude<keyof T, Except>]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Operation<R> : never;
};
