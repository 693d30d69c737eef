/**
 * The node-postgres driver: a {@link PgDatabase} over a `pg.Pool`, for a PostgreSQL server.
 * Written against the few members of `Pool` it uses (structural types), so this module never
 * imports `pg`: the application creates the pool (and chooses its size, TLS, timeouts) and ends
 * it when done.
 */
import { ClosedError } from '../errors.js';
import { checkChannel, type PgDatabase, type PgQueryable, toPgStorageError } from './driver.js';

// Host globals every runtime node-postgres runs on has; declared here because the core type
// check allows no Node or DOM types.
declare const setTimeout: (callback: () => void, ms: number) => unknown;
declare const URL: new (url: string) => { hostname: string; port: string; pathname: string };

/** The parts of a node-postgres client (`PoolClient`) this driver uses. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}

/** The parts of a node-postgres `Pool` this driver uses. */
export interface PgPoolLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgClientLike>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  options?: { host?: string; port?: number; database?: string; connectionString?: string };
}

function labelOf(pool: PgPoolLike): string {
  const o = pool.options ?? {};
  if (o.connectionString) {
    try {
      const url = new URL(o.connectionString);
      return `${url.hostname}:${url.port || 5432}${url.pathname}`;
    } catch {
      return 'a connection string';
    }
  }
  return `${o.host ?? 'localhost'}:${o.port ?? 5432}/${o.database ?? ''}`;
}

/**
 * Wraps a node-postgres `Pool`. Each autocommit statement takes any free connection; each
 * transaction holds one for its duration; `listen` holds one more while anybody listens, and
 * re-establishes it (with back-off) after the server went away.
 *
 * Adds an `'error'` listener to the pool: without one, node-postgres turns an idle connection
 * dropped by the server (a restart, a failover) into an uncaught exception that ends the process.
 * The pool forgets such a connection by itself; the next call opens a new one.
 * @throws TypeError if `pool` does not look like a `pg.Pool`.
 */
export function fromPg(pool: PgPoolLike): PgDatabase {
  if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
    throw new TypeError('pool must be a pg.Pool (node-postgres)');
  }
  const label = labelOf(pool);
  pool.on('error', () => {});
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new ClosedError(`PostgreSQL database ${label}`);
  };
  const run = async <R>(on: { query: PgPoolLike['query'] }, text: string, params?: readonly unknown[]): Promise<R[]> => {
    try {
      return (await on.query(text, params as unknown[] | undefined)).rows as R[];
    } catch (error) {
      throw toPgStorageError(error, label);
    }
  };
  const listener = new PgListener(pool, label);

  return {
    label,
    async query<R>(text: string, params?: readonly unknown[]) {
      ensureOpen();
      return run<R>(pool, text, params);
    },
    async transaction<T>(body: (tx: PgQueryable) => Promise<T>): Promise<T> {
      ensureOpen();
      let client: PgClientLike;
      try {
        client = await pool.connect();
      } catch (error) {
        throw toPgStorageError(error, label);
      }
      let broken = false;
      try {
        await run(client, 'BEGIN');
        const result = await body({ query: <R>(text: string, params?: readonly unknown[]) => run<R>(client, text, params) });
        await run(client, 'COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          // The connection is gone (and the server rolled back) or unusable: do not reuse it.
          broken = true;
        }
        throw toPgStorageError(error, label);
      } finally {
        client.release(broken);
      }
    },
    async listen(channel, onNotice) {
      ensureOpen();
      checkChannel(channel);
      return listener.add(channel, onNotice);
    },
    async close() {
      closed = true;
      await listener.stop();
    },
  };
}

/** One connection that LISTENs on every channel anybody subscribed to, reconnecting when lost. */
class PgListener {
  readonly #channels = new Map<string, Set<() => void>>();
  #client: Promise<PgClientLike> | null = null;
  #retryMs = 100;
  #stopped = false;

  constructor(
    readonly pool: PgPoolLike,
    readonly label: string,
  ) {}

  async add(channel: string, onNotice: () => void): Promise<() => Promise<void>> {
    const entry = () => onNotice();
    let set = this.#channels.get(channel);
    const first = set === undefined;
    if (!set) this.#channels.set(channel, (set = new Set()));
    set.add(entry);
    if (first) {
      try {
        const client = await this.#connection();
        await client.query(`LISTEN ${channel}`);
      } catch (error) {
        set.delete(entry);
        if (set.size === 0) this.#channels.delete(channel);
        throw toPgStorageError(error, this.label);
      }
    }
    return async () => {
      set.delete(entry);
      if (set.size > 0 || this.#channels.get(channel) !== set) return;
      this.#channels.delete(channel);
      const client = this.#client;
      if (this.#channels.size === 0) return this.#release();
      await client?.then((c) => c.query(`UNLISTEN ${channel}`)).catch(() => {});
    };
  }

  #connection(): Promise<PgClientLike> {
    if (this.#client) return this.#client;
    const pending = this.pool.connect().then((client) => {
      client.on('notification', ({ channel }) => {
        for (const notice of [...(this.#channels.get(channel) ?? [])]) notice();
      });
      const lost = () => {
        if (this.#client !== pending) return;
        this.#client = null;
        client.release(true);
        this.#reconnect();
      };
      client.on('error', lost);
      client.on('end', lost);
      return client;
    });
    this.#client = pending;
    pending.catch(() => {
      if (this.#client === pending) this.#client = null;
    });
    return pending;
  }

  /** After the connection was lost: listen again, then tell everyone (notices may have been missed). */
  #reconnect(): void {
    if (this.#stopped || this.#channels.size === 0) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, 5_000);
    setTimeout(async () => {
      if (this.#stopped || this.#channels.size === 0) return;
      try {
        const client = await this.#connection();
        for (const channel of this.#channels.keys()) await client.query(`LISTEN ${channel}`);
        this.#retryMs = 100;
        for (const set of this.#channels.values()) for (const notice of [...set]) notice();
      } catch {
        this.#client = null;
        this.#reconnect();
      }
    }, delay);
  }

  async #release(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    if (!client) return;
    try {
      const c = await client;
      await c.query('UNLISTEN *').catch(() => {});
      c.release();
    } catch {
      // never connected: nothing to release
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#channels.clear();
    await this.#release();
  }
}
