/**
 * The PostgreSQL schema against its checked-in description (schema/postgres.sql), on a server
 * (pg) and on PGlite: a fresh schema equals it object by object; a function that drifted from
 * the source fails the comparison naming it; and a second open of an unchanged schema installs
 * nothing, at the cost of one query. Fixtures replay released schemas (test/fixtures/make-postgres-v*.mts).
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { PgDatabase } from '../src/postgres/driver.js';
import { migratePostgres } from '../src/postgres/schema.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { postgresReceipts, RECEIVER_PG_VERSION } from '../src/receiver/postgres.js';
import { describeObjects, describeSchema } from '../scripts/describe-postgres.js';
import { pgliteDatabase, serverDatabase } from './support/postgres.js';

const checkedIn = readFileSync(new URL('../schema/postgres.sql', import.meta.url), 'utf8');
const regenerate = 'schema/postgres.sql is not what this source installs: run `npm run schema:postgres` and commit the file';

const databases: [string, () => Promise<PgDatabase>][] = [
  ['a PostgreSQL server (pg)', async () => serverDatabase()],
  ['PGlite', () => pgliteDatabase()],
];

/** The blocks of `a` and `b` that differ, each as its name and both texts: a readable diff. */
function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const names = [...new Set([...a.keys(), ...b.keys()])].sort();
  return names.filter((n) => a.get(n) !== b.get(n)).map((n) => `${n}\n--- expected\n${a.get(n) ?? '(absent)'}\n--- found\n${b.get(n) ?? '(absent)'}`);
}

describe.each(databases)('the PostgreSQL schema source on %s', (_name, database) => {
  const schemas: [PgDatabase, string][] = [];
  const fresh = async (): Promise<[PgDatabase, string]> => {
    const db = await database();
    const schema = `lh_source_${process.pid}_${schemas.length}`;
    schemas.push([db, schema]);
    await migratePostgres(db, schema);
    return [db, schema];
  };
  afterAll(async () => {
    for (const [db, schema] of schemas) await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('makes a fresh schema equal to schema/postgres.sql', async () => {
    const [db, schema] = await fresh();
    expect(await describeSchema(db, schema), regenerate).toBe(checkedIn);
  });

  it('makes a fresh receiver schema equal to schema/receiver-postgres.sql, also beside leasehold\'s tables', async () => {
    const expected = readFileSync(new URL('../schema/receiver-postgres.sql', import.meta.url), 'utf8');
    const db = await database();
    const schema = `lh_source_${process.pid}_${schemas.length}`;
    schemas.push([db, schema]);
    await postgresReceipts(db, { schema }).counts('any');
    expect(await describeSchema(db, schema), 'schema/receiver-postgres.sql is not what the receiver creates: run `npm run schema:postgres`').toBe(expected);
    // leasehold's transport installed into the same schema keeps the receiver's tables, and the
    // receiver opened again after it finds its version and changes nothing.
    await migratePostgres(db, schema);
    await postgresReceipts(db, { schema }).counts('any');
    const [row] = await db.query<{ v: number }>(`SELECT max(version)::int AS v FROM "${schema}".lh_receiver_migrations`);
    expect(row!.v).toBe(RECEIVER_PG_VERSION);
    const both = await describeObjects(db, schema);
    for (const name of ['lh_receiver_receipts', 'lh_receiver_lost', 'lh_receiver_migrations']) expect([...both.keys()].some((key) => key.endsWith(name))).toBe(true);
  });

  /** A schema as the release that wrote `fixture` left it (test/fixtures/make-postgres-v*.mts). */
  const released = async (fixture: string): Promise<[PgDatabase, string]> => {
    const db = await database();
    const schema = `lh_source_${process.pid}_${schemas.length}`;
    schemas.push([db, schema]);
    const script = readFileSync(new URL(`fixtures/${fixture}`, import.meta.url), 'utf8').replaceAll(':schema', `"${schema}"`);
    await db.transaction(async (tx) => {
      for (const statement of script.split('\n;\n')) if (statement.replace(/^--.*$/gm, '').trim()) await tx.query(statement);
    });
    return [db, schema];
  };

  it.each(['postgres-v3.sql', 'postgres-v11.sql'])('makes a schema upgraded from fixture %s equal to schema/postgres.sql, its rows kept', async (fixture) => {
    const [db, schema] = await released(fixture);
    const count = async () => (await db.query<{ n: number }>(`SELECT (SELECT count(*) FROM "${schema}".lh_messages) + (SELECT count(*) FROM "${schema}".lh_executions) AS n`))[0]!.n;
    const before = Number(await count());
    await migratePostgres(db, schema);
    expect(await describeSchema(db, schema), regenerate).toBe(checkedIn);
    expect(Number(await count())).toBe(before);
    expect(before).toBeGreaterThan(0);
  });

  it('upgrades a version 3 schema on open with a lease in flight, which it then acks and claims after', async () => {
    // The fixture's queue 'jobs': g1's head (seq 2, {n: 1}) leased by w2 at attempt 1 until 1 006 000.
    const [db, schema] = await released('postgres-v3.sql');
    const transport = new PostgresTransport<{ n: number }>(db, { schema, queue: 'jobs', clock: () => 1_005_000 });
    const lease = { seq: 2, groupId: 'g1', event: { n: 1 }, workerId: 'w2', attempt: 1, expiresAt: 1_006_000, queue: 'jobs' };
    const { acked, claimed } = await transport.ackAndClaimMany([lease], 'w3', 1000, { max: 5 });
    expect(acked).toEqual([lease]);
    // g0's lease ran out at 1 001 000: its head comes again, then g1's next; numbered by seq at the upgrade.
    expect(claimed.map((l) => [l.groupId, l.event.n, l.attempt, l.counter, l.revision])).toEqual([['g0', 0, 2, 1, 0], ['g1', 3, 1, 4, 0]]);
    await transport.close();
  });

  it('fails the comparison naming a function whose body drifted', async () => {
    const [db, schema] = await fresh();
    const expected = await describeObjects(db, schema);
    const [def] = await db.query<{ d: string }>(`SELECT pg_get_functiondef('"${schema}".lh_extend'::regproc) AS d`);
    await db.query(def!.d.replace('RETURN v_until;', 'RETURN v_until + 1;'));
    const found = differences(expected, await describeObjects(db, schema));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^function lh_extend\(p_queue integer/);
    expect(found[0]).toContain('RETURN v_until + 1;');
  });

  it('installs nothing when an unchanged schema is opened again, in one query', async () => {
    const [db, schema] = await fresh();
    const statements: string[] = [];
    const counting: PgDatabase = {
      ...db,
      label: db.label,
      query: (text, params) => (statements.push(text), db.query(text, params)),
      transaction: (body) => (statements.push('BEGIN'), db.transaction(body)),
    };
    await migratePostgres(counting, schema);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^SELECT /);
  });

  it('replaces a function the source changed and drops one it no longer defines', async () => {
    const [db, schema] = await fresh();
    await db.query(`CREATE FUNCTION "${schema}".lh_gone(p integer) RETURNS integer LANGUAGE sql AS $$ SELECT p $$`);
    const [def] = await db.query<{ d: string }>(`SELECT pg_get_functiondef('"${schema}".lh_extend'::regproc) AS d`);
    await db.query(def!.d.replace('RETURN v_until;', 'RETURN v_until + 1;'));
    await db.query(`UPDATE "${schema}".lh_operations SET hash = 'stale'`);
    const oids = `SELECT p.proname AS name, p.oid::int AS oid FROM pg_proc p WHERE p.pronamespace = '"${schema}"'::regnamespace ORDER BY 1`;
    const before = (await db.query<{ name: string; oid: number }>(oids)).filter((f) => f.name !== 'lh_gone');
    await migratePostgres(db, schema);
    expect(await describeSchema(db, schema)).toBe(checkedIn);
    // Replaced in place, not dropped and created: prepared statements elsewhere keep their function.
    expect(await db.query(oids)).toEqual(before);
  });
});
