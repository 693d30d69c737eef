/**
 * The leasehold schema on PostgreSQL: numbered, forward-only migrations, tracked in
 * `<schema>.lh_migrations` and applied under an advisory lock, so processes starting together
 * never apply one twice. Every table and function is prefixed `lh_` and lives in the schema the
 * application names (default `public`), so leasehold can share a database with the
 * application's own tables. Migrations are written with the schema already substituted: the
 * functions never depend on the caller's `search_path`.
 * @internal
 */
import { SchemaTooNewError } from '../errors.js';
import type { PgDatabase, PgQueryable } from './driver.js';
import { storeMigration } from './store-sql.js';
import { ackClaimManyMigration } from './transport-ack-claim-many-sql.js';
import { transportMigration } from './transport-sql.js';
import { transportDuplicateMigration } from './transport-duplicate-sql.js';
import { transportHoldMigration } from './transport-hold-sql.js';
import { transportPauseMigration } from './transport-pause-sql.js';
import { transportAfterMigration } from './transport-after-sql.js';
import { transportLastErrorMigration } from './transport-last-error-sql.js';
import { transportOriginMigration } from './transport-origin-sql.js';
import { transportSpeedMigration } from './transport-speed-sql.js';
import { transportNumberMigration } from './transport-number-sql.js';

/** Each entry moves the schema from version i to i + 1: statements, one per string. Never edit a released entry; append. */
const migrations: readonly ((s: string) => string[])[] = [transportMigration, storeMigration, transportSpeedMigration, ackClaimManyMigration, transportHoldMigration, transportDuplicateMigration, transportPauseMigration, transportAfterMigration, transportLastErrorMigration, transportOriginMigration, transportNumberMigration];

/** The schema version this build of leasehold writes. */
export const PG_SCHEMA_VERSION = migrations.length;

/** `name` as a quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A schema name leasehold accepts: a non-empty string PostgreSQL can hold as an identifier. */
export function checkSchemaName(schema: unknown): asserts schema is string {
  if (typeof schema !== 'string') throw new TypeError(`options.schema must be a non-empty string, got ${typeof schema}`);
  if (schema.length === 0 || schema.length > 63 || schema.includes('\0')) {
    throw new RangeError(`options.schema must be 1–63 characters without NUL, got ${JSON.stringify(schema)}`);
  }
}

async function version(db: PgQueryable, s: string): Promise<number> {
  try {
    const [row] = await db.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${s}.lh_migrations`);
    return row?.v ?? 0;
  } catch (error) {
    // 3F000: no such schema; 42P01: no such table. Anything else is a real failure.
    const code = (error as { code?: string }).code ?? ((error as { cause?: { code?: string } }).cause?.code);
    if (code === '3F000' || code === '42P01') return 0;
    throw error;
  }
}

/**
 * Brings `schema` up to {@link PG_SCHEMA_VERSION}, creating it if needed, in one transaction
 * under a transaction-level advisory lock on the schema's name.
 * @throws SchemaTooNewError when the schema was written by a newer leasehold; nothing is changed.
 */
export async function migratePostgres(db: PgDatabase, schema: string): Promise<void> {
  const s = quoteIdent(schema);
  if ((await version(db, s)) === PG_SCHEMA_VERSION) return;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`leasehold:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.lh_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const current = await version(tx, s);
    if (current > PG_SCHEMA_VERSION) {
      throw new SchemaTooNewError(`schema ${s} in ${db.label}`, 'core', current, PG_SCHEMA_VERSION);
    }
    for (let v = current; v < PG_SCHEMA_VERSION; v++) {
      for (const statement of migrations[v]!(s)) await tx.query(statement);
      await tx.query(`INSERT INTO ${s}.lh_migrations (version) VALUES ($1)`, [v + 1]);
    }
  });
}
