/**
 * The SQL driver seam: the small synchronous interface the SQL backends are written against.
 * Two drivers implement it — sqlite-wasm (`openWasmDatabase`, any runtime) and better-sqlite3
 * (`openBetterSqliteDatabase`, Node) — and the SQL backends import neither package.
 *
 * Synchronous on purpose: a backend method runs a whole transaction without awaiting, so no
 * other call can interleave inside it, and SQLite's write lock serializes connections.
 */
import { ClosedError, LeaseholdError, StorageError } from '../errors.js';
import { pollCommits } from './commits.js';

/** A value SQLite binds or returns. Integers beyond 2^53 are not used by leasehold. */
export type SqlValue = string | number | bigint | null | Uint8Array;

/** A row as an object keyed by column name. */
export type SqlRow = Record<string, SqlValue>;

/** A statement prepared once and run many times with positional (`?`) parameters. */
export interface SqlStatement {
  /**
   * Runs the statement; returns how many rows it changed if it is an INSERT, UPDATE or DELETE
   * (rows its triggers changed not counted). For other statements the number means nothing.
   */
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
  /**
   * The schema version of `component` in this database, 0 where it has none yet. Each part of
   * leasehold that keeps tables in a database numbers its own migrations (see
   * `migrateComponent`): {@link CORE_COMPONENT}, the transport and the store, and `'host'`, the
   * browser host's call journal. Read it inside {@link SqlDatabase.transaction} to act on it:
   * outside one, another connection may change it at any moment.
   *
   * Where it is kept is the driver's business: the core's in SQLite's `user_version` header
   * field on a file (where every leasehold before components kept its one number) and in the
   * table `lh_user_version` in a Durable Object (which refuses that PRAGMA); every other
   * component's in the table `lh_schema_versions`.
   * @throws TypeError when `component` is not a non-empty string.
   */
  schemaVersion(component: string): number;
  /**
   * Records `version` as `component`'s schema version, as part of the current transaction: it
   * commits, or rolls back, with the migration it belongs to.
   * @throws Error outside {@link SqlDatabase.transaction}; TypeError / RangeError when
   *   `component` is not a non-empty string or `version` not an integer from 0 to 2^31 − 1.
   */
  setSchemaVersion(component: string, version: number): void;
  /**
   * Calls `listener` within about 100 ms after another connection commits to this database,
   * until the returned function is called (once or many times). Present only where other
   * connections can exist, on a file; absent where this connection is the only one (in memory,
   * a Durable Object) or the runtime has no timers. On a connection in exclusive locking mode
   * (the browser host's owner) nobody else can commit: it watches nothing.
   *
   * A listener that throws does not stop the others; its error is rethrown from the timer.
   * @throws TypeError when `listener` is not a function; ClosedError after `close()`.
   */
  watchCommits?(listener: () => void): () => void;
  /** Closes the connection. Further use throws a {@link ClosedError}. Idempotent. */
  close(): void;
  /** Whether `close()` has been called. */
  readonly closed: boolean;
}

/**
 * The component of the transport and store tables. Its version is the one number every
 * leasehold before per-component versions kept, so it stays where they kept it.
 */
export const CORE_COMPONENT = 'core';

/** Where every component's version but the core's is kept: one row per component. */
const COMPONENT_TABLE = 'CREATE TABLE IF NOT EXISTS lh_schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID';
const HAS_TABLE = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?";
const READ_COMPONENT = 'SELECT version FROM lh_schema_versions WHERE component = ?';
const WRITE_COMPONENT = 'INSERT INTO lh_schema_versions (component, version) VALUES (?, ?) ON CONFLICT (component) DO UPDATE SET version = excluded.version';

/** Throws a TypeError unless `component` is a non-empty string. @internal */
export function checkComponent(component: unknown): asserts component is string {
  if (typeof component !== 'string' || component.length === 0) {
    throw new TypeError(`component must be a non-empty string, got ${typeof component === 'string' ? '""' : String(component)}`);
  }
}

/** Throws a TypeError / RangeError unless `version` is an integer from 0 to 2^31 − 1. @internal */
export function checkSchemaVersion(version: unknown): asserts version is number {
  if (typeof version !== 'number') throw new TypeError(`version must be a number, got ${typeof version}`);
  // user_version is a signed 32-bit field; every component obeys the same bound.
  if (!Number.isInteger(version) || version < 0 || version > 2 ** 31 - 1) {
    throw new RangeError(`version must be an integer from 0 to 2^31 - 1, got ${version}`);
  }
}

/**
 * How a driver runs one statement for {@link componentVersions}, with its errors mapped: `get`
 * for the first row of a query, `run` for a statement that returns none.
 * @internal
 */
export interface Queries {
  get(sql: string, ...params: SqlValue[]): SqlRow | undefined;
  run(sql: string, ...params: SqlValue[]): void;
}

/**
 * Reads and writes the versions kept in `lh_schema_versions`, for every driver alike. A read
 * asks whether the table exists before touching it, so a database that never had one is not
 * written to (or, in sqlite-wasm, logged a failed statement) just to learn its version is 0.
 * @internal
 */
export function componentVersions(q: Queries): { read(component: string): number; write(component: string, version: number): void } {
  return {
    read: (component) => (hasTable(q, 'lh_schema_versions') ? Number(q.get(READ_COMPONENT, component)?.version ?? 0) : 0),
    write: (component, version) => {
      q.run(COMPONENT_TABLE);
      q.run(WRITE_COMPONENT, component, version);
    },
  };
}

/** Whether the database has a table named `name`. @internal */
export function hasTable(q: Queries, name: string): boolean {
  return q.get(HAS_TABLE, name) !== undefined;
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

  // Statements prepared on first use and kept: a migration check runs on every open.
  const statements = new Map<string, SqlStatement>();
  const statement = (sql: string): SqlStatement => {
    let found = statements.get(sql);
    if (!found) statements.set(sql, (found = prepare(sql)));
    return found;
  };
  const queries: Queries = {
    get: (sql, ...params) => statement(sql).get(...params),
    run: (sql, ...params) => void statement(sql).run(...params),
  };
  const one = queries.get;
  const versions = componentVersions(queries);
  // No other connection can commit to a database in memory (each is private to its connection).
  const shared = raw.filename !== '' && raw.filename !== ':memory:';
  const watchCommits = shared
    ? pollCommits({
        dataVersion: () => Number(one('PRAGMA data_version')!.data_version),
        exclusive: () => String(one('PRAGMA locking_mode')?.locking_mode).toLowerCase() === 'exclusive',
        closed: () => closed,
        ensureOpen,
      })
    : undefined;

  const database: SqlDatabase = {
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
    schemaVersion(component) {
      checkComponent(component);
      if (component === CORE_COMPONENT) return Number(one('PRAGMA user_version')!.user_version);
      return versions.read(component);
    },
    setSchemaVersion(component, version) {
      checkComponent(component);
      checkSchemaVersion(version);
      ensureOpen();
      if (!inTransaction) throw new Error('leasehold: setSchemaVersion outside a transaction');
      // A PRAGMA takes no bound parameters; `version` is a checked integer.
      if (component === CORE_COMPONENT) database.exec(`PRAGMA user_version = ${version}`);
      else versions.write(component, version);
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
  if (watchCommits) database.watchCommits = watchCommits;
  return database;
}
