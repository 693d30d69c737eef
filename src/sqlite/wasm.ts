/**
 * The sqlite-wasm driver: SQLite compiled to WebAssembly, so it runs on any JavaScript runtime.
 * In Node it is in-memory only (`:memory:`, or an Emscripten MEMFS path that dies with the
 * process); durable files need the browser host (OPFS) or better-sqlite3.
 *
 * The package (an optional peer: `npm install @sqlite.org/sqlite-wasm@3.54.1-build1`) is loaded
 * on the first `openWasmDatabase()` call, so an app that never opens a wasm database never loads it.
 */
import type { Database, PreparedStatement, Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { createSqlDatabase, toStorageError, type SqlDatabase, type SqlRow, type SqlStatement, type SqlValue } from './driver.js';
import { importPeer, SQLITE_WASM } from './peers.js';

let modulePromise: Promise<Sqlite3Static> | undefined;

/**
 * Loads and initialises sqlite-wasm once per JavaScript realm (~70 ms in Node) and returns
 * the module. Later calls return the same module.
 *
 * @throws LeaseholdError with code `'DRIVER_MISSING'` when @sqlite.org/sqlite-wasm is not
 *   installed; the message names the install command. A later call tries again.
 */
export function loadSqliteWasm(): Promise<Sqlite3Static> {
  if (!modulePromise) {
    const loading = importPeer(SQLITE_WASM, () => import('@sqlite.org/sqlite-wasm')).then((m) => m.default());
    // A failed load is not kept, so a later call tries again (say, after the package was installed).
    loading.catch(() => {
      if (modulePromise === loading) modulePromise = undefined;
    });
    modulePromise = loading;
  }
  return modulePromise;
}

/** Options of {@link openWasmDatabase}. */
export interface WasmDatabaseOptions {
  /** `:memory:` (default) or a path in the module's default VFS. */
  filename?: string;
}

/**
 * Opens a sqlite-wasm database and returns it behind the {@link SqlDatabase} seam.
 *
 * @throws TypeError if `filename` is given and is not a non-empty string.
 * @throws LeaseholdError with code `'DRIVER_MISSING'` when @sqlite.org/sqlite-wasm is not installed.
 * @throws StorageError if SQLite cannot open the file.
 */
export async function openWasmDatabase(options: WasmDatabaseOptions = {}): Promise<SqlDatabase> {
  const filename = options.filename ?? ':memory:';
  if (typeof filename !== 'string' || filename.length === 0) {
    throw new TypeError(`filename must be a non-empty string, got ${String(filename)}`);
  }
  const sqlite3 = await loadSqliteWasm();
  let db: Database;
  try {
    db = new sqlite3.oo1.DB(filename, 'c');
  } catch (error) {
    throw toStorageError(error, (error as { resultCode?: number }).resultCode, filename);
  }
  return fromWasmDatabase(sqlite3, db);
}

/**
 * Wraps an already open sqlite-wasm `oo1.DB` (for example an `OpfsSAHPoolDb`) of the module
 * `sqlite3` in the {@link SqlDatabase} seam. The returned database owns `db`: closing it closes `db`.
 */
export function fromWasmDatabase(sqlite3: Sqlite3Static, db: Database): SqlDatabase {
  const filename = db.filename || ':memory:';
  return createSqlDatabase({
    filename,
    prepare: (sql) => wrapStatement(sqlite3, db, db.prepare(sql)),
    exec: (sql) => void db.exec(sql),
    close: () => db.close(),
    errorCode: (error) => (error as { resultCode?: number } | null)?.resultCode,
  });
}

function wrapStatement(sqlite3: Sqlite3Static, db: Database, stmt: PreparedStatement): SqlStatement {
  // bind() rejects an empty array. Every call binds all of a statement's parameters, so
  // reset() need not clear the previous bindings (one wasm call fewer per statement).
  const bind = (params: SqlValue[]): void => {
    if (params.length === 0) return;
    stmt.bind(params);
    // oo1 binds every whole number as a 64-bit integer, so one of 2^63 or more (1e300, say)
    // would wrap to 0; bind those as the doubles they are.
    for (let i = 0; i < params.length; i++) {
      const value = params[i];
      if (typeof value === 'number' && Math.abs(value) >= 2 ** 63 && Number.isFinite(value)) {
        sqlite3.capi.sqlite3_bind_double(stmt.pointer!, i + 1, value);
      }
    }
  };
  return {
    run(...params) {
      try {
        bind(params);
        stmt.step();
        return db.changes();
      } finally {
        stmt.reset();
      }
    },
    get<T>(...params: SqlValue[]): T | undefined {
      try {
        bind(params);
        return stmt.step() ? (stmt.get({}) as T) : undefined;
      } finally {
        stmt.reset();
      }
    },
    all<T>(...params: SqlValue[]): T[] {
      try {
        bind(params);
        const rows: SqlRow[] = [];
        while (stmt.step()) rows.push(stmt.get({}) as SqlRow);
        return rows as T[];
      } finally {
        stmt.reset();
      }
    },
  };
}
