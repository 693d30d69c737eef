/**
 * The PostgreSQL seam: the small asynchronous interface `PostgresTransport` and `PostgresStore`
 * are written against. Two drivers implement it — `fromPg` (node-postgres, a `Pool`: the server
 * case) and `fromPglite` (PGlite: embedded PostgreSQL in WASM, one connection) — and neither
 * backend imports either package.
 *
 * Unlike the SQLite seam this one is asynchronous: a transaction is a function that awaits its
 * statements on one connection, while other calls run on other connections (a pool) or wait
 * their turn (PGlite's single connection). Most backend calls need no explicit transaction: each
 * is one statement (a server-side function), which PostgreSQL runs as its own transaction.
 */
import { ClosedError, LeaseholdError, StorageError } from '../errors.js';

/** A row as an object keyed by column name. */
export type PgRow = Record<string, unknown>;

/** Something that runs one statement with `$1`-style parameters. */
export interface PgQueryable {
  /** Runs `text` with `params` and returns its rows. Failures reject with a {@link StorageError} where one applies. */
  query<R = PgRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * An open PostgreSQL database, as the backends need it. Statements outside `transaction` run in
 * autocommit mode, each on whatever connection is free.
 */
export interface PgDatabase extends PgQueryable {
  /** A label for messages (host and database, never the password). */
  readonly label: string;
  /**
   * Runs `body` inside `BEGIN … COMMIT` on one connection; any rejection, from `body` or from
   * `COMMIT`, rolls everything back and is rethrown. Calls from `body` must use `tx`, never the
   * database itself (on one connection that would wait for the transaction forever).
   */
  transaction<T>(body: (tx: PgQueryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotice` for each `NOTIFY` on `channel` (a plain lower-case identifier), from any
   * connection or process, and after the listening connection was re-established (notices may
   * have been missed meanwhile). Resolves once listening; the returned function stops it.
   */
  listen(channel: string, onNotice: () => void): Promise<() => Promise<void>>;
  /**
   * Optional: announces a change on `channel` after the change committed, outside its
   * transaction, coalescing announcements made while one is on its way (listeners then hear at
   * least one notice after the last change). This database's own listeners on `channel` are
   * told at once. A driver for a server implements it because a
   * `NOTIFY` inside a writing transaction holds a database-wide lock through that transaction's
   * commit flush, which makes concurrent committers queue one flush at a time; a driver without
   * it gets `pg_notify` inside the changing transaction. Never rejects: a notice is a hint.
   */
  notify?(channel: string): void;
  /** Releases what the adapter itself opened (listening connections), after any notice on its way. The pool or PGlite instance it wraps stays open: its owner closes it. */
  close(): Promise<void>;
}

/** SQLSTATE classes and codes, and socket errors, that mean the server cannot be reached now. */
const unreachable = /^(08|57P0[1-3]|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)/;

/**
 * Turns a driver's failure into a {@link StorageError} that says what happened and what to do,
 * keeping the original as `cause`. Errors leasehold raised itself, argument errors, and errors
 * that are not about storage (a bug's syntax error) pass through unchanged.
 * @internal
 */
export function toPgStorageError(error: unknown, label: string): unknown {
  if (error instanceof LeaseholdError || error instanceof TypeError || error instanceof RangeError) return error;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const detail = error instanceof Error ? error.message : String(error);
  const where = `PostgreSQL at ${label}`;
  // node-postgres reports a connection dropped mid-query with a plain Error and no code.
  if (unreachable.test(code) || /Connection terminated|connection (?:error|ended|is closed)|Client has encountered a connection error/i.test(detail)) {
    return new StorageError(
      'STORAGE_UNAVAILABLE',
      `${where} cannot be reached or closed the connection (${detail}). A call that failed before its commit changed nothing; ` +
        'one cut off during its commit may or may not have been applied (leases make a retry safe). Retry once the server is back.',
      { cause: error },
    );
  }
  if (code === '28P01' || code === '28000') {
    return new StorageError('ACCESS_DENIED', `${where} refused the credentials (${detail}). Check the user and password in the connection string, and the server's pg_hba.conf.`, { cause: error });
  }
  if (code === '42501') {
    return new StorageError('ACCESS_DENIED', `${where}: the user lacks a privilege leasehold needs (${detail}); nothing was changed. Grant it USAGE and CREATE on the schema (or let an owner run the first open, which installs the tables).`, { cause: error });
  }
  if (code === '3D000') {
    return new StorageError('STORAGE_UNAVAILABLE', `${where} has no such database (${detail}). Create it (createdb) or fix the database name in the connection string.`, { cause: error });
  }
  if (/Cannot use a pool after calling end on the pool/i.test(detail)) {
    return new ClosedError(`the pg.Pool of ${where} (ended with pool.end() while leasehold still used it: close the transports and stores first, then end the pool)`);
  }
  if (code === '53100') {
    return new StorageError('STORAGE_FULL', `${where} is out of disk space (${detail}); the transaction was rolled back. Free space on the server and retry.`, { cause: error });
  }
  if (code === '40001' || code === '40P01' || code === '55P03') {
    return new StorageError('STORAGE_BUSY', `${where} aborted the transaction because of a conflict with another one (${detail}); nothing was changed. Retry.`, { cause: error });
  }
  if (code.startsWith('XX0')) {
    return new StorageError('STORAGE_CORRUPT', `${where} reports damaged data (${detail}). Restore from a backup or replica.`, { cause: error });
  }
  if (code.startsWith('53') || code === '58030') {
    return new StorageError('STORAGE_FAILED', `${where} ran out of a resource or failed to read or write (${detail}); the transaction was rolled back. Retry; if it persists, check the server.`, { cause: error });
  }
  return error;
}

/** A channel name `listen` accepts: a plain identifier, so it needs no quoting anywhere. */
export function checkChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new RangeError(`channel must be a lower-case identifier of at most 63 characters, got ${JSON.stringify(channel)}`);
}
