/**
 * Noticing commits made by other connections to the same SQLite file, so a consumer in another
 * process wakes within ~100 ms instead of polling the queue. `PRAGMA data_version` changes
 * whenever another connection commits to the file, and reading it costs microseconds and takes
 * no lock, so polling it is the cheapest cross-process signal SQLite offers (there is no
 * cross-process notification API).
 * @internal
 */
import type { SqlDatabase } from '../sqlite/driver.js';

/** How often the file is checked for other connections' commits. */
export const WATCH_INTERVAL_MS = 50;

interface Timers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/**
 * Calls `changed` whenever another connection commits to `db`'s file, until the returned
 * function is called. Does nothing (and returns a no-op) where no other connection can write:
 * an in-memory database, or one opened in exclusive locking mode (the browser host's owner), or
 * a runtime without timers.
 */
export function watchDataVersion(db: SqlDatabase, changed: () => void): () => void {
  const timers = globalThis as unknown as Partial<Timers>;
  if (typeof timers.setInterval !== 'function' || typeof timers.clearInterval !== 'function') return () => {};
  if (db.filename === '' || db.filename === ':memory:') return () => {};
  const mode = db.prepare('PRAGMA locking_mode').get<{ locking_mode: string }>()?.locking_mode;
  if (mode?.toLowerCase() === 'exclusive') return () => {};
  const version = db.prepare('PRAGMA data_version');
  const read = (): number => Number(version.get<{ data_version: number }>()?.data_version);
  let last = read();
  const handle = timers.setInterval(() => {
    if (db.closed) return;
    let now: number;
    try {
      now = read();
    } catch {
      return; // a busy or closing file: try again on the next tick
    }
    if (now !== last) {
      last = now;
      changed();
    }
  }, WATCH_INTERVAL_MS);
  // In Node, a watch alone must not keep the process alive.
  (handle as { unref?: () => void }).unref?.();
  const clear = timers.clearInterval.bind(globalThis);
  return () => clear(handle);
}
