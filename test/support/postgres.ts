/**
 * The PostgreSQL databases the tests run against: the run's server (through a node-postgres
 * pool) and an embedded PGlite, one of each per test file, created on first use. Every harness
 * gets a schema of its own (dropped when it is disposed), so tests never see each other's rows.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { PgDatabase } from '../../src/postgres/driver.js';
import { fromPg } from '../../src/postgres/pg.js';
import { fromPglite } from '../../src/postgres/pglite.js';
import { pgUrl, startedUrl } from './servers.js';

let pool: pg.Pool | undefined;
let server: PgDatabase | undefined;
let embedded: Promise<PgDatabase> | undefined;
let schemas = 0;

/**
 * The run's PostgreSQL server (see servers-global.ts), through a pool, with the calls of this
 * test file applied in the order they are made (see {@link inIssueOrder}). The server starts on
 * the first call made through it, not here: the shared backend lists name it without starting it.
 */
export function serverDatabase(): PgDatabase {
  if (!server) {
    const real = pgUrl().then((connectionString) => {
      // allowExitOnIdle: the test worker may exit without ending the pool.
      pool = new pg.Pool({ connectionString, max: 8, allowExitOnIdle: true });
      return fromPg(pool);
    });
    let ready: PgDatabase | undefined;
    void real.then((db) => (ready = db), () => {});
    server = inIssueOrder({
      label: 'the PostgreSQL server of the test run',
      query: async (text, params) => (await real).query(text, params),
      transaction: async (body) => (await real).transaction(body),
      listen: async (channel, onNotice) => (await real).listen(channel, onNotice),
      // A notice follows a committed change, so by then the pool exists.
      notify: (channel) => ready?.notify?.(channel),
      close: async () => (await real).close(),
    });
  }
  return server;
}

/**
 * `db` with each call starting only once the previous one settled. The conformance suites
 * observe a backend the way one in-process caller does: a call made after another sees its
 * effect even when the first was not awaited (a consumer's nack, then the test's inspect). On
 * a pool two such calls run on two connections and may commit in either order, which is
 * correct for the contract but not what those tests check. The contention tests run truly
 * concurrent clients instead. LISTEN is left as it is.
 */
export function inIssueOrder(db: PgDatabase): PgDatabase {
  return inIssueOrderGate()(db);
}

/** One issue-order queue that several databases (connections) can share: see {@link inIssueOrder}. */
export function inIssueOrderGate(): (db: PgDatabase) => PgDatabase {
  let last: Promise<unknown> = Promise.resolve();
  const queue = <T>(call: () => Promise<T>): Promise<T> => {
    const next = last.then(call, call);
    last = next.catch(() => undefined);
    return next;
  };
  return (db) => ({
    label: db.label,
    query: (text, params) => queue(() => db.query(text, params)),
    transaction: (body) => queue(() => db.transaction(body)),
    listen: (channel, onNotice) => db.listen(channel, onNotice),
    // A notice is a hint sent after the change committed: it needs no place in the issue order.
    ...(db.notify ? { notify: (channel: string) => db.notify!(channel) } : {}),
    close: () => db.close(),
  });
}

/**
 * A pool of its own on the run's server, for tests that need several independent clients.
 * @throws Error unless `await pgUrl()` has started the server (server-only files do it at the top).
 */
export function newServerPool(max = 4): pg.Pool {
  return new pg.Pool({ connectionString: startedUrl('pg'), max, allowExitOnIdle: true });
}

/** An in-memory PGlite shared by the file (creating one costs seconds of WASM start-up). */
export function pgliteDatabase(): Promise<PgDatabase> {
  embedded ??= PGlite.create().then((instance) => fromPglite(instance));
  return embedded;
}

const idle = new WeakMap<PgDatabase, string[]>();

/**
 * A schema for one harness, empty: a reused one when a disposed harness left one (emptying
 * rows costs a round trip where creating the tables and functions costs a few hundred
 * milliseconds), else a fresh name the first call of a transport or store migrates.
 */
export async function takeSchema(db: PgDatabase): Promise<string> {
  const reused = idle.get(db)?.pop();
  if (reused !== undefined) return reused;
  return `lh_test_${process.pid}_${++schemas}`;
}

/**
 * Empties a schema a harness used (every row but the migration record; every
 * sequence back to its start, so seqs, claim order and outbox seqs count from 1 again) and
 * keeps it for the next harness, which finds it as a new database would be: with a new origin.
 */
export async function releaseSchema(db: PgDatabase, schema: string): Promise<void> {
  await db.query(`DO $$
    DECLARE r record;
    BEGIN
      FOR r IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = '${schema}' AND c.relkind IN ('r', 'S') AND c.relname <> 'lh_migrations' LOOP
        IF r.relname = 'lh_origin' THEN
          EXECUTE format('UPDATE %I.lh_origin SET origin = replace(gen_random_uuid()::text, ''-'', '''')', '${schema}');
        ELSIF r.relkind = 'r' THEN
          EXECUTE format('DELETE FROM %I.%I', '${schema}', r.relname);
        ELSE
          PERFORM setval(format('%I.%I', '${schema}', r.relname)::regclass, 1, false);
        END IF;
      END LOOP;
    END $$`);
  const list = idle.get(db) ?? [];
  list.push(schema);
  idle.set(db, list);
}

/**
 * Waits until `check` holds, for something the server does on its own time (a notice crossing
 * connections, a backend starting to wait for a lock, statistics being sent), checking every
 * 10 ms for up to `ms`: on a loaded machine that is seconds, not milliseconds. Never throws on
 * running out: the caller asserts what it waited for, which then fails with its own message.
 */
export async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
}
