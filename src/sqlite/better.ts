/**
 * The better-sqlite3 driver: native SQLite for Node, on a real file with WAL. Use it for durable
 * queues in Node processes; several processes may open the same file (claims serialize on
 * SQLite's write lock, and `busy_timeout` makes a contended writer wait instead of failing).
 *
 * better-sqlite3 (an optional peer: `npm install better-sqlite3@12`) is loaded on the first
 * `openBetterSqliteDatabase()` call, so importing this entry never fails for want of it.
 */
import { createSqlDatabase, toStorageError, type SqlDatabase, type SqlStatement, type SqlValue } from './driver.js';
import { BETTER_SQLITE3, importPeer } from './peers.js';
import { StorageError } from '../errors.js';
import { checkOptions } from '../validate.js';

/** The slice of better-sqlite3's `Database` this driver uses (a structural type: no import). */
export interface BetterSqliteDatabaseLike {
  readonly name: string;
  prepare(sql: string): {
    run(...params: unknown[]): { changes: number };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  exec(sql: string): unknown;
  pragma(source: string): unknown;
  close(): unknown;
}

/** Options of {@link openBetterSqliteDatabase}. */
export interface BetterSqliteOptions {
  /**
   * `'normal'` (default): WAL with `synchronous=NORMAL`; a commit survives a process crash but
   * the last commits may be lost on power failure. `'full'`: `synchronous=FULL`, every commit
   * survives power loss, at a cost in throughput.
   */
  durability?: 'normal' | 'full';
  /** How long a writer waits for another connection's lock before failing, in ms (default 5000). */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating if needed) the SQLite file at `filename` with better-sqlite3 in WAL mode.
 *
 * @throws TypeError / RangeError for a bad `filename` or option.
 * @throws LeaseholdError with code `'DRIVER_MISSING'` when better-sqlite3 is not installed; the
 *   message names the install command.
 * @throws StorageError when the file cannot be opened or is not a database.
 */
export async function openBetterSqliteDatabase(filename: string, options: BetterSqliteOptions = {}): Promise<SqlDatabase> {
  if (typeof filename !== 'string' || filename.length === 0) {
    throw new TypeError(`filename must be a non-empty string, got ${String(filename)}`);
  }
  // A misspelt key would otherwise be ignored: `durabilty: 'full'` running at 'normal'.
  checkOptions('options', options, ['durability', 'busyTimeoutMs']);
  const durability = options.durability ?? 'normal';
  if (durability !== 'normal' && durability !== 'full') {
    throw new RangeError(`durability must be 'normal' or 'full', got ${String(durability)}`);
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be an integer ≥ 0, got ${String(busyTimeoutMs)}`);
  }
  // A computed specifier keeps better-sqlite3's Node typings out of the runtime-agnostic
  // typecheck and keeps bundlers from trying to pack a native addon into browser builds.
  const specifier = 'better-sqlite3';
  const { default: BetterSqlite3 } = (await importPeer(BETTER_SQLITE3, () => import(/* @vite-ignore */ specifier))) as {
    default: new (filename: string, options?: { timeout?: number }) => BetterSqliteDatabaseLike;
  };
  let db: BetterSqliteDatabaseLike;
  try {
    db = new BetterSqlite3(filename, { timeout: busyTimeoutMs });
    // journal_mode reads the file header, so a file that is not a database fails here, at open.
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  } catch (error) {
    // better-sqlite3 checks the directory itself and throws a TypeError, not an SQLite error.
    if (error instanceof TypeError && /directory does not exist/i.test(error.message)) {
      throw new StorageError('STORAGE_UNAVAILABLE', `database ${JSON.stringify(filename)} cannot be created: its directory does not exist. Create the directory first.`, { cause: error });
    }
    throw toStorageError(error, (error as { code?: string }).code, filename);
  }
  return fromBetterSqlite(db);
}

/**
 * Wraps an open better-sqlite3 database in the {@link SqlDatabase} seam. The returned database
 * owns `db`: closing it closes `db`.
 */
export function fromBetterSqlite(db: BetterSqliteDatabaseLike): SqlDatabase {
  return createSqlDatabase({
    filename: db.name,
    prepare(sql): SqlStatement {
      const stmt = db.prepare(sql);
      return {
        run: (...params: SqlValue[]) => stmt.run(...params).changes,
        get: <T>(...params: SqlValue[]) => stmt.get(...params) as T | undefined,
        all: <T>(...params: SqlValue[]) => stmt.all(...params) as T[],
      };
    },
    exec: (sql) => void db.exec(sql),
    close: () => void db.close(),
    errorCode: (error) => (error as { code?: string } | null)?.code,
  });
}
