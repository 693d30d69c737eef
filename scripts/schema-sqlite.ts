/**
 * Writes schema/sqlite.sql: the leasehold schema of a fresh SQLite database (the core and the
 * host's journal), object by object, as test/schema-source.test.ts compares every fresh and
 * upgraded database with it. Run it (`npm run schema:sqlite`) after changing a table migration
 * or a trigger, and commit the file with the change.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { migrateHost } from '../src/remote/journal.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { migrate } from '../src/sqlite/schema.js';
import { dumpSqliteSchema, SQLITE_SCHEMA_FILE } from '../test/support/sqlite-schema.js';

const db = await openBetterSqliteDatabase(':memory:');
migrate(db);
migrateHost(db);
const root = new URL('../', import.meta.url);
mkdirSync(new URL('schema/', root), { recursive: true });
writeFileSync(new URL(SQLITE_SCHEMA_FILE, root), dumpSqliteSchema(db));
db.close();
console.log(`wrote ${SQLITE_SCHEMA_FILE}`);
