/**
 * The Durable Object driver's side of the seam, in the real workerd on the object's SQLite
 * storage (test/workerd/driver-probe.ts runs the checks inside an object and answers what it
 * saw): schema versions per component with no SQL parsed, no commit watch (the object is its
 * database's only connection), `run()` counting changed rows whatever the statement's text,
 * SCHEMA_TOO_NEW, and a database as leasehold at schema version 5 left it in an object (one
 * number in `lh_user_version`, the host's journal in it) opening unchanged.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_SCHEMA_VERSION } from '../src/remote/journal.js';
import { errorFromWire, type WireError } from '../src/remote/wire.js';
import { SchemaTooNewError } from '../src/errors.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SCHEMA_VERSION } from '../src/sqlite/schema.js';
import { CORE_TRIGGERS } from '../src/sqlite/sql/triggers.js';
import { schemaDiff, SQLITE_SCHEMA_FILE } from './support/sqlite-schema.js';
import type { TransportSnapshot } from '../src/transport/contract.js';
import { scratchDir } from './support/backends.js';
import { asReadToday } from './support/snapshots.js';
import { startWorkerd, type Workerd } from './support/workerd.js';
import type { Dump } from './workerd/driver-probe.js';

const checkedInSchema = readFileSync(new URL(`../${SQLITE_SCHEMA_FILE}`, import.meta.url), 'utf8');
const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
let workerd: Workerd;
let objects = 0;

beforeAll(async () => {
  workerd = await startWorkerd(undefined, { entry: 'test/workerd/driver-probe.ts', className: 'DriverProbe', bindings: {} });
});
afterAll(async () => {
  await workerd?.stop();
  workerd?.remove();
});

async function probe<T>(name: string, body?: unknown): Promise<T> {
  const response = await fetch(`${workerd.url}/object-${++objects}/${name}`, { method: 'POST', body: JSON.stringify(body ?? null) });
  if (!response.ok) throw new Error(`probe ${name}: HTTP ${response.status}: ${await response.text()}\n${workerd.output()}`);
  return (await response.json()) as T;
}

describe('the Durable Object driver in workerd', () => {
  it('keeps a schema version per component in tables, inside transactions, with no commit watch', async () => {
    const seen = await probe<Record<string, unknown>>('versions');
    expect(seen.fresh).toEqual([0, 0]);
    expect(seen.tablesAfterRead).toEqual([]); // reading a version wrote nothing
    expect(seen.outside).toMatchObject({ message: expect.stringMatching(/outside a transaction/) });
    expect(seen.written).toEqual([5, 2, 0]);
    // The core's number where leasehold always kept it in an object; the others beside it.
    expect(seen.coreRows).toEqual([{ id: 1, version: 5 }]);
    expect(seen.componentRows).toEqual([{ component: 'host', version: 2 }]);
    expect(seen.rolledBack).toMatchObject({ message: 'undo' });
    expect(seen.afterRollback).toEqual([5, 0]);
    expect(seen.afterSavepoint).toBe(2);
    expect(seen.bad).toEqual(['TypeError', 'RangeError', 'RangeError']);
    expect(seen.changes).toEqual([2, 1, 2, 3]);
    expect(seen.watchCommits).toBe('undefined');
    expect(seen.closed).toBe('ClosedError');
  });

  it('migrates a component step by step, an empty step running nothing, and the core with no journal', async () => {
    const seen = await probe<Record<string, unknown>>('migrate');
    expect(seen.execs).toEqual(['CREATE TABLE a (x)', 'CREATE TABLE b (y)', 'CREATE TABLE c (z); INSERT INTO nowhere VALUES (1)']);
    expect(seen.version).toBe(3);
    expect(seen.failed).toMatchObject({ message: expect.stringMatching(/nowhere/) });
    expect(seen.afterFailure).toBe(3);
    expect(seen.tables).not.toContain('c');
    expect(seen.tables).not.toContain('lh_calls');
    expect(seen.tables).toContain('lh_messages');
    expect(seen.tables).toContain('lh_executions');
    expect([seen.core, seen.host]).toEqual([SCHEMA_VERSION, 0]);
    expect(schemaDiff(checkedInSchema, seen.schema as string), `a fresh object differs from ${SQLITE_SCHEMA_FILE}`).toBe('');
  });

  it('refuses an object written by a newer leasehold with SCHEMA_TOO_NEW, which crosses the wire as itself', async () => {
    const seen = await probe<{ core: WireError; host: WireError; tables: string[] }>('too-new');
    const core = errorFromWire(seen.core);
    expect(core).toBeInstanceOf(SchemaTooNewError);
    expect(core).toMatchObject({ code: 'SCHEMA_TOO_NEW', component: 'core', found: SCHEMA_VERSION + 1, supported: SCHEMA_VERSION, database: 'database "durable-object"' });
    expect(core.message).toMatch(/upgrade leasehold/i);
    expect(seen.tables).toEqual(['lh_user_version']); // nothing else was created
    expect(errorFromWire(seen.host)).toMatchObject({ name: 'SchemaTooNewError', component: 'host', found: 99, supported: HOST_SCHEMA_VERSION });
  });

  it('opens an object as leasehold at schema version 5 left it: migrated by the later steps only, its journal still answering', async () => {
    const written = JSON.parse(readFileSync(fixture('schema-v5.json'), 'utf8')) as { snapshot: TransportSnapshot; journaled: { id: string; answer: unknown } };
    // The object gets the fixture file's tables and rows, as that version wrote them.
    const scratch = scratchDir();
    const file = `${scratch.dir}/v5.db`;
    copyFileSync(fixture('schema-v5.db'), file);
    const db = await openBetterSqliteDatabase(file);
    const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").all<Dump['schema'][number]>();
    const rows = Object.fromEntries(schema.filter((s) => s.type === 'table').map((s) => [s.name, db.prepare(`SELECT * FROM ${s.name}`).all()]));
    db.close();
    scratch.remove();

    const seen = await probe<Record<string, unknown>>('old-v5', { schema, rows, claimId: written.journaled.id, snapshotNow: written.snapshot.now });
    // The core dropped version 5's triggers, ran only its table steps after 5 (holds, pauses,
    // after, last errors, origin and counters, revisions, coalescing windows), created today's triggers; the host's one step
    // found its table there already. The object then equals a fresh database, object by object.
    const execs = seen.execs as string[];
    expect(execs.slice(0, 3).sort()).toEqual(['DROP TRIGGER "lh_claim_counted"', 'DROP TRIGGER "lh_message_removed"', 'DROP TRIGGER "lh_seq_taken"']);
    expect(execs.slice(3, 10)).toEqual([
      expect.stringMatching(/ALTER TABLE lh_groups ADD COLUMN held_seq/),
      expect.stringMatching(/ALTER TABLE lh_groups ADD COLUMN paused/),
      expect.stringMatching(/ALTER TABLE lh_messages ADD COLUMN waits/),
      expect.stringMatching(/ALTER TABLE lh_messages ADD COLUMN last_error/),
      expect.stringMatching(/CREATE TABLE lh_origin/),
      expect.stringMatching(/ALTER TABLE lh_messages ADD COLUMN revision/),
      expect.stringMatching(/ALTER TABLE lh_messages ADD COLUMN debounce_deadline/),
    ]);
    expect(execs.slice(10, -1)).toEqual(CORE_TRIGGERS.map((trigger) => trigger.sql));
    expect(execs.at(-1)).toMatch(/CREATE TABLE IF NOT EXISTS lh_calls/);
    expect(schemaDiff(checkedInSchema, seen.schema as string)).toBe('');
    expect(seen.versions).toEqual([SCHEMA_VERSION, 1]);
    expect(seen.coreRows).toEqual([{ id: 1, version: SCHEMA_VERSION }]);
    expect(seen.retried).toEqual(written.journaled.answer);
    expect(seen.snapshot).toEqual(asReadToday(written.snapshot));
    expect(seen.loaded).toMatchObject({ id: 'order-1', version: 1, status: 'new' });
    expect(seen.publishAgain).toBe(seen.publish);
    expect(seen.execsOnReopen).toEqual([]);
  });
});
