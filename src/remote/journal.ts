/**
 * The host's own schema: the call journal, a component of its own (`'host'`) beside the
 * transport and store tables, created only in a database a host serves.
 * @internal
 */
import type { SqlDatabase } from '../sqlite/driver.js';
import { migrateComponent } from '../sqlite/migrate.js';

/** The component name the host's migrations are numbered under. */
export const HOST_COMPONENT = 'host';

/** The host's migrations; each entry moves its tables from version i to i + 1. Append only. */
const migrations: readonly string[] = [
  // 1: the call journal: the answer the caller got to every journaled write, written in the
  // call's own transaction, so a call retried after its answer was lost (the owner tab died) is
  // answered from here, exactly as the first time, instead of being applied twice. Pruned after a few minutes. No index on `at`: it
  // would cost every forwarded call one more written page, while pruning (a scan of a few
  // minutes' worth of rows, every thousand calls) is cheap without it.
  //
  // IF NOT EXISTS: until the journal was the host's, it was entry 3 of the core schema, so every
  // database at core version 3 or later already has this very table (the same columns).
  `
  CREATE TABLE IF NOT EXISTS lh_calls (
    id     TEXT    PRIMARY KEY,
    result TEXT,                                   -- JSON of the call's result; NULL for none
    at     INTEGER NOT NULL                        -- wall time it was written, for pruning
  ) WITHOUT ROWID;
  `,
];

/** The host schema version this build writes. */
export const HOST_SCHEMA_VERSION = migrations.length;

/**
 * Creates (or brings up to date) the host's tables in `db`; call it once when a host starts
 * serving `db`, before preparing statements on `lh_calls`. Cheap when they are current.
 * @throws SchemaTooNewError when a newer leasehold's host wrote the database.
 */
export function migrateHost(db: SqlDatabase): void {
  migrateComponent(db, HOST_COMPONENT, migrations);
}
