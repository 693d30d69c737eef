/**
 * The driver seam's capabilities in place of raw PRAGMAs, on both Node drivers: a schema version
 * per component, kept inside transactions; commit watching across connections to one file; the
 * migration runner every component shares; a database written by a newer leasehold refused as
 * SCHEMA_TOO_NEW; and a file written by leasehold at schema version 5 (one migration list, the
 * host's journal in it) opening unchanged, not migrated again. The Durable Object driver's side
 * is in durable-object-driver.test.ts, PostgreSQL's in postgres-schema.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { HOST_SCHEMA_VERSION } from '../src/remote/journal.js';
import type { CallMessage } from '../src/browser/protocol.js';
import { ClosedError, SchemaTooNewError, StorageError } from '../src/errors.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { migrateComponent } from '../src/sqlite/migrate.js';
import { SCHEMA_VERSION } from '../src/sqlite/schema.js';
import { CORE_TRIGGERS } from '../src/sqlite/sql/triggers.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Lease, TransportSnapshot } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { sqliteFileDrivers } from './support/sqlite-drivers.js';
import { asReadToday } from './support/snapshots.js';

const scratch = scratchDir();
afterAll(() => scratch.remove());

const drivers = sqliteFileDrivers(scratch.dir);

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

/** `db`, with every exec() it is given recorded: a migration step is an exec. */
function recordingExecs(db: SqlDatabase): { db: SqlDatabase; execs: string[] } {
  const execs: string[] = [];
  const recording = Object.assign(Object.create(db) as SqlDatabase, {
    exec: (sql: string) => {
      execs.push(sql);
      db.exec(sql);
    },
  });
  return { db: recording, execs };
}

const tables = (db: SqlDatabase) => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string }>().map((t) => t.name);

describe.each(drivers)('schema versions and commit watching: %s', (_name, driver) => {
  /** Two connections to one new file. */
  const pair = async (): Promise<[SqlDatabase, SqlDatabase]> => {
    const path = driver.path();
    return [await driver.open(path), await driver.open(path)];
  };

  it('keeps a schema version per component, written inside transactions and undone with them', async () => {
    const db = await driver.open();
    expect(db.schemaVersion('core')).toBe(0);
    expect(db.schemaVersion('host')).toBe(0);
    // Reading a version of a database that has none writes nothing.
    expect(tables(db)).toEqual([]);
    db.transaction(() => {
      db.setSchemaVersion('core', 5);
      db.setSchemaVersion('host', 2);
    });
    expect([db.schemaVersion('core'), db.schemaVersion('host'), db.schemaVersion('other')]).toEqual([5, 2, 0]);
    // The core's where every leasehold before kept its one number; the others in a table.
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 5 });
    expect(db.prepare('SELECT component, version FROM lh_schema_versions').all()).toEqual([{ component: 'host', version: 2 }]);

    expect(() =>
      db.transaction(() => {
        db.setSchemaVersion('core', 6);
        db.setSchemaVersion('other', 1);
        throw new Error('undo');
      }),
    ).toThrow('undo');
    expect([db.schemaVersion('core'), db.schemaVersion('other')]).toEqual([5, 0]);
    db.transaction(() => {
      expect(() =>
        db.savepoint!(() => {
          db.setSchemaVersion('host', 3);
          throw new Error('this call only');
        }),
      ).toThrow('this call only');
    });
    expect(db.schemaVersion('host')).toBe(2);
    db.close();
  });

  it('reads 0 again after the transaction that created the version table rolled back, and can write it later', async () => {
    const db = await driver.open();
    expect(() =>
      db.transaction(() => {
        db.setSchemaVersion('host', 1);
        expect(db.schemaVersion('host')).toBe(1);
        throw new Error('undo');
      }),
    ).toThrow('undo');
    expect(tables(db)).toEqual([]);
    expect(db.schemaVersion('host')).toBe(0);
    db.transaction(() => db.setSchemaVersion('host', 4));
    expect(db.schemaVersion('host')).toBe(4);
    db.close();
  });

  it('refuses a version write outside a transaction, bad arguments, and use after close', async () => {
    const db = await driver.open();
    expect(() => db.setSchemaVersion('core', 1)).toThrow(/outside a transaction/);
    expect(() => db.schemaVersion('')).toThrow(TypeError);
    expect(() => db.schemaVersion(42 as never)).toThrow(TypeError);
    db.transaction(() => {
      expect(() => db.setSchemaVersion('core', -1)).toThrow(RangeError);
      expect(() => db.setSchemaVersion('core', 1.5)).toThrow(RangeError);
      expect(() => db.setSchemaVersion('core', 2 ** 31)).toThrow(RangeError);
      expect(() => db.setSchemaVersion('core', '1' as never)).toThrow(TypeError);
      expect(() => db.setSchemaVersion('', 1)).toThrow(TypeError);
    });
    expect(db.schemaVersion('core')).toBe(0);
    db.close();
    expect(() => db.schemaVersion('core')).toThrow(ClosedError);
    expect(() => db.transaction(() => db.setSchemaVersion('core', 1))).toThrow(ClosedError);
  });

  it('has no commit watch on a database in memory, which no other connection can reach', async () => {
    const db = await driver.memory();
    expect(db.watchCommits).toBeUndefined();
    db.close();
  });

  describe('on a manual timer', () => {
    // The poll's timer is taken when the database is opened, so the fake comes first.
    const onManualTimer = (body: () => Promise<void>) => async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      try {
        await body();
      } finally {
        vi.useRealTimers();
      }
    };

    it('tells every listener of another connection\u2019s commit, not of its own, on one timer until the last leaves', onManualTimer(async () => {
      const [a, b] = await pair();
      a.exec('CREATE TABLE t (v INTEGER)');
      const fromA = a.prepare('INSERT INTO t (v) VALUES (?)');
      const fromB = b.prepare('INSERT INTO t (v) VALUES (?)');
      const heard: string[] = [];
      const stopOne = a.watchCommits!(() => heard.push('one'));
      const stopTwo = a.watchCommits!(() => heard.push('two'));
      expect(vi.getTimerCount()).toBe(1);
      a.transaction(() => fromA.run(1));
      vi.advanceTimersByTime(50);
      expect(heard).toEqual([]);
      b.transaction(() => fromB.run(2));
      vi.advanceTimersByTime(50);
      expect(heard).toEqual(['one', 'two']);
      vi.advanceTimersByTime(500);
      expect(heard).toHaveLength(2);
      stopOne();
      stopOne();
      b.transaction(() => fromB.run(3));
      vi.advanceTimersByTime(50);
      expect(heard).toEqual(['one', 'two', 'two']);
      stopTwo();
      expect(vi.getTimerCount()).toBe(0);
      b.transaction(() => fromB.run(4));
      vi.advanceTimersByTime(500);
      expect(heard).toHaveLength(3);
      a.close();
      b.close();
    }));

    it('counts the same function subscribed twice as two, and a listener that throws stops no other', onManualTimer(async () => {
      const [a, b] = await pair();
      b.exec('CREATE TABLE t (v INTEGER)');
      let calls = 0;
      const listener = () => void calls++;
      const first = a.watchCommits!(listener);
      a.watchCommits!(listener);
      a.watchCommits!(() => {
        throw new Error('listener failed');
      });
      first();
      b.transaction(() => b.prepare('INSERT INTO t (v) VALUES (1)').run());
      expect(() => vi.advanceTimersByTime(50)).toThrow('listener failed');
      expect(calls).toBe(1);
      expect(() => a.watchCommits!(5 as never)).toThrow(TypeError);
      a.close();
      b.close();
    }));

    it('watches nothing in exclusive locking mode, and stops when its connection closes', onManualTimer(async () => {
      const exclusive = await driver.open(driver.path());
      exclusive.exec('PRAGMA locking_mode = EXCLUSIVE');
      exclusive.watchCommits!(() => {})();
      exclusive.watchCommits!(() => {});
      expect(vi.getTimerCount()).toBe(0);
      exclusive.close();

      const closing = await driver.open(driver.path());
      closing.watchCommits!(() => {});
      expect(vi.getTimerCount()).toBe(1);
      closing.close();
      vi.advanceTimersByTime(50);
      expect(vi.getTimerCount()).toBe(0);
      expect(() => closing.watchCommits!(() => {})).toThrow(ClosedError);
    }));
  });

  it('wakes a transport\u2019s listener on another connection\u2019s publish, through watchCommits', async () => {
    const [a, b] = await pair();
    const watching = new SqliteTransport(a);
    let heard = 0;
    const stop = watching.onChange(() => void heard++);
    await new SqliteTransport(b).publish('g', 1);
    await expect.poll(() => heard).toBeGreaterThan(0);
    stop();
    a.close();
    b.close();
  });
});

describe.each(drivers)('migrations per component: %s', (_name, driver) => {
  it('applies each step once, in order, with its version; an empty step runs nothing', async () => {
    const { db, execs } = recordingExecs(await driver.open());
    const steps = ['CREATE TABLE a (x)', '', 'CREATE TABLE b (y)'];
    migrateComponent(db, 'app', steps);
    expect(execs).toEqual(['CREATE TABLE a (x)', 'CREATE TABLE b (y)']);
    expect(db.schemaVersion('app')).toBe(3);
    expect(db.schemaVersion('core')).toBe(0);
    migrateComponent(db, 'app', steps);
    migrateComponent(db, 'app', [...steps, 'CREATE TABLE c (z)']);
    expect(execs).toEqual(['CREATE TABLE a (x)', 'CREATE TABLE b (y)', 'CREATE TABLE c (z)']);
    expect(db.schemaVersion('app')).toBe(4);
    db.close();
  });

  it('rolls back a failing step with its version, keeping the steps before it', async () => {
    const db = await driver.open();
    expect(() => migrateComponent(db, 'app', ['CREATE TABLE a (x)', 'CREATE TABLE b (y); INSERT INTO nowhere VALUES (1)'])).toThrow(/nowhere/);
    expect(db.schemaVersion('app')).toBe(1);
    expect(tables(db)).toEqual(['a', 'lh_schema_versions']);
    expect(() => migrateComponent(db, '', [])).toThrow(TypeError);
    expect(() => migrateComponent(db, 'app', [1 as never])).toThrow(TypeError);
    db.close();
  });

  it('refuses a database of a newer leasehold: SCHEMA_TOO_NEW with both versions, not a storage error; nothing changed', async () => {
    const db = await driver.open();
    db.transaction(() => db.setSchemaVersion('core', SCHEMA_VERSION + 1));
    const error = (() => {
      try {
        new SqliteTransport(db);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).not.toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'SCHEMA_TOO_NEW', component: 'core', found: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION });
    expect((error as Error).message).toContain(`version ${SCHEMA_VERSION + 1} (core), newer than the ${SCHEMA_VERSION} this leasehold supports`);
    expect((error as Error).message).toMatch(/upgrade leasehold/i);
    expect((error as Error).message).not.toMatch(/restore|corrupt|damaged/i);
    expect(() => new SqliteStore(db)).toThrow(SchemaTooNewError);
    expect(tables(db)).toEqual([]);
    expect(db.schemaVersion('core')).toBe(SCHEMA_VERSION + 1);
    db.close();
  });

  it('refuses a host journal of a newer leasehold in the host, naming its component', async () => {
    const db = await driver.open();
    db.transaction(() => db.setSchemaVersion('host', HOST_SCHEMA_VERSION + 1));
    expect(() => new HostCore(db)).toThrow(expect.objectContaining({ name: 'SchemaTooNewError', component: 'host', found: HOST_SCHEMA_VERSION + 1, supported: HOST_SCHEMA_VERSION }));
    db.close();
  });

  it('gives the journal only to a database a host serves', async () => {
    const plain = await driver.open();
    new SqliteTransport(plain);
    new SqliteStore(plain);
    expect(tables(plain)).not.toContain('lh_calls');
    expect(plain.schemaVersion('host')).toBe(0);
    plain.close();
    const hosted = await driver.open();
    new HostCore(hosted);
    expect(tables(hosted)).toContain('lh_calls');
    expect([hosted.schemaVersion('core'), hosted.schemaVersion('host')]).toEqual([SCHEMA_VERSION, HOST_SCHEMA_VERSION]);
    hosted.close();
  });
});

describe.each(drivers)('a database written by leasehold at schema version 5, with the host journal in its one list: %s', (_name, driver) => {
  it('opens migrated by the later steps only; its journal still answers retried calls', async () => {
    const written = JSON.parse(readFileSync(fixture('schema-v5.json'), 'utf8')) as { now: number; snapshot: TransportSnapshot; lease: Lease; journaled: { id: string; answer: unknown } };
    const path = await driver.place(new Uint8Array(readFileSync(fixture('schema-v5.db'))));
    const raw = await driver.open(path);
    expect(raw.schemaVersion('core')).toBe(5);
    const { db, execs } = recordingExecs(raw);
    const call = (target: CallMessage['target'], method: string, args: unknown[], id: string, now = written.now): CallMessage => ({ kind: 'call', id, target, method, args, now });

    const core = new HostCore(db);
    // The core dropped version 5's triggers, ran only its table steps after 5 (holds, pauses,
    // after, last errors, origin and counters, revisions, coalescing windows; the claim-order step
    // changed no table), then
    // created today's triggers; the host's one step found its table there already.
    const drops = execs.filter((sql) => sql.startsWith('DROP TRIGGER'));
    expect(drops.map((sql) => sql.match(/"(\w+)"/)![1]).sort()).toEqual(['lh_claim_counted', 'lh_message_removed', 'lh_seq_taken']);
    const steps = execs.slice(drops.length, drops.length + 7);
    expect(steps[0]).toMatch(/ALTER TABLE lh_groups ADD COLUMN held_seq/);
    expect(steps[1]).toMatch(/ALTER TABLE lh_groups ADD COLUMN paused/);
    expect(steps[2]).toMatch(/ALTER TABLE lh_messages ADD COLUMN waits/);
    expect(steps[3]).toMatch(/ALTER TABLE lh_messages ADD COLUMN last_error/);
    expect(steps[4]).toMatch(/CREATE TABLE lh_origin/);
    expect(steps[5]).toMatch(/ALTER TABLE lh_messages ADD COLUMN revision/);
    expect(steps[6]).toMatch(/ALTER TABLE lh_messages ADD COLUMN debounce_deadline/);
    expect(execs.slice(drops.length + 7, -1)).toEqual(CORE_TRIGGERS.map((trigger) => trigger.sql));
    expect(execs.at(-1)).toMatch(/CREATE TABLE IF NOT EXISTS lh_calls/);
    expect([raw.schemaVersion('core'), raw.schemaVersion('host')]).toEqual([SCHEMA_VERSION, 1]);
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });

    // A call retried after the owner changed is answered from the journal it wrote before.
    expect(await core.serve(call('transport', 'claim', ['w1', 60_000, undefined], written.journaled.id))).toEqual(written.journaled.answer);
    expect(await core.serve(call('transport', 'inspect', [], 'inspect-1', written.snapshot.now))).toEqual(asReadToday(written.snapshot));
    expect(await core.serve(call('store', 'load', ['order-1'], 'load-1'))).toMatchObject({ id: 'order-1', version: 1, status: 'new' });
    // And it carries on: the old lease acks, a new call is journaled and answered again.
    await core.serve(call('transport', 'ack', [written.lease], 'ack-1'));
    const publish = call('transport', 'publish', ['g9', 'new', undefined], 'pub-new');
    const seq = await core.serve(publish);
    expect(await core.serve(publish)).toBe(seq);
    // The origin step numbered the queued messages by their seq, and the counter goes on from the last seq.
    const claimed = (await core.serve(call('transport', 'claimMany', ['w2', 60_000, { max: 100 }], 'claim-all'))) as Lease[];
    expect(claimed.map((l) => l.counter)).toEqual(claimed.map((l) => l.seq));
    expect(claimed.map((l) => l.seq)).toContain(seq);
    expect(claimed[0]!.origin).toMatch(/^[0-9a-f]{32}$/);
    await core.close();

    const again = await driver.open(path);
    const reopened = recordingExecs(again);
    new HostCore(reopened.db);
    expect(reopened.execs).toEqual([]);
    again.close();
  });
});
