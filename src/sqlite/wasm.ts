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
import { checkOptions } from '../validate.js';

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
  checkOptions('options', options, ['filename']);
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
  const calls = new RawCalls(sqlite3, db);
  return createSqlDatabase({
    filename,
    prepare: (sql) => wrapStatement(calls, db.prepare(sql)),
    exec: (sql) => void db.exec(sql),
    close: () => {
      db.close();
      calls.release();
    },
    errorCode: (error) => (error as { resultCode?: number } | null)?.resultCode,
  });
}

/** The few C functions a statement needs, called straight from the module's exports. */
interface Exports {
  sqlite3_bind_null(stmt: number, i: number): number;
  sqlite3_bind_int(stmt: number, i: number, value: number): number;
  sqlite3_bind_int64(stmt: number, i: number, value: bigint): number;
  sqlite3_bind_double(stmt: number, i: number, value: number): number;
  sqlite3_bind_text(stmt: number, i: number, text: number, bytes: number, destructor: number): number;
  sqlite3_bind_blob(stmt: number, i: number, blob: number, bytes: number, destructor: number): number;
  sqlite3_step(stmt: number): number;
  sqlite3_reset(stmt: number): number;
  sqlite3_changes(db: number): number;
  sqlite3_column_count(stmt: number): number;
  sqlite3_column_type(stmt: number, i: number): number;
  sqlite3_column_int64(stmt: number, i: number): bigint;
  sqlite3_column_double(stmt: number, i: number): number;
  sqlite3_column_text(stmt: number, i: number): number;
  sqlite3_column_blob(stmt: number, i: number): number;
  sqlite3_column_bytes(stmt: number, i: number): number;
}

// Present in every runtime sqlite-wasm runs on; the core's type set (ES2022, no DOM) does not name them.
declare const TextEncoder: new () => { encodeInto(source: string, destination: Uint8Array): { read: number; written: number } };
declare const TextDecoder: new () => { decode(input: Uint8Array): string };

const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
/** SQLITE_TRANSIENT: SQLite copies the bound bytes before the bind returns. */
const TRANSIENT = -1;
const INT32 = 2 ** 31;

/**
 * Binding, stepping and reading rows through the module's exported C functions instead of the
 * oo1 `Stmt` methods. oo1 checks, converts and allocates per value (a string bound is a malloc
 * and a free; a row read looks up every column's name again): a statement with 3 parameters
 * cost 8.8 µs against 2.7 µs for none, which made binding most of a claim's cost. Here a string
 * is encoded into one reused buffer in wasm memory and bound as SQLITE_TRANSIENT (SQLite copies
 * it), and column names are read once per statement. Errors are thrown by oo1's own `checkRc`,
 * so they are the same SQLite3Error objects as before.
 */
class RawCalls {
  readonly x: Exports;
  readonly #sqlite3: Sqlite3Static;
  readonly #db: Database;
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();
  #scratch = 0;
  #scratchBytes = 0;

  constructor(sqlite3: Sqlite3Static, db: Database) {
    this.#sqlite3 = sqlite3;
    this.#db = db;
    this.x = sqlite3.wasm.exports as unknown as Exports;
  }

  /** Throws SQLite's error for `rc` on this connection (oo1's SQLite3Error, with resultCode). */
  fail(rc: number): never {
    this.#db.checkRc(rc);
    throw new Error(`sqlite3 result code ${rc}`);
  }

  bind(stmt: number, params: SqlValue[]): void {
    const x = this.x;
    for (let i = 0; i < params.length; i++) {
      const value = params[i];
      let rc: number;
      if (value === null || value === undefined) rc = x.sqlite3_bind_null(stmt, i + 1);
      else if (typeof value === 'number') {
        if (Number.isInteger(value) && value < INT32 && value >= -INT32) rc = x.sqlite3_bind_int(stmt, i + 1, value);
        // Whole numbers below 2^63 are integers to SQLite; larger ones (1e300) stay the doubles they are.
        else if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) rc = x.sqlite3_bind_int64(stmt, i + 1, BigInt(value));
        else rc = x.sqlite3_bind_double(stmt, i + 1, value);
      } else if (typeof value === 'string') {
        const p = this.#room(value.length * 3);
        const { written } = this.#encoder.encodeInto(value, this.#sqlite3.wasm.heap8u().subarray(p, p + this.#scratchBytes));
        rc = x.sqlite3_bind_text(stmt, i + 1, p, written, TRANSIENT);
      } else if (typeof value === 'bigint') {
        if (value >= 2n ** 63n || value < -(2n ** 63n)) throw new RangeError(`parameter ${i + 1}: ${value} does not fit in a 64-bit integer`);
        rc = x.sqlite3_bind_int64(stmt, i + 1, value);
      } else if (value instanceof Uint8Array) {
        const p = this.#room(value.byteLength);
        this.#sqlite3.wasm.heap8u().set(value, p);
        rc = x.sqlite3_bind_blob(stmt, i + 1, p, value.byteLength, TRANSIENT);
      } else {
        throw new TypeError(`parameter ${i + 1} has a type SQLite cannot store: ${typeof value}`);
      }
      if (rc !== 0) this.fail(rc);
    }
  }

  /** Steps once: true for a row, false when done; throws SQLite's error otherwise. */
  step(stmt: number): boolean {
    const rc = this.x.sqlite3_step(stmt);
    if (rc === SQLITE_ROW) return true;
    if (rc === SQLITE_DONE) return false;
    return this.fail(rc);
  }

  changes(): number {
    return this.x.sqlite3_changes(this.#db.pointer as unknown as number);
  }

  column(stmt: number, i: number): SqlValue {
    const x = this.x;
    switch (x.sqlite3_column_type(stmt, i)) {
      case 1: {
        // Exact as a double up to 2^53; beyond that, SQLite's 64-bit integer as a BigInt.
        const n = x.sqlite3_column_double(stmt, i);
        if (Number.isSafeInteger(n)) return n;
        const big = x.sqlite3_column_int64(stmt, i);
        return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
      }
      case 2:
        return x.sqlite3_column_double(stmt, i);
      case 3: {
        const p = x.sqlite3_column_text(stmt, i);
        const n = x.sqlite3_column_bytes(stmt, i);
        return n === 0 ? '' : this.#decoder.decode(this.#sqlite3.wasm.heap8u().subarray(p, p + n));
      }
      case 4: {
        const p = x.sqlite3_column_blob(stmt, i);
        const n = x.sqlite3_column_bytes(stmt, i);
        return this.#sqlite3.wasm.heap8u().slice(p, p + n);
      }
      default:
        return null;
    }
  }

  /** Frees the scratch buffer; after the connection closed. */
  release(): void {
    if (this.#scratch) this.#sqlite3.wasm.dealloc(this.#scratch);
    this.#scratch = 0;
    this.#scratchBytes = 0;
  }

  /** The scratch buffer, at least `bytes` long. */
  #room(bytes: number): number {
    if (bytes > this.#scratchBytes) {
      if (this.#scratch) this.#sqlite3.wasm.dealloc(this.#scratch);
      this.#scratchBytes = Math.max(bytes, 2 * this.#scratchBytes, 4096);
      this.#scratch = this.#sqlite3.wasm.alloc(this.#scratchBytes) as unknown as number;
    }
    return this.#scratch;
  }
}

function wrapStatement(calls: RawCalls, stmt: PreparedStatement): SqlStatement {
  const pointer = stmt.pointer as unknown as number;
  let names: string[] | undefined;
  const row = (): SqlRow => {
    // Read once; again only if a schema change re-prepared the statement with other columns.
    const count = calls.x.sqlite3_column_count(pointer);
    if (names?.length !== count) names = Array.from({ length: count }, (_, i) => stmt.getColumnName(i)!);
    const out: SqlRow = {};
    for (let i = 0; i < names.length; i++) out[names[i]!] = calls.column(pointer, i);
    return out;
  };
  // Every call binds all of a statement's parameters, so reset() need not clear the previous
  // bindings (one wasm call fewer per statement).
  return {
    run(...params) {
      try {
        calls.bind(pointer, params);
        calls.step(pointer);
        return calls.changes();
      } finally {
        calls.x.sqlite3_reset(pointer);
      }
    },
    get<T>(...params: SqlValue[]): T | undefined {
      try {
        calls.bind(pointer, params);
        return calls.step(pointer) ? (row() as T) : undefined;
      } finally {
        calls.x.sqlite3_reset(pointer);
      }
    },
    all<T>(...params: SqlValue[]): T[] {
      try {
        calls.bind(pointer, params);
        const rows: SqlRow[] = [];
        while (calls.step(pointer)) rows.push(row());
        return rows as T[];
      } finally {
        calls.x.sqlite3_reset(pointer);
      }
    },
  };
}
