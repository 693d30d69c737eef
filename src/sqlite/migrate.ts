/**
 * How leasehold brings its SQL in a SQLite database up to date: numbered table migrations per
 * component, and the component's operations (triggers) installed as current source after them.
 * Knows no leasehold table: each component brings its own lists (the core's in `sql/`, the
 * host's journal in `remote/journal.ts`).
 * @internal
 */
import { SchemaTooNewError } from '../errors.js';
import type { SqlDatabase } from './driver.js';

/**
 * Brings `component`'s tables in `db` up to version `migrations.length`: entry i moves the
 * component from version i to i + 1, each in its own transaction together with its version
 * (see {@link SqlDatabase.setSchemaVersion}). An empty entry is a step that does nothing.
 * Safe to call from several connections at once: the version is read again
 * under the write lock before each step. Costs one version read when the schema is current.
 *
 * @throws SchemaTooNewError when the database holds a version above `migrations.length`
 *   (written by a newer leasehold); nothing is changed.
 * @throws TypeError when `component` is not a non-empty string or `migrations` not an array of strings.
 */
export function migrateComponent(db: SqlDatabase, component: string, migrations: readonly string[]): void {
  checkSteps(migrations);
  const target = migrations.length;
  if (db.schemaVersion(component) === target) return;
  for (;;) {
    const done = db.transaction(() => {
      const version = db.schemaVersion(component);
      if (version > target) throw new SchemaTooNewError(`database ${JSON.stringify(db.filename)}`, component, version, target);
      if (version === target) return true;
      runStep(db, migrations[version]!);
      db.setSchemaVersion(component, version + 1);
      return false;
    });
    if (done) return;
  }
}

/** A trigger as source: its name and the whole `CREATE TRIGGER` statement. */
export interface TriggerSource {
  readonly name: string;
  readonly sql: string;
}

/** A component whose tables migrate and whose triggers are current source. */
export interface ComponentSchema {
  /** The component's name (see {@link SqlDatabase.schemaVersion}). */
  readonly component: string;
  /** The numbered table migrations: tables, indexes and data only; entry i moves version i to i + 1. */
  readonly tables: readonly string[];
  /** Every trigger of the component, in the order they are created. */
  readonly triggers: readonly TriggerSource[];
  /** Whether an existing trigger named `name` is the component's (dropped before it installs its own). */
  owns(name: string): boolean;
}

/**
 * Brings `schema` in `db` up to date, in one transaction: when the tables are behind, it drops
 * the component's triggers (so no step runs under an older build's triggers), runs the missing
 * table steps, and installs the triggers; when only the triggers' source changed (its hash,
 * kept as the version of `<component> operations`, differs), it drops and recreates the
 * triggers. One transaction, so no connection ever sees the tables of one version with the
 * triggers of another, or a database without its triggers. When both are current it reads two
 * versions and writes nothing.
 *
 * @throws SchemaTooNewError when the tables are of a newer version than `schema.tables` knows;
 *   nothing is changed.
 */
export function installSchema(db: SqlDatabase, schema: ComponentSchema): void {
  checkSteps(schema.tables);
  const target = schema.tables.length;
  const operations = `${schema.component} operations`;
  const hash = sourceHash(schema.triggers.map((trigger) => trigger.sql));
  if (db.schemaVersion(schema.component) === target && db.schemaVersion(operations) === hash) return;
  db.transaction(() => {
    const version = db.schemaVersion(schema.component);
    if (version > target) throw new SchemaTooNewError(`database ${JSON.stringify(db.filename)}`, schema.component, version, target);
    if (version === target && db.schemaVersion(operations) === hash) return;
    const existing = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all<{ name: string }>();
    for (const { name } of existing) if (schema.owns(name)) db.exec(`DROP TRIGGER ${quoteName(name)}`);
    for (let step = version; step < target; step++) runStep(db, schema.tables[step]!);
    for (const trigger of schema.triggers) db.exec(trigger.sql);
    if (version < target) db.setSchemaVersion(schema.component, target);
    db.setSchemaVersion(operations, hash);
  });
}

/**
 * A 31-bit FNV-1a hash of `texts` (a schema version must fit a signed 32-bit field): equal
 * source, equal hash, on every runtime.
 */
export function sourceHash(texts: readonly string[]): number {
  let hash = 0x811c9dc5;
  for (const text of texts) {
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    // A separator no text holds, so ['ab', 'c'] and ['a', 'bc'] differ.
    hash = Math.imul(hash ^ 0x10000, 0x01000193);
  }
  return hash >>> 1;
}

function checkSteps(migrations: unknown): asserts migrations is readonly string[] {
  if (!Array.isArray(migrations) || migrations.some((m) => typeof m !== 'string')) {
    throw new TypeError('migrations must be an array of SQL strings');
  }
}

function runStep(db: SqlDatabase, step: string): void {
  // Not exec(''): a Durable Object refuses text without a statement.
  if (step !== '') db.exec(step);
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
