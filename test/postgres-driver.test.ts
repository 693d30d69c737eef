/**
 * The node-postgres driver's two speed measures, on the run's real server: calls run as named
 * prepared statements (unless turned off), and an ack's change notice is sent after the ack
 * committed, outside it — heard at once by listeners of the same driver, through LISTEN by
 * everyone else, and never by a listener of the same driver twice for one change.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ClosedError, StorageError } from '../src/errors.js';
import { toPgStorageError } from '../src/postgres/driver.js';
import { fromPg } from '../src/postgres/pg.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { newServerPool, until } from './support/postgres.js';
import { pgUrl } from './support/servers.js';

// This file needs the run's PostgreSQL server: started here, before any test (pools and sockets take its URL at once).
await pgUrl();

const pools: pg.Pool[] = [];
const schemas: string[] = [];
const pool = (max = 1): pg.Pool => {
  const p = newServerPool(max);
  pools.push(p);
  return p;
};
const schema = (): string => {
  const name = `lh_driver_${process.pid}_${schemas.length}`;
  schemas.push(name);
  return name;
};

afterEach(async () => {
  const admin = pool();
  for (const s of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

describe('fromPg', () => {
  it('validates its options', () => {
    const p = pool();
    expect(() => fromPg(p, null as never)).toThrow(TypeError);
    expect(() => fromPg(p, 'yes' as never)).toThrow('options must be an object');
    expect(() => fromPg(p, { preparedStatements: 1 as never })).toThrow('options.preparedStatements must be a boolean, got number');
    expect(() => fromPg(p, { preparedStatement: false } as never)).toThrow('options has no option "preparedStatement"; did you mean "preparedStatements"?');
  });

  it('runs calls as prepared statements on each connection, or not when told', async () => {
    const prepared = pool(1);
    const s = schema();
    const t = new PostgresTransport(fromPg(prepared), { schema: s });
    await t.publish('g', 1);
    await t.ack((await t.claim('w', 1000))!);
    const count = async (p: pg.Pool) => Number((await p.query(`SELECT count(*) AS n FROM pg_prepared_statements WHERE name LIKE 'lh\\_%'`)).rows[0].n);
    expect(await count(prepared)).toBeGreaterThanOrEqual(3);

    const plain = pool(1);
    const u = new PostgresTransport(fromPg(plain, { preparedStatements: false }), { schema: s });
    await u.publish('g', 2);
    const lease = (await u.claim('w', 1000))!;
    expect(lease.event).toBe(2);
    await u.ack(lease);
    expect(await count(plain)).toBe(0);
    await t.close();
    await u.close();
  });

  it('tells its own listeners at once and other drivers through LISTEN, each once per change', async () => {
    const s = schema();
    const admin = pool();
    const mine = fromPg(pool(3));
    const other = fromPg(pool(3));
    const publisher = new PostgresTransport(mine, { schema: s });
    const sameDriver = new PostgresTransport(mine, { schema: s });
    const elsewhere = new PostgresTransport(other, { schema: s });
    try {
      await publisher.stats(); // migrates before anybody listens
      let heardHere = 0;
      let heardThere = 0;
      sameDriver.onChange(() => heardHere++);
      elsewhere.onChange(() => heardThere++);
      // onChange starts LISTEN in the background: wait until both drivers' listening connections
      // ran it (their last statement), so every notice from here on reaches both, and no earlier
      // one is still on its way (no warm-up publishes whose notices could arrive late).
      const [{ channel }] = (await admin.query(`SELECT 'lh_' || c.oid AS channel FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'lh_q' || (SELECT id FROM "${s}".lh_queues WHERE name = 'default') || '_claims'`, [s])).rows;
      const listening = async () => Number((await admin.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'idle' AND query = $1`, [`LISTEN ${channel}`])).rows[0].n);
      await until(async () => (await listening()) === 2);
      expect(await listening()).toBe(2);

      // A publish NOTIFYs in its own transaction: every listening connection hears it once, this
      // driver's too (nobody was told locally: its listeners wait for LISTEN).
      await publisher.publish('g', 1);
      await until(() => heardHere > 0 && heardThere > 0);
      expect([heardHere, heardThere]).toEqual([1, 1]);
      // An ack's notice is the one the driver sends after the commit, outside the ack's transaction.
      const lease = (await publisher.claim('w', 60_000))!;
      await publisher.ack(lease);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(heardHere).toBe(2); // told at once, before any round trip
      await until(() => heardThere > 1);
      expect(heardThere).toBe(2);
      // The ack's notice comes back to this driver through LISTEN too: it must be skipped, not heard
      // again. It committed before the next publish's (the other driver heard it), so it reaches
      // this driver's listening connection first: once that publish is heard here, an echo that
      // was not skipped would have been counted.
      await elsewhere.publish('g', 2);
      await until(() => heardHere > 2 && heardThere > 2);
      expect([heardHere, heardThere]).toEqual([3, 3]);
    } finally {
      for (const t of [publisher, sameDriver, elsewhere]) await t.close();
      await mine.close();
      await other.close();
    }
  });
});

describe('PostgresTransport and a LISTEN set up while a change commits', () => {
  it('tells its listeners of a change whose notice LISTEN began too late to hear', async () => {
    // The order a conformance run once met by chance, made certain here: the publish commits (its
    // NOTIFY goes out to nobody), then LISTEN runs and is established, and only then does the
    // publish return. Its notice never comes through LISTEN, so the transport must tell its
    // listeners itself.
    const s = schema();
    const real = fromPg(pool(3));
    let gated = false;
    let committed!: () => void;
    const afterCommit = new Promise<void>((resolve) => (committed = resolve));
    let established!: () => void;
    const listenDone = new Promise<void>((resolve) => (established = resolve));
    const db: typeof real = {
      ...real,
      async listen(channel, onNotice) {
        if (gated) await afterCommit;
        const stop = await real.listen(channel, onNotice);
        if (gated) established();
        return stop;
      },
      async query<R>(text: string, params?: readonly unknown[]): Promise<R[]> {
        const rows = await real.query<R>(text, params);
        if (gated && text.includes('lh_publish')) {
          committed();
          await listenDone;
          // Let the transport see its LISTEN established before the publish goes on.
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
        return rows;
      },
    };
    const t = new PostgresTransport(db, { schema: s });
    try {
      await t.stats(); // migrates and opens the queue before the gate
      gated = true;
      let heard = 0;
      t.onChange(() => heard++);
      await t.publish('g', 1);
      await until(() => heard > 0, 5_000);
      expect(heard).toBeGreaterThan(0);
    } finally {
      await t.close();
      await real.close();
    }
  });
});

describe('fromPg and conflicts the server breaks', () => {
  it('runs an autocommit statement the server aborted to break a deadlock again, and it succeeds', async () => {
    const admin = pool(2);
    const s = schema();
    await admin.query(`CREATE SCHEMA ${s}`);
    await admin.query(`CREATE TABLE ${s}.rows (id int PRIMARY KEY, n int NOT NULL)`);
    await admin.query(`INSERT INTO ${s}.rows VALUES (1, 0), (2, 0)`);
    // One statement that locks row $1, then row $2: its own transaction, as every leasehold call is.
    await admin.query(`CREATE FUNCTION ${s}.bump_both(a int, b int) RETURNS int LANGUAGE sql AS $$
      UPDATE ${s}.rows SET n = n + 1 WHERE id = a; UPDATE ${s}.rows SET n = n + 1 WHERE id = b; SELECT 1 $$`);
    const db = fromPg(pool(1));
    const other = await admin.connect();
    try {
      // Each waiting backend checks for a deadlock after its own deadlock_timeout (1 s): on a
      // loaded machine the later waiter's check could run first and make it the victim. A long
      // timeout here leaves the check, and the abort, to the statement under test. (Superuser
      // only, as the project's throwaway cluster connects; elsewhere the server's default stays.)
      await other.query(`SET deadlock_timeout = '60s'`).catch((error: { code?: string }) => {
        if (error.code !== '42501') throw error;
      });
      await other.query('BEGIN');
      await other.query(`UPDATE ${s}.rows SET n = n + 1 WHERE id = 1`);
      // The statement locks row 2 and waits for row 1, held by the other transaction…
      const call = db.query(`SELECT ${s}.bump_both($1, $2) AS r`, [2, 1]);
      const waiting = async () =>
        Number((await admin.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%bump_both%'`)).rows[0].n) > 0;
      await until(waiting);
      expect(await waiting()).toBe(true);
      const deadlocksBefore = Number((await admin.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
      // …which now wants row 2: a deadlock. The statement waited first, so its deadlock check runs
      // first and the server aborts it (nothing of it applied); the other transaction goes on.
      await other.query(`UPDATE ${s}.rows SET n = n + 1 WHERE id = 2`);
      await other.query('COMMIT');
      await expect(call).resolves.toEqual([{ r: 1 }]);
      // Each row was changed once by each party: the aborted run left nothing behind.
      expect((await admin.query(`SELECT id, n FROM ${s}.rows ORDER BY id`)).rows).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }]);
      // And the conflict did happen (the server counts the deadlocks it broke; its statistics may lag).
      // (A backend sends its counts at most once a second, later while idle: wait, do not assume.)
      let deadlocks = deadlocksBefore;
      await until(async () => {
        await admin.query('SELECT pg_stat_clear_snapshot()');
        deadlocks = Number((await admin.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
        return deadlocks !== deadlocksBefore;
      });
      expect(deadlocks).toBe(deadlocksBefore + 1);
    } finally {
      other.release(true);
      await db.close();
    }
  });

  it('does not run again a statement that failed for any other reason', async () => {
    const admin = pool(1);
    const s = schema();
    await admin.query(`CREATE SCHEMA ${s}`);
    await admin.query(`CREATE TABLE ${s}.calls (n int)`);
    // Counts its runs in a sequence (not rolled back with the failure), then fails with a unique violation.
    await admin.query(`CREATE SEQUENCE ${s}.runs`);
    await admin.query(`CREATE FUNCTION ${s}.fail(x int) RETURNS int LANGUAGE plpgsql AS $$
      BEGIN PERFORM nextval('${s}.runs'); RAISE unique_violation USING MESSAGE = 'no'; END $$`);
    const db = fromPg(pool(1));
    await expect(db.query(`SELECT ${s}.fail($1)`, [1])).rejects.toThrow('no');
    expect(Number((await admin.query(`SELECT last_value FROM ${s}.runs`)).rows[0].last_value)).toBe(1);
    await db.close();
  });
});

describe('errors a user can act on', () => {
  const refused = (call: Promise<unknown>) => call.then(() => null, (error: unknown) => error);

  it('a missing database, a missing privilege and an ended pool are StorageError or ClosedError saying what to do', async () => {
    const url = new URL(await pgUrl());
    url.pathname = `/lh_no_such_database_${process.pid}`;
    const missing = new pg.Pool({ connectionString: url.href, max: 1 });
    pools.push(missing);
    const noDatabase = await refused(new PostgresTransport(fromPg(missing)).stats());
    expect(noDatabase).toBeInstanceOf(StorageError);
    expect(noDatabase).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringContaining('no such database') });

    const role = `lh_no_privilege_${process.pid}`;
    const admin = pool();
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    try {
      const as = new URL(await pgUrl());
      as.username = role;
      const weak = new pg.Pool({ connectionString: as.href, max: 1 });
      const denied = await refused(new PostgresTransport(fromPg(weak), { schema: schema() }).stats());
      await weak.end();
      expect(denied).toBeInstanceOf(StorageError);
      expect(denied).toMatchObject({ code: 'ACCESS_DENIED', message: expect.stringContaining('Grant it USAGE and CREATE') });
    } finally {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
    }

    const ended = newServerPool(1);
    const transport = new PostgresTransport(fromPg(ended), { schema: schema() });
    await transport.stats();
    await ended.end();
    const closed = await refused(transport.stats());
    expect(closed).toBeInstanceOf(ClosedError);
    expect(String(closed)).toContain('close the transports and stores first');
  });

  it('a refused password is ACCESS_DENIED (the run server trusts every local login, so the error is made here)', () => {
    const error = Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' });
    expect(toPgStorageError(error, '127.0.0.1:5432/app')).toMatchObject({ name: 'StorageError', code: 'ACCESS_DENIED', cause: error });
  });
});
