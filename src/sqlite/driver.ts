/**
 * The SQL driver seam: the small synchronous interface the SQL backends are written against.
 * Two drivers implement it — sqlite-wasm (`openWasmDatabase`, any runtime) and better-sqlite3
 * (`openBetterSqliteDatabase`, Node) — and the SQL backends import neither package.
 *
 * Synchronous on purpose: a backend method runs a whole transaction without awaiting, so no
 * other call can interleave inside it, and SQLite's write lock serializes connections.
 */
import { ClosedError, LeaseholdError, StorageError } from '../errors.js';

/** A value SQLite binds or returns. Integers beyond 2^53 are not used by leasehold. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** A row as an object keyed by column name. */
export type SqlRow = Record<string, SqlValue>;

/** A statement prepared once and run many times with positional (`?`) parameters. */
export interface SqlStatement {
  /** Runs the statement; returns how many rows it changed. */
  run(...params: SqlValue[]): number;
  /** Runs the statement and returns its first row, or undefined. */
  get<T = SqlRow>(...params: SqlValue[]): T | undefined;
  /** Runs the statement and returns all its rows. */
  all<T = SqlRow>(...params: SqlValue[]): T[];
}

/**
 * An open SQLite connection, as the SQL backends need it. Implementations map SQLite failures
 * to {@link StorageError} (full, corrupt, busy, unavailable) with the original error as `cause`.
 */
export interface SqlDatabase {
  /** A label for messages (the file name, or `:memory:`). */
  readonly filename: string;
  /** Prepares `sql` once; the statement lives until the database is closed. */
  prepare(sql: string): SqlStatement;
  /** Runs one or more statements without parameters (schema, pragmas). */
  exec(sql: string): void;
  /**
   * Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, taking SQLite's write lock first so that
   * transactions of several connections serialize. Any throw, from `body` or from `COMMIT`,
   * rolls everything back and is rethrown. Not reentrant: a nested call throws.
   */
  transaction<T>(body: () => T): T;
  /**
   * Runs `body` inside the current transaction under a `SAVEPOINT`: a throw from `body` undoes
   * only what `body` did and is rethrown, and the enclosing transaction carries on; success keeps
   * `body`'s changes for the enclosing COMMIT. Lets one transaction carry several independent
   * calls (group commit). Throws outside {@link SqlDatabase.transaction}. If SQLite itself ended
   * the transaction (some I/O and full-disk errors do), every later savepoint of it and its
   * COMMIT throw that error, so nothing runs outside a transaction by accident.
   * Optional: drivers without it get one transaction per call.
   */
  savepoint?<T>(body: () => T): T;
  /** Closes the connection. Further use throws a {@link ClosedError}. Idempotent. */
  close(): void;
  /** Whether `close()` has been called. */
  readonly closed: boolean;
}

/** SQLite primary result codes leasehold maps to a storage error (the low byte of extended codes). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_NOMEM = 7;
const SQLITE_READONLY = 8;
const SQLITE_IOERR = 10;
const SQLITE_CORRUPT = 11;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

const byName: Record<string, number> = {
  SQLITE_BUSY,
  SQLITE_LOCKED,
  SQLITE_NOMEM,
  SQLITE_READONLY,
  SQLITE_IOERR,
  SQLITE_CORRUPT,
  SQLITE_FULL,
  SQLITE_CANTOPEN,
  SQLITE_NOTADB,
};

/**
 * Turns a driver's SQLite failure into a {@link StorageError} that says what happened and what
 * to do, keeping the original as `cause`. Errors leasehold raised itself, and argument errors,
 * pass through unchanged. `code` is the numeric result code or the `SQLITE_*` name.
 * @internal
 */
export function toStorageError(error: unknown, code: number | string | undefined, filename: string): unknown {
  if (error instanceof LeaseholdError || error instanceof TypeError || error instanceof RangeError) return error;
  const primary = typeof code === 'string' ? (byName[code.replace(/_[A-Z_]+$/, '')] ?? byName[code]) : code === undefined ? undefined : code & 0xff;
  const detail = error instanceof Error ? error.message : String(error);
  const where = `database ${JSON.stringify(filename)}`;
  switch (primary) {
    case SQLITE_FULL:
      return new StorageError('STORAGE_FULL', `${where} is out of space (${detail}); the transaction was rolled back. Free storage (or ask the browser for a larger quota) and retry.`, { cause: error });
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new StorageError('STORAGE_CORRUPT', `${where} is not a valid SQLite database or is damaged (${detail}). Restore it from a copy, or delete it to start empty.`, { cause: error });
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new StorageError('STORAGE_BUSY', `${where} is locked by another connection (${detail}); retry later, or close the other connection.`, { cause: error });
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return new StorageError('STORAGE_UNAVAILABLE', `${where} cannot be opened for writing (${detail}). Check the path and its permissions.`, { cause: error });
    case SQLITE_IOERR:
    case SQLITE_NOMEM:
      return new StorageError('STORAGE_FAILED', `${where} failed to read or write (${detail}); the transaction was rolled back. Retry; if it persists, check the storage device.`, { cause: error });
    default:
      return error;
  }
}

/**
 * The parts of a driver that {@link createSqlDatabase} builds a {@link SqlDatabase} from. Each
 * driver supplies raw, unmapped operations plus a way to read the SQLite code of its errors.
 * @internal
 */
export interface RawConnection {
  filename: string;
  prepare(sql: string): SqlStatement;
  exec(sql: string): void;
  close(): void;
  /** The SQLite result code (number) or code name (string) of a driver error, if it has one. */
  errorCode(error: unknown): number | string | undefined;
}

/**
 * Wraps a driver's raw connection in the shared behaviour every driver must have: errors mapped
 * to {@link StorageError}, `BEGIN IMMEDIATE` transactions from statements prepared once (a
 * fresh `exec('BEGIN IMMEDIATE')` per call halved publish throughput in sqlite-wasm), a guard
 * against nesting, and use-after-close reported as {@link ClosedError}.
 * @internal
 */
export function createSqlDatabase(raw: RawConnection): SqlDatabase {
  let closed = false;
  let inTransaction = false;
  /** Set when a savepoint could not be rolled back: SQLite ended the transaction under us. */
  let doomed: { error: unknown } | undefined;
  const mapError = (error: unknown): unknown => toStorageError(error, raw.errorCode(error), raw.filename);
  const ensureOpen = (): void => {
    if (closed) throw new ClosedError(`database ${JSON.stringify(raw.filename)}`);
  };
  const guard = <A extends SqlValue[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      ensureOpen();
      try {
        return fn(...args);
      } catch (error) {
        throw mapError(error);
      }
    };

  const prepare = (sql: string): SqlStatement => {
    ensureOpen();
    let statement: SqlStatement;
    try {
      statement = raw.prepare(sql);
    } catch (error) {
      throw mapError(error);
    }
    return {
      run: guard((...params) => statement.run(...params)),
      get: guard((...params) => statement.get(...params)) as SqlStatement['get'],
      all: guard((...params) => statement.all(...params)) as SqlStatement['all'],
    };
  };

  const begin = raw.prepare('BEGIN IMMEDIATE');
  const commit = raw.prepare('COMMIT');
  const rollback = raw.prepare('ROLLBACK');
  // One name serves every level: SQLite matches RELEASE / ROLLBACK TO to the innermost savepoint
  // of that name.
  const savepoint = raw.prepare('SAVEPOINT lh_call');
  const release = raw.prepare('RELEASE lh_call');
  const rollbackTo = raw.prepare('ROLLBACK TO lh_call');

  return {
    filename: raw.filename,
    prepare,
    exec(sql) {
      ensureOpen();
      try {
        raw.exec(sql);
      } catch (error) {
        throw mapError(error);
      }
    },
    transaction<T>(body: () => T): T {
      ensureOpen();
      if (inTransaction) throw new Error('leasehold: nested transaction; a backend method must not call another one');
      try {
        begin.run();
      } catch (error) {
        throw mapError(error);
      }
      inTransaction = true;
      try {
        const result = body();
        if (doomed) throw doomed.error;
        commit.run();
        return result;
      } catch (error) {
        try {
          rollback.run();
        } catch {
          // SQLite may already have rolled back (e.g. after SQLITE_FULL); nothing more to undo.
        }
        throw mapError(error);
      } finally {
        inTransaction = false;
        doomed = undefined;
      }
    },
    savepoint<T>(body: () => T): T {
      ensureOpen();
      if (!inTransaction) throw new Error('leasehold: savepoint outside a transaction');
      if (doomed) throw doomed.error;
      try {
        savepoint.run();
      } catch (error) {
        throw mapError(error);
      }
      try {
        const result = body();
        release.run();
        return result;
      } catch (error) {
        const mapped = mapError(error);
        try {
          rollbackTo.run();
          release.run();
        } catch {
          doomed = { error: mapped };
        }
        throw mapped;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      raw.close();
    },
    get closed() {
      return closed;
    },
  };
}
