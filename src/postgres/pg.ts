/**
 * The node-postgres driver: a {@link PgDatabase} over a `pg.Pool`, for a PostgreSQL server.
 * Written against the few members of `Pool` it uses (structural types), so this module never
 * imports `pg`: the application creates the pool (and chooses its size, TLS, timeouts) and ends
 * it when done.
 */
import { ClosedError, StorageError } from '../errors.js';
import { checkChannel, type PgDatabase, type PgQueryable, toPgStorageError } from './driver.js';
import { checkOptions } from '../validate.js';

// Host globals every runtime node-postgres runs on has; declared here because the core type
// check allows no Node or DOM types.
declare const setTimeout: (callback: () => void, ms: number) => unknown;
declare const URL: new (url: string) => { hostname: string; port: string; pathname: string };

/** The parts of a node-postgres client (`PoolClient`) this driver uses. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
}

/** The parts of a node-postgres `Pool` this driver uses. */
export interface PgPoolLike {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** A named statement: prepared once on each connection, then only bound and run. */
  query(config: { name: string; text: string; values?: unknown[] }): Promise<{ rows: unknown[] }>;
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

/** How many times an autocommit statement is run when the server aborts it for a conflict. */
const CONFLICT_ATTEMPTS = 5;

/** A deadlock (40P01) or serialization failure (40001) the server broke by aborting this statement. */
function isConflict(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return error instanceof StorageError && error.code === 'STORAGE_BUSY' && (code === '40P01' || code === '40001');
}

/** Options of {@link fromPg}. */
export interface FromPgOptions {
  /**
   * Run leasehold's calls as named prepared statements (parsed and planned once per
   * connection), which makes each call cheaper for the server. Default `true`. Set `false`
   * behind a pooler that cannot carry prepared statements across transactions (PgBouncer in
   * transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

/**
 * Wraps a node-postgres `Pool`. Each autocommit statement takes any free connection; each
 * transaction holds one for its duration; `listen` holds one more while anybody listens, and
 * re-establishes it (with back-off) after the server went away. Change notices are sent after
 * the change committed, in a transaction of their own (see {@link PgDatabase.notify}). An
 * autocommit statement the server aborted to break a deadlock or a serialization conflict
 * (SQLSTATE 40P01, 40001) changed nothing and is run again, up to 5 times in all, before its
 * `StorageError` (`STORAGE_BUSY`) reaches the caller; statements inside `transaction()` are not
 * (the body decides).
 *
 * Adds an `'error'` listener to the pool: without one, node-postgres turns an idle connection
 * dropped by the server (a restart, a failover) into an uncaught exception that ends the process.
 * The pool forgets such a connection by itself; the next call opens a new one.
 * @throws TypeError if `pool` does not look like a `pg.Pool`, or for a bad option.
 */
export function fromPg(pool: PgPoolLike, options?: FromPgOptions): PgDatabase {
  if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
    throw new TypeError('pool must be a pg.Pool (node-postgres)');
  }
  checkOptions('options', options, ['preparedStatements'], true);
  const prepared = options?.preparedStatements ?? true;
  if (typeof prepared !== 'boolean') throw new TypeError(`options.preparedStatements must be a boolean, got ${typeof prepared}`);
  const label = labelOf(pool);
  pool.on('error', () => {});
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new ClosedError(`PostgreSQL database ${label}`);
  };
  const run = async <R>(on: Pick<PgClientLike, 'query'>, text: string, params?: readonly unknown[]): Promise<R[]> => {
    try {
      return (await on.query(text, params as unknown[] | undefined)).rows as R[];
    } catch (error) {
      throw toPgStorageError(error, label);
    }
  };
  // Only parameterized SELECTs (every transport and store call) are prepared: migrations and
  // other one-off statements are not worth a statement slot on each connection.
  const runOnce = async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
    if (!prepared || !params?.length || !text.startsWith('SELECT')) return run<R>(pool, text, params);
    try {
      return (await pool.query({ name: statementName(text), text, values: params as unknown[] })).rows as R[];
    } catch (error) {
      throw toPgStorageError(error, label);
    }
  };
  // A statement on its own is its own transaction: when the server aborts it to break a deadlock
  // or a serialization conflict, nothing of it was applied, so running it again is safe. Such
  // deadlocks happen under contention even though every call locks its group rows in one order:
  // FOR UPDATE SKIP LOCKED skips a locked row but still waits to lock the newer version of a row
  // another transaction updated and still holds (docs/postgres.md). The retry waits a little,
  // longer each time, with jitter so the two parties of a deadlock do not meet again.
  const runAutocommit = async <R>(text: string, params?: readonly unknown[]): Promise<R[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runOnce<R>(text, params);
      } catch (error) {
        if (attempt >= CONFLICT_ATTEMPTS || !isConflict(error)) throw error;
        await new Promise<void>((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
      }
    }
  };
  // Marks the notices this driver sends, so its own listeners, told at once, skip their echo.
  const origin = `lh${Math.random().toString(36).slice(2, 12)}`;
  const listener = new PgListener(pool, label, origin);
  const notifier = new PgNotifier(pool, origin);

  return {
    label,
    async query<R>(text: string, params?: readonly unknown[]) {
      ensureOpen();
      return runAutocommit<R>(text, params);
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
    notify(channel) {
      checkChannel(channel);
      if (closed) return;
      listener.local(channel);
      notifier.signal(channel);
    },
    async close() {
      closed = true;
      await notifier.settled();
      await listener.stop();
    },
  };
}

const statementNames = new Map<string, string>();

/**
 * The name a statement is prepared under on every connection: the same text always gets the
 * same name (several `fromPg` over one pool share connections), and different texts different
 * names (a 32-bit hash and the length, checked against the texts named so far).
 */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name) return name;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  name = `lh_${h.toString(36)}_${text.length.toString(36)}`;
  for (let n = 1; [...statementNames.values()].includes(name); n++) name = `lh_${h.toString(36)}_${text.length.toString(36)}_${n}`;
  statementNames.set(text, name);
  return name;
}

/** After a notice, changes are announced again at most this many milliseconds later (a notice is a hint to idle workers). */
const NOTIFY_GAP_MS = 10;

/**
 * Sends `pg_notify` in transactions of its own, after the changes they announce committed: at
 * most one per channel on its way at a time, then a pause of NOTIFY_GAP_MS, and one more after it
 * if a change committed meanwhile (the notice before may have been sent before that change was
 * visible). So listeners hear at least one notice after the last change, and a channel carries
 * at most one notice per gap however fast changes come. The notifying transaction commits with
 * `synchronous_commit` off: it writes nothing that must survive a crash, so it never waits for a
 * flush while holding the notify lock.
 */
class PgNotifier {
  readonly #pending = new Map<string, { again: boolean; done: Promise<void> }>();

  constructor(
    readonly pool: PgPoolLike,
    readonly origin: string,
  ) {}

  signal(channel: string): void {
    const pending = this.#pending.get(channel);
    if (pending) {
      pending.again = true;
      return;
    }
    const state = { again: false, done: Promise.resolve() };
    state.done = (async () => {
      for (;;) {
        state.again = false;
        try {
          await this.pool.query("SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)", [channel, this.origin]);
        } catch {
          // The server is unreachable: listeners reconnect and are told then; consumers poll meanwhile.
          break;
        }
        // The gap comes after every notice, not only when a change arrived while it was on its
        // way: a lone worker's next ack commits after its notice returned, so without the pause
        // every ack sent a notice of its own (~1,000 a second, a fifth of the CPU a claim → ack
        // costs client and server together: bench/postgres/probe-transport.ts).
        await new Promise<void>((resolve) => setTimeout(resolve, NOTIFY_GAP_MS));
        if (!state.again) break;
      }
      this.#pending.delete(channel);
    })();
    this.#pending.set(channel, state);
  }

  async settled(): Promise<void> {
    await Promise.all([...this.#pending.values()].map((p) => p.done));
  }
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
    /** The payload of this driver's own notices: their echo through the server is skipped. */
    readonly origin: string,
  ) {}

  /** A change this driver committed: tells this driver's listeners on `channel` now, not a round trip later. */
  local(channel: string): void {
    for (const notice of [...(this.#channels.get(channel) ?? [])]) notice();
  }

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
      client.on('notification', ({ channel, payload }) => {
        if (payload === this.origin) return;
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
    // The body catches everything it awaits: the promise never rejects, so nothing awaits it.
    setTimeout(() => void (async () => {
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
    })(), delay);
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
