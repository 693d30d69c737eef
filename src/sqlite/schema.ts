/**
 * The core component of a leasehold SQLite database: the transport's and the store's tables
 * (`sql/tables.ts`, numbered migrations) and their triggers (`sql/triggers.ts`, current source),
 * brought up to date by one call. A host that keeps tables of its own beside them (the call
 * journal) numbers its own list under its own component name, so a database holds only the
 * tables of the components that use it.
 * @internal
 */
import { CORE_COMPONENT, type SqlDatabase } from './driver.js';
import { installSchema, type ComponentSchema } from './migrate.js';
import { CORE_TABLES } from './sql/tables.js';
import { CORE_TRIGGERS } from './sql/triggers.js';

/** The core schema version this build of leasehold writes: the number of table migrations. */
export const SCHEMA_VERSION = CORE_TABLES.length;

/** The core component: its tables, its triggers, and which triggers of a database are its own. */
export const CORE_SCHEMA: ComponentSchema = {
  component: CORE_COMPONENT,
  tables: CORE_TABLES,
  triggers: CORE_TRIGGERS,
  // Every trigger leasehold ever created on its tables was named lh_*; the host has none.
  owns: (name) => name.startsWith('lh_'),
};

/**
 * Brings the transport and store tables of `db` up to {@link SCHEMA_VERSION}, with the current
 * triggers. Reads two versions and writes nothing when the database is current.
 * @throws SchemaTooNewError when the database was written by a newer leasehold.
 */
export function migrate(db: SqlDatabase): void {
  installSchema(db, CORE_SCHEMA);
}
