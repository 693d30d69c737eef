/**
 * The SQLite schema is what schema/sqlite.sql says, however a database got there: a fresh one,
 * and one upgraded from every file an earlier leasehold wrote that we keep (schema versions 3, 4,
 * 5 and 11), equal it object by object on both Node drivers; a second open of a current
 * database installs nothing; the receiver's tables equal schema/receiver-sqlite.sql; and a drifted trigger fails the comparison with a diff that names
 * it. The Durable Object's side is in durable-object-driver.test.ts, PostgreSQL's in
 * postgres-schema.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { RECEIVER_COMPONENT, sqliteReceipts } from '../src/receiver/sqlite.js';
import { migrateHost } from '../src/remote/journal.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { installSchema } from '../src/sqlite/migrate.js';
import { CORE_SCHEMA, migrate, SCHEMA_VERSION } from '../src/sqlite/schema.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Lease, TransportSnapshot } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { sqliteFileDrivers } from './support/sqlite-drivers.js';
import { dumpSqliteSchema, RECEIVER_SQLITE_SCHEMA_FILE, REGENERATE, schemaDiff, SQLITE_SCHEMA_FILE } from './support/sqlite-schema.js';
import { asReadToday } from './support/snapshots.js';

const scratch = scratchDir();
afterAll(() => scratch.remove());
const drivers = sqliteFileDrivers(scratch.dir);
const checkedIn = readFileSync(new URL(`../${SQLITE_SCHEMA_FILE}`, import.meta.url), 'utf8');
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));

/** Fails with the objects that differ, and what to run when the checked-in file is the stale one. */
function expectSchema(db: SqlDatabase, hint: string): void {
  const diff = schemaDiff(checkedIn, dumpSqliteSchema(db));
  expect(diff, `${hint}\n${diff}`).toBe('');
}

/** `db` with every exec() and version write it is given recorded: what an install does. */
function recording(db: SqlDatabase): { db: SqlDatabase; writes: string[] } {
  const writes: string[] = [];
  const wrapped = Object.assign(Object.create(db) as SqlDatabase, {
    exec: (sql: string) => (writes.push(sql), db.exec(sql)),
    setSchemaVersion: (component: string, version: number) => (writes.push(`version ${component}`), db.setSchemaVersion(component, version)),
  });
  return { db: wrapped, writes };
}

describe.each(drivers)('the SQLite schema as source: %s', (_name, driver) => {
  it('a fresh database equals schema/sqlite.sql', async () => {
    const db = await driver.memory();
    migrate(db);
    migrateHost(db);
    expectSchema(db, `${SQLITE_SCHEMA_FILE} is out of date, or the schema changed by accident: if the change is meant, run \`${REGENERATE}\` and commit the file`);
    db.close();
  });

  it.each(['schema-v3.db', 'schema-v4.db', 'schema-v5.db', 'schema-v11.db'])('a database written at %s, upgraded, equals it too, and keeps its rows', async (file) => {
    const db = await driver.open(await driver.place(fixture(file)));
    const count = () => db.prepare('SELECT (SELECT count(*) FROM lh_messages) + (SELECT count(*) FROM lh_dead_letters) AS n').get<{ n: number }>()!.n;
    const before = count();
    new SqliteTransport(db);
    new SqliteStore(db);
    migrateHost(db);
    expect(db.schemaVersion('core')).toBe(SCHEMA_VERSION);
    expectSchema(db, `${file} upgraded differs from a fresh database: a released table migration was changed, or a step is missing`);
    expect(count()).toBe(before);
    db.close();
  });

  it('a database written at schema version 11 reads as it was written, queue by queue, after its triggers are replaced', async () => {
    const written = JSON.parse(readFileSync(new URL('./fixtures/schema-v11.json', import.meta.url), 'utf8')) as { now: number; snapshot: TransportSnapshot; other: TransportSnapshot; lease: Lease; waiting: number };
    const db = await driver.open(await driver.place(fixture('schema-v11.db')));
    const clock = () => written.now;
    const transport = new SqliteTransport(db, { clock });
    // Snapshots then named no waits: a blocked message's are read from lh_waits, and checked apart.
    const read = async (queue?: string) => {
      const snapshot = await new SqliteTransport(db, { clock, queue }).inspect();
      for (const message of snapshot.groups.flatMap((group) => group.messages)) {
        expect(message.waitsFor.length > 0).toBe(message.state === 'blocked');
        message.waitsFor = [];
      }
      return snapshot;
    };
    expect(await read()).toEqual(asReadToday(written.snapshot));
    expect(await read('other')).toEqual(asReadToday(written.other));
    // The triggers work on its rows: the acked head frees its group, and the lease still holds.
    await transport.ack(written.lease);
    expect((await transport.stats()).queued).toBe(written.snapshot.groups.reduce((n, g) => n + g.messages.length, 0) - 1);
    db.close();
  });

  it('a fresh receiver database equals schema/receiver-sqlite.sql, and a second open writes nothing', async () => {
    const path = driver.path();
    const first = await driver.open(path);
    sqliteReceipts(first);
    const expected = readFileSync(new URL(`../${RECEIVER_SQLITE_SCHEMA_FILE}`, import.meta.url), 'utf8');
    const diff = schemaDiff(expected, dumpSqliteSchema(first, [RECEIVER_COMPONENT]));
    expect(diff, `${RECEIVER_SQLITE_SCHEMA_FILE} is not what the receiver creates: run \`${REGENERATE}\` if the change is meant\n${diff}`).toBe('');
    first.close();
    const again = recording(await driver.open(path));
    sqliteReceipts(again.db);
    expect(again.writes).toEqual([]);
    again.db.close();
  });

  it('installs nothing on a second open of a current database; reinstalls the triggers alone when their source changes', async () => {
    const path = driver.path();
    const first = await driver.open(path);
    migrate(first);
    first.close();

    const again = recording(await driver.open(path));
    new SqliteTransport(again.db);
    new SqliteStore(again.db);
    expect(again.writes).toEqual([]);

    // Another build's triggers (the same tables): only the triggers are dropped and created.
    const changed = { ...CORE_SCHEMA, triggers: CORE_SCHEMA.triggers.map((t) => (t.name === 'lh_waiter_gone' ? { ...t, sql: t.sql.replace('BEGIN', 'BEGIN SELECT 1;') } : t)) };
    const other = recording(await driver.open(path));
    installSchema(other.db, changed);
    const triggers = CORE_SCHEMA.triggers.length;
    expect(other.writes.filter((sql) => sql.startsWith('DROP TRIGGER'))).toHaveLength(triggers);
    expect(other.writes.filter((sql) => sql.startsWith('CREATE TRIGGER'))).toHaveLength(triggers);
    expect(other.writes.filter((sql) => !/^(DROP|CREATE) TRIGGER/.test(sql))).toEqual(['version core operations']);
    // And back: today's source installs today's triggers.
    migrate(other.db);
    migrateHost(other.db);
    expectSchema(other.db, 'reinstalled triggers differ from the source');
    other.db.close();
  });

  it('runs no SQL function in the triggers of a publish, an ack or a dropped group (no statement journal for them)', async () => {
    // SQLite counts any function call as a possible ABORT and then gives a statement that
    // writes several rows a statement journal (see src/sqlite/sql/triggers.ts).
    const db = await driver.memory();
    migrate(db);
    const opcodes = (sql: string) => db.prepare(`EXPLAIN ${sql}`).all<{ opcode: string }>().map((row) => row.opcode);
    for (const sql of [
      "INSERT INTO lh_messages (queue_id, group_id, seq, event, counter) VALUES (1, 'g', 1, '1', 1)",
      'DELETE FROM lh_messages WHERE queue_id = 1',
      'DELETE FROM lh_groups WHERE queue_id = 1',
      'DELETE FROM lh_dead_letters WHERE queue_id = 1',
    ]) {
      expect(opcodes(sql), sql).toContain('Program');
      expect(opcodes(sql).filter((op) => op === 'Function' || op === 'PureFunc'), sql).toEqual([]);
    }
    db.close();
  });

  it('fails the comparison on a drifted trigger, with a diff that names it and shows the changed line', async () => {
    const db = await driver.memory();
    migrate(db);
    migrateHost(db);
    db.exec('DROP TRIGGER lh_seq_taken');
    db.exec('CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN UPDATE OR FAIL lh_counters SET last_seq = NEW.seq, queued = queued + 1 WHERE queue_id = NEW.queue_id; END');
    const diff = schemaDiff(checkedIn, dumpSqliteSchema(db));
    expect(diff).toMatch(/^differs: trigger lh_seq_taken$/m);
    expect(diff).toMatch(/^ {2}- +UPDATE OR FAIL lh_counters SET last_seq = CASE WHEN NEW\.seq > last_seq THEN NEW\.seq ELSE last_seq END/m);
    expect(diff).toMatch(/^ {2}\+ +UPDATE OR FAIL lh_counters SET last_seq = NEW\.seq, queued = queued \+ 1/m);
    db.exec('DROP INDEX lh_messages_by_counter');
    expect(schemaDiff(checkedIn, dumpSqliteSchema(db))).toMatch(/^missing: index lh_messages_by_counter$/m);
    db.close();
  });
});
