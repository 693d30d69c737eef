import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClosedError, StorageError } from '../src/errors.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { migrate, SCHEMA_VERSION } from '../src/sqlite/schema.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';

const dir = mkdtempSync(join(tmpdir(), 'leasehold-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const drivers: [string, () => Promise<SqlDatabase>][] = [
  ['sqlite-wasm', () => openWasmDatabase()],
  ['better-sqlite3', () => openBetterSqliteDatabase(join(dir, `${Math.random().toString(36).slice(2)}.db`))],
];

describe.each(drivers)('SQL driver: %s', (_name, open) => {
  it('commits a BEGIN IMMEDIATE transaction', async () => {
    const db = await open();
    db.exec('CREATE TABLE t (v INTEGER)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const changed = db.transaction(() => insert.run(1) + insert.run(2));
    expect(changed).toBe(2);
    expect(db.prepare('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 2 }]);
    db.close();
  });

  it('rolls the whole transaction back when its body throws', async () => {
    const db = await open();
    db.exec('CREATE TABLE t (v INTEGER)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    expect(() =>
      db.transaction(() => {
        insert.run(1);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    // and the connection is usable afterwards
    db.transaction(() => insert.run(3));
    expect(db.prepare('SELECT v FROM t').get()).toEqual({ v: 3 });
    db.close();
  });

  it('binds and returns numbers beyond 64-bit integers faithfully', async () => {
    const db = await open();
    const select = db.prepare('SELECT ? AS v');
    for (const value of [1e300, -1e300, 2 ** 63, 8.64e15, 1.5, Number.MAX_VALUE]) expect(select.get(value)).toEqual({ v: value });
    db.close();
  });

  it('refuses a nested transaction', async () => {
    const db = await open();
    expect(() => db.transaction(() => db.transaction(() => 1))).toThrow(/nested transaction/);
    db.close();
  });

  it('rolls back a failing savepoint alone and commits the rest of its transaction', async () => {
    const db = await open();
    db.exec('CREATE TABLE t (v INTEGER)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const outcome = db.transaction(() => {
      insert.run(1);
      const caught = (() => {
        try {
          return db.savepoint!(() => {
            insert.run(2);
            throw new Error('call failed');
          });
        } catch (error) {
          return (error as Error).message;
        }
      })();
      db.savepoint!(() => db.savepoint!(() => insert.run(3)));
      return caught;
    });
    expect(outcome).toBe('call failed');
    expect(db.prepare('SELECT v FROM t ORDER BY v').all()).toEqual([{ v: 1 }, { v: 3 }]);
    expect(() => db.savepoint!(() => 1)).toThrow(/outside a transaction/);
    db.close();
  });

  it('fails the whole transaction when SQLite ended it under a savepoint, running nothing outside it', async () => {
    const db = await open();
    db.exec('CREATE TABLE t (v INTEGER)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const attempt = () =>
      db.transaction(() => {
        insert.run(1);
        // A statement that ends the transaction stands in for SQLite's own rollback after an I/O error.
        expect(() => db.savepoint!(() => db.exec('ROLLBACK'))).toThrow();
        expect(() => db.savepoint!(() => insert.run(2))).toThrow();
      });
    expect(attempt).toThrow();
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    db.transaction(() => insert.run(4));
    expect(db.prepare('SELECT v FROM t').all()).toEqual([{ v: 4 }]);
    db.close();
  });

  it('creates the schema once, at the current version, idempotently', async () => {
    const db = await open();
    migrate(db);
    migrate(db);
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'lh_%' ORDER BY name").all<{ name: string }>();
    expect(tables.map((t) => t.name)).toContain('lh_messages');
    expect(tables.map((t) => t.name)).toContain('lh_executions');
    db.close();
  });

  it('reports use after close as ClosedError', async () => {
    const db = await open();
    const stmt = db.prepare('SELECT 1 AS one');
    db.close();
    db.close(); // idempotent
    expect(db.closed).toBe(true);
    expect(() => stmt.get()).toThrow(ClosedError);
    expect(() => db.prepare('SELECT 1')).toThrow(ClosedError);
  });
});

describe('better-sqlite3 driver', () => {
  it('rejects a file that is not a database with a StorageError saying so', async () => {
    const path = join(dir, 'not-a-database.db');
    writeFileSync(path, 'this is plain text, not SQLite '.repeat(100));
    const error = await openBetterSqliteDatabase(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('STORAGE_CORRUPT');
    expect((error as StorageError).message).toMatch(/not a valid SQLite database/);
  });

  it('opens the file in WAL mode', async () => {
    const db = await openBetterSqliteDatabase(join(dir, 'wal.db'));
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    db.close();
  });

  it('rejects bad options before opening anything', async () => {
    await expect(openBetterSqliteDatabase('')).rejects.toThrow(TypeError);
    await expect(openBetterSqliteDatabase(join(dir, 'x.db'), { durability: 'fast' as 'full' })).rejects.toThrow(RangeError);
  });
});
