/**
 * The PGlite driver: a {@link PgDatabase} over `@electric-sql/pglite`, PostgreSQL compiled to
 * WASM, embedded in Node or a browser tab, no server needed. Written against the few members of
 * `PGlite` it uses, so this module never imports the package: the application creates the
 * instance (in memory, on disk, in IndexedDB) and closes it when done.
 *
 * PGlite has one connection. It runs one statement or one transaction at a time and queues the
 * rest, so concurrent calls are safe and serialize, as on one SQLite connection.
 */
import { ClosedError } from '../errors.js';
import { checkChannel, type PgDatabase, type PgQueryable, toPgStorageError } from './driver.js';

/** The parts of a PGlite transaction this driver uses. */
export interface PgliteTransactionLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The parts of a `PGlite` instance this driver uses. */
export interface PgliteLike extends PgliteTransactionLike {
  transaction<T>(body: (tx: PgliteTransactionLike) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  readonly dataDir?: string;
}

/**
 * Wraps a PGlite instance.
 * @throws TypeError if `pglite` does not look like a PGlite instance.
 */
export function fromPglite(pglite: PgliteLike): PgDatabase {
  if (typeof pglite !== 'object' || pglite === null || typeof pglite.query !== 'function' || typeof pglite.transaction !== 'function') {
    throw new TypeError('pglite must be a PGlite instance (@electric-sql/pglite)');
  }
  const label = `PGlite ${pglite.dataDir ? JSON.stringify(pglite.dataDir) : '(in memory)'}`;
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new ClosedError(`PostgreSQL database ${label}`);
  };
  const run = async <R>(on: PgliteTransactionLike, text: string, params?: readonly unknown[]): Promise<R[]> => {
    try {
      return (await on.query(text, params as unknown[] | undefined)).rows as R[];
    } catch (error) {
      throw toPgStorageError(error, label);
    }
  };
  const unlisteners = new Set<() => Promise<void>>();

  return {
    label,
    async query<R>(text: string, params?: readonly unknown[]) {
      ensureOpen();
      return run<R>(pglite, text, params);
    },
    async transaction<T>(body: (tx: PgQueryable) => Promise<T>): Promise<T> {
      ensureOpen();
      try {
        return await pglite.transaction((tx) => body({ query: <R>(text: string, params?: readonly unknown[]) => run<R>(tx, text, params) }));
      } catch (error) {
        throw toPgStorageError(error, label);
      }
    },
    async listen(channel, onNotice) {
      ensureOpen();
      checkChannel(channel);
      let stop: () => Promise<void>;
      try {
        stop = await pglite.listen(channel, () => onNotice());
      } catch (error) {
        throw toPgStorageError(error, label);
      }
      const unlisten = async () => {
        if (!unlisteners.delete(unlisten)) return;
        await stop().catch(() => {});
      };
      unlisteners.add(unlisten);
      return unlisten;
    },
    async close() {
      closed = true;
      await Promise.all([...unlisteners].map((u) => u()));
    },
  };
}
