/**
 * A PostgreSQL schema written by a newer leasehold, on a server (pg) and on PGlite: every call
 * of the transport and the store rejects with SCHEMA_TOO_NEW, giving the versions found and
 * supported, and nothing in the schema changes (not STORAGE_CORRUPT, which says to restore a
 * backup).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { SchemaTooNewError, StorageError } from '../src/errors.js';
import type { PgDatabase } from '../src/postgres/driver.js';
import { PG_SCHEMA_VERSION } from '../src/postgres/schema.js';
import { PostgresStore } from '../src/postgres/store.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { pgliteDatabase, serverDatabase } from './support/postgres.js';

const databases: [string, () => Promise<PgDatabase>][] = [
  ['a PostgreSQL server (pg)', async () => serverDatabase()],
  ['PGlite', () => pgliteDatabase()],
];

describe.each(databases)('a schema of a newer leasehold on %s', (_name, database) => {
  const schemas: [PgDatabase, string][] = [];
  afterAll(async () => {
    for (const [db, schema] of schemas) await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('is refused with SCHEMA_TOO_NEW by the transport and the store, and left as it was', async () => {
    const db = await database();
    const schema = `lh_too_new_${process.pid}_${schemas.length}`;
    schemas.push([db, schema]);
    const current = new PostgresTransport(db, { schema });
    await current.publish('g', 1);
    await current.close();
    await db.query(`INSERT INTO "${schema}".lh_migrations (version) VALUES ($1)`, [PG_SCHEMA_VERSION + 1]);

    const error = await new PostgresTransport(db, { schema }).publish('g', 2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).not.toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'SCHEMA_TOO_NEW', found: PG_SCHEMA_VERSION + 1, supported: PG_SCHEMA_VERSION });
    expect((error as Error).message).toContain(`schema "${schema}"`);
    expect((error as Error).message).toMatch(/upgrade leasehold/i);
    await expect(new PostgresStore(db, { schema }).load('x')).rejects.toBeInstanceOf(SchemaTooNewError);
    const rows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".lh_messages`);
    expect(rows).toEqual([{ n: 1 }]);
  });
});
