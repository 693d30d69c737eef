import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { StoreConflictError } from '../src/errors.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { dumpStore } from './conformance/store.js';

const dir = mkdtempSync(join(tmpdir(), 'leasehold-store-sql-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opened: SqlDatabase[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) db.close();
});
let files = 0;

const drivers: [string, () => Promise<SqlDatabase>][] = [
  ['sqlite-wasm', () => openWasmDatabase()],
  ['better-sqlite3', () => openBetterSqliteDatabase(join(dir, `s-${++files}.db`))],
];

describe.each(drivers)('SqliteStore on %s', (_name, openDb) => {
  const open = async (): Promise<SqlDatabase> => {
    const db = await openDb();
    opened.push(db);
    return db;
  };

  it('rolls a whole commit back when a statement fails half-way', async () => {
    const db = await open();
    const store = new SqliteStore(db);
    const exe = { id: 'a', version: 0, n: 1 };
    await store.commit(exe, { emits: [{ targetId: null, event: 'first' }], trace: { n: 1 } });
    const scope = { ids: ['a'], events: [['a', 'e1']] as const };
    const before = await dumpStore(store, scope);
    // A real SQLite failure at the spawn insert, after the execution, outbox and timers were written.
    db.exec("CREATE TEMP TRIGGER refuse_spawns BEFORE INSERT ON lh_spawns BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    exe.n = 2;
    await expect(
      store.commit(exe, {
        emits: [{ targetId: null, event: 'second' }],
        processedEventId: 'e1',
        timers: [{ action: 'schedule', path: 't', fireAt: 5 }],
        spawns: [{ childId: 'kid', rootPath: 'r', context: {} }],
        trace: { n: 2 },
      }),
    ).rejects.toThrow(/disk says no/);
    expect(exe.version).toBe(1);
    expect(await dumpStore(store, scope)).toEqual(before);
    db.exec('DROP TRIGGER refuse_spawns');
    await store.commit(exe, { spawns: [{ childId: 'kid', rootPath: 'r', context: {} }] });
    expect(exe.version).toBe(2);
  });

  it('leaves the database open on close, for whoever shares it', async () => {
    const db = await open();
    const store = new SqliteStore(db);
    await store.save({ id: 'a', version: 0 });
    await store.close();
    expect(db.closed).toBe(false);
    const again = new SqliteStore(db);
    expect(await again.load('a')).toEqual({ id: 'a', version: 1 });
  });

  it('shares one database with a SqliteTransport without either disturbing the other', async () => {
    const db = await open();
    const clock = new ManualClock(1_000);
    const transport = new SqliteTransport<{ type: string }>(db, { clock: clock.now });
    const store = new SqliteStore(db);
    await transport.publish('order-1', { type: 'Pay' });
    await store.commit({ id: 'order-1', version: 0 }, { emits: [{ targetId: 'billing', event: { type: 'Charge' } }] });
    const lease = await transport.claim('worker', 1_000);
    expect(lease?.event).toEqual({ type: 'Pay' });
    expect(await store.pendingOutbox()).toEqual([{ seq: 1, targetId: 'billing', event: { type: 'Charge' } }]);
  });
});

describe('SqliteStore on two connections to one file', () => {
  it('gives the stale writer on the other connection a StoreConflictError', async () => {
    const file = join(dir, 'shared.db');
    const [db1, db2] = [await openBetterSqliteDatabase(file), await openBetterSqliteDatabase(file)];
    opened.push(db1, db2);
    const [one, two] = [new SqliteStore(db1), new SqliteStore(db2)];
    await one.save({ id: 'a', version: 0, by: 'one' });
    const mine = (await one.load('a'))!;
    const theirs = (await two.load('a'))!;
    theirs.by = 'two';
    await two.commit(theirs, { emits: [{ targetId: null, event: 'two' }] });
    mine.by = 'one again';
    const error = await one.commit(mine, { emits: [{ targetId: null, event: 'one' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreConflictError);
    expect(error).toMatchObject({ expected: 1, found: 2 });
    expect(await one.load('a')).toEqual({ id: 'a', version: 2, by: 'two' });
    expect((await one.pendingOutbox()).map((e) => e.event)).toEqual(['two']);
  });
});
