/**
 * Writes schema/sqlite.sql: the leasehold schema of a fresh SQLite database (the core and the
 * host's journal), object by object, as test/schema-source.test.ts compares every fresh and
 * upgraded database with it; and schema/receiver-sqlite.sql, the receiver's tables in a server's
 * database of their own. Run it (`npm run schema:sqlite`) after changing a table migration or a
 * trigger, and commit the files with the change.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { migrateHost } from '../src/remote/journal.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { RECEIVER_COMPONENT, sqliteReceipts } from '../src/receiver/sqlite.js';
import { migrate } from '../src/sqlite/schema.js';
import { dumpSqliteSchema, RECEIVER_SQLITE_SCHEMA_FILE, SQLITE_SCHEMA_FILE } from '../test/support/sqlite-schema.js';

const db = await openBetterSqliteDatabase(':memory:');
migrate(db);
migrateHost(db);
const root = new URL('../', import.meta.url);
mkdirSync(new URL('schema/', root), { recursive: true });
writeFileSync(new URL(SQLITE_SCHEMA_FILE, root), dumpSqliteSchema(db));
db.close();
console.log(`wrote ${SQLITE_SCHEMA_FILE}`);

const server = await openBetterSqliteDatabase(':memory:');
sqliteReceipts(server);
writeFileSync(new URL(RECEIVER_SQLITE_SCHEMA_FILE, root), dumpSqliteSchema(server, [RECEIVER_COMPONENT]));
server.close();
console.log(`wrote ${RECEIVER_SQLITE_SCHEMA_FILE}`);
