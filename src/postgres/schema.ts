/**
 * The leasehold schema on PostgreSQL. Tables migrate: numbered, forward-only steps
 * (`sql/tables.ts`), tracked in `<schema>.lh_migrations`. Operations are source: the functions
 * and triggers as this build defines them (`sql/operations.ts`), installed after the tables
 * whenever the hash recorded in `<schema>.lh_operations` differs. Both run in one transaction
 * under an advisory lock, so processes starting together never apply anything twice. Every
 * table and function is prefixed `lh_` and lives in the schema the application names (default
 * `public`), so leasehold can share a database with the application's own tables. The SQL is
 * written with the schema already substituted: functions never depend on `search_path`.
 * @internal
 */
import { SchemaTooNewError } from '../errors.js';
import type { PgDatabase, PgQueryable } from './driver.js';
import { OPERATIONS_HASH, operationSql } from './sql/operations.js';
import { tableMigrations } from './sql/tables.js';

/** The table version this build of leasehold writes. */
export const PG_SCHEMA_VERSION = tableMigrations.length;

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

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
}

/** The table version and the installed operations' hash; both absent for no schema, or one from before hashes. */
async function state(db: PgQueryable, s: string): Promise<{ version: number; hash: string | null }> {
  try {
    const [row] = await db.query<{ v: number | null; h: string | null }>(
      `SELECT (SELECT max(m.version) FROM ${s}.lh_migrations m)::int AS v, (SELECT o.hash FROM ${s}.lh_operations o) AS h`,
    );
    return { version: row?.v ?? 0, hash: row?.h ?? null };
  } catch (error) {
    // 3F000: no such schema; 42P01: no such table (lh_operations is newer than the tables).
    // Anything else is a real failure.
    const code = errorCode(error);
    if (code === '3F000' || code === '42P01') return { version: 0, hash: null };
    throw error;
  }
}

async function version(db: PgQueryable, s: string): Promise<number> {
  const [row] = await db.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${s}.lh_migrations`);
  return row?.v ?? 0;
}

/** `FUNCTION <s>.name(args) RETURNS result` of a statement, whitespace as the catalog writes it. */
function header(statement: string, s: string): string {
  const at = statement.indexOf(`FUNCTION ${s}.`) + `FUNCTION ${s}.`.length;
  const head = statement.slice(at, statement.indexOf(' LANGUAGE ', at)).replace(/\s+/g, ' ').trim();
  return head.replace(/ RETURNS TABLE \(/, ' RETURNS TABLE(');
}

/**
 * Installs the current operations (functions, then triggers) in the schema `s` inside the
 * caller's transaction, and records their hash. A function the source no longer defines, or
 * defines with other arguments or another result (which `CREATE OR REPLACE` cannot change), is
 * dropped by its exact signature first; every trigger on the schema's `lh_` tables is dropped
 * and created again, since triggers have no `CREATE OR REPLACE` on every supported server.
 * @throws whatever the server raises; the caller's transaction then rolls everything back.
 */
async function installOperations(tx: PgQueryable, schema: string, s: string): Promise<void> {
  const { functions, triggers } = operationSql(s);
  const wanted = new Set(functions.map((f) => header(f, s)));
  for (const t of await tx.query<{ name: string; tbl: string }>(
    `SELECT t.tgname AS name, c.relname AS tbl FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND NOT t.tgisinternal AND t.tgname LIKE 'lh\\_%'`,
    [schema],
  )) {
    await tx.query(`DROP TRIGGER ${quoteIdent(t.name)} ON ${s}.${quoteIdent(t.tbl)}`);
  }
  for (const f of await tx.query<{ signature: string; head: string }>(
    `SELECT p.oid::regprocedure::text AS signature,
        p.proname || '(' || pg_get_function_arguments(p.oid) || ') RETURNS ' || pg_get_function_result(p.oid) AS head
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname LIKE 'lh\\_%'`,
    [schema],
  )) {
    // The signature is schema-qualified and quoted as needed by the regprocedure output itself.
    if (!wanted.has(f.head)) await tx.query(`DROP FUNCTION ${f.signature}`);
  }
  for (const statement of [...functions, ...triggers]) await tx.query(statement);
  await tx.query(`INSERT INTO ${s}.lh_operations (id, hash) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET hash = excluded.hash`, [OPERATIONS_HASH]);
}

/**
 * Brings `schema` up to {@link PG_SCHEMA_VERSION} and the current operations, creating it if
 * needed, in one transaction under a transaction-level advisory lock on the schema's name: the
 * table migrations it lacks, then, if the recorded hash differs from this build's, the
 * operations. An up-to-date schema costs one query and changes nothing.
 * @throws SchemaTooNewError when the schema's tables were written by a newer leasehold; nothing is changed.
 */
export async function migratePostgres(db: PgDatabase, schema: string): Promise<void> {
  const s = quoteIdent(schema);
  const found = await state(db, s);
  if (found.version === PG_SCHEMA_VERSION && found.hash === OPERATIONS_HASH) return;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`leasehold:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.lh_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    // Beside the version, not a table version of its own: a build from before it opens the
    // schema unchanged, and its functions behave as these do.
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.lh_operations (id integer PRIMARY KEY CHECK (id = 1), hash text NOT NULL)`);
    const current = await version(tx, s);
    if (current > PG_SCHEMA_VERSION) {
      throw new SchemaTooNewError(`schema ${s} in ${db.label}`, 'core', current, PG_SCHEMA_VERSION);
    }
    for (let v = current; v < PG_SCHEMA_VERSION; v++) {
      for (const statement of tableMigrations[v]!(s)) await tx.query(statement);
      await tx.query(`INSERT INTO ${s}.lh_migrations (version) VALUES ($1)`, [v + 1]);
    }
    // Tables that changed get their operations again even under the same hash: a function's
    // cached plans and row types were made for the old tables.
    const [row] = await tx.query<{ h: string }>(`SELECT o.hash AS h FROM ${s}.lh_operations o`);
    if (current < PG_SCHEMA_VERSION || row?.h !== OPERATIONS_HASH) await installOperations(tx, schema, s);
  });
}
