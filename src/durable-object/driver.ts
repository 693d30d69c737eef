/**
 * The Durable Object driver: a SQLite-backed Durable Object's `ctx.storage.sql` behind the
 * {@link SqlDatabase} seam, so `SqliteTransport`, `SqliteStore` and the `Runtime` run inside an
 * object unchanged.
 *
 * The differences from a plain SQLite connection are bridged here, none of them visible to the
 * backends, and without reading the SQL they are given:
 * - Durable Objects refuse `BEGIN`/`COMMIT`: a transaction runs through
 *   `ctx.storage.transactionSync`, which commits when its callback returns and rolls back when it
 *   throws. The object is single-threaded, so nothing else can run inside it meanwhile.
 * - They refuse `PRAGMA user_version` (SQLITE_AUTH), where a SQLite file keeps the core schema's
 *   version: here it is kept in a one-row table, `lh_user_version`, as every leasehold before
 *   per-component versions kept it; other components' versions in `lh_schema_versions`.
 * - A cursor's `rowsWritten` counts index and trigger writes, not the rows a statement changed:
 *   `run()` asks SQLite's `changes()` afterwards, which counts exactly those.
 * - The object is the only connection to its database: no other writer can commit, so there is
 *   no `watchCommits`.
 * - `exec` refuses text that ends in comments after its last statement ("SQL code did not
 *   contain a statement"): migrations must end with a statement.
 */
import { ClosedError } from '../errors.js';
import { checkComponent, checkSchemaVersion, componentVersions, CORE_COMPONENT, hasTable, toStorageError, type Queries, type SqlDatabase, type SqlRow, type SqlStatement, type SqlValue } from '../sqlite/driver.js';
import type { DurableObjectStorageLike } from './types.js';

/**
 * The SQLite result code in a Durable Object's error message, which ends with the code name
 * (`…: SQLITE_FULL`, or `…: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)`).
 */
function codeOf(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  return /\b(SQLITE_[A-Z]+)(?:_[A-Z_]+)?(?: \(extended: [A-Z_]+\))?\s*$/.exec(message)?.[1];
}

/**
 * Wraps a SQLite-backed Durable Object's storage (`ctx.storage`) in the {@link SqlDatabase} seam.
 * Call it once per object instance (in its constructor) and share the result between the
 * transport and the store. `close()` only marks it closed: the object's storage has no
 * connection to close.
 *
 * `rowsWritten` counts the rows written through it so far, as Cloudflare bills them (statements
 * that change messages also write index entries and run triggers).
 *
 * SQLite failures become {@link StorageError}s (`STORAGE_FULL` when the object reached its size
 * limit), with the original error as `cause`; the transaction was rolled back.
 *
 * @throws TypeError when `storage` has no `sql` (the class was not declared with SQLite storage:
 *   `new_sqlite_classes` in wrangler's migrations, `enableSql = true` in a workerd config).
 */
export function fromDurableObjectStorage(storage: DurableObjectStorageLike): SqlDatabase & { readonly rowsWritten: number } {
  if (typeof storage !== 'object' || storage === null || typeof storage.transactionSync !== 'function') {
    throw new TypeError('storage must be a Durable Object\'s ctx.storage');
  }
  const sql = storage.sql;
  if (typeof sql?.exec !== 'function') {
    throw new TypeError('storage.sql is missing: declare the Durable Object class with SQLite storage (new_sqlite_classes in wrangler migrations, enableSql = true in workerd)');
  }
  const filename = 'durable-object';
  let closed = false;
  let inTransaction = false;
  /** Rows written so far, as Cloudflare bills them (index and trigger writes included). */
  let rowsWritten = 0;

  const ensureOpen = (): void => {
    if (closed) throw new ClosedError(`database ${JSON.stringify(filename)}`);
  };
  const mapped = <T>(body: () => T): T => {
    ensureOpen();
    try {
      return body();
    } catch (error) {
      throw toStorageError(error, codeOf(error), filename);
    }
  };
  const exec = (query: string, params: readonly SqlValue[]) => {
    const cursor = sql.exec(query, ...params);
    const rows = cursor.toArray();
    rowsWritten += cursor.rowsWritten;
    return rows;
  };
  // The version bookkeeping goes through `exec` too: what it writes is billed like the rest.
  const queries: Queries = {
    get: (query, ...params) => exec(query, params)[0] as SqlRow | undefined,
    run: (query, ...params) => void exec(query, params),
  };
  const versions = componentVersions(queries);
  const readCoreVersion = (): number =>
    hasTable(queries, 'lh_user_version') ? Number(queries.get('SELECT version FROM lh_user_version WHERE id = 1')?.version ?? 0) : 0;
  const writeCoreVersion = (version: number): void => {
    queries.run('CREATE TABLE IF NOT EXISTS lh_user_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)');
    queries.run('INSERT INTO lh_user_version (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version', version);
  };

  const prepare = (query: string): SqlStatement => {
    ensureOpen();
    // The object's SQL API compiles and caches statements by their text, so there is nothing to
    // prepare ahead: each call sends the query again. `changes()` is asked after every run
    // rather than telling writes from other statements by their text: the backends run() writes
    // (which asked it before too); for anything else the number means nothing, as the seam says.
    return {
      run: (...params) =>
        mapped(() => {
          exec(query, params);
          return Number(sql.exec('SELECT changes() AS n').toArray()[0]!.n);
        }),
      get: <T>(...params: SqlValue[]) => mapped(() => exec(query, params)[0] as T | undefined),
      all: <T>(...params: SqlValue[]) => mapped(() => exec(query, params) as T[]),
    };
  };

  return {
    filename,
    prepare,
    exec(query) {
      mapped(() => void sql.exec(query));
    },
    transaction<T>(body: () => T): T {
      ensureOpen();
      if (inTransaction) throw new Error('leasehold: nested transaction; a backend method must not call another one');
      inTransaction = true;
      try {
        return storage.transactionSync(body);
      } catch (error) {
        throw toStorageError(error, codeOf(error), filename);
      } finally {
        inTransaction = false;
      }
    },
    savepoint<T>(body: () => T): T {
      ensureOpen();
      if (!inTransaction) throw new Error('leasehold: savepoint outside a transaction');
      // A nested transactionSync is a savepoint: a throw undoes only `body`'s writes.
      try {
        return storage.transactionSync(body);
      } catch (error) {
        throw toStorageError(error, codeOf(error), filename);
      }
    },
    schemaVersion(component) {
      checkComponent(component);
      return mapped(() => (component === CORE_COMPONENT ? readCoreVersion() : versions.read(component)));
    },
    setSchemaVersion(component, version) {
      checkComponent(component);
      checkSchemaVersion(version);
      ensureOpen();
      if (!inTransaction) throw new Error('leasehold: setSchemaVersion outside a transaction');
      mapped(() => (component === CORE_COMPONENT ? writeCoreVersion(version) : versions.write(component, version)));
    },
    close() {
      closed = true;
    },
    get closed() {
      return closed;
    },
    get rowsWritten() {
      return rowsWritten;
    },
  };
}
