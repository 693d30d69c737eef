/**
 * Noticing commits made by other connections to the same SQLite file, so a consumer in another
 * process wakes within ~100 ms instead of polling the queue. `PRAGMA data_version` changes
 * whenever another connection commits to the file, and reading it costs microseconds and takes
 * no lock, so polling it is the cheapest cross-process signal SQLite offers (there is no
 * cross-process notification API). One poll per connection serves all its listeners (every
 * named queue's transport on it): the number is per connection, so one reading is as good as many.
 * @internal
 */

/** How often the file is checked for other connections' commits. */
export const WATCH_INTERVAL_MS = 50;

interface Timers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/** What {@link pollCommits} needs of a connection. */
export interface PolledConnection {
  /** `PRAGMA data_version`. */
  dataVersion(): number;
  /** Whether the connection is in exclusive locking mode, where no one else can commit. */
  exclusive(): boolean;
  closed(): boolean;
  /** Throws a ClosedError once closed. */
  ensureOpen(): void;
}

/**
 * A connection's `watchCommits`, or undefined in a runtime without timers. The poll runs while
 * anyone listens and stops with the last unsubscribe, or when the connection closes.
 */
export function pollCommits(connection: PolledConnection): ((listener: () => void) => () => void) | undefined {
  const timers = globalThis as unknown as Partial<Timers>;
  if (typeof timers.setInterval !== 'function' || typeof timers.clearInterval !== 'function') return undefined;
  const setTimer = timers.setInterval.bind(globalThis);
  const clearTimer = timers.clearInterval.bind(globalThis);
  // Entries, not the functions themselves: the same function subscribed twice is two subscriptions.
  const entries = new Set<{ listener: () => void }>();
  let handle: unknown;
  let last = 0;

  const stop = (): void => {
    entries.clear();
    if (handle !== undefined) clearTimer(handle);
    handle = undefined;
  };
  const tick = (): void => {
    if (connection.closed()) return stop();
    let now: number;
    try {
      now = connection.dataVersion();
    } catch {
      return; // a busy file: try again on the next tick
    }
    if (now === last) return;
    last = now;
    let failure: { error: unknown } | undefined;
    for (const entry of [...entries]) {
      try {
        entry.listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  };

  return (listener) => {
    if (typeof listener !== 'function') throw new TypeError(`listener must be a function, got ${typeof listener}`);
    connection.ensureOpen();
    if (entries.size === 0) {
      if (connection.exclusive()) return () => {};
      last = connection.dataVersion();
      handle = setTimer(tick, WATCH_INTERVAL_MS);
      // In Node, a watch alone must not keep the process alive.
      (handle as { unref?: () => void }).unref?.();
    }
    const entry = { listener };
    entries.add(entry);
    return () => {
      if (entries.delete(entry) && entries.size === 0) stop();
    };
  };
}
