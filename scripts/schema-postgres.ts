/**
 * Writes schema/postgres.sql: a fresh leasehold schema, migrated and installed on an embedded
 * PGlite, described from the catalog (scripts/describe-postgres.ts); and
 * schema/receiver-postgres.sql, the receiver's tables in a schema of their own. Run `npm run
 * schema:postgres` after changing anything under src/postgres/sql/; the tests compare fresh and
 * upgraded schemas on a server and on PGlite with the file.
 */
import { writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { fromPglite } from '../src/postgres/pglite.js';
import { migratePostgres } from '../src/postgres/schema.js';
import { postgresReceipts } from '../src/receiver/postgres.js';
import { describeSchema } from './describe-postgres.js';

const pglite = new PGlite();
const db = fromPglite(pglite);
await migratePostgres(db, 'leasehold');
const out = new URL('../schema/postgres.sql', import.meta.url);
writeFileSync(out, await describeSchema(db, 'leasehold'));
const receiverOut = new URL('../schema/receiver-postgres.sql', import.meta.url);
await postgresReceipts(db, { schema: 'receiver' }).counts('any'); // creates the tables on first use
writeFileSync(receiverOut, await describeSchema(db, 'receiver'));
console.log(`wrote ${receiverOut.pathname}`);
await db.close();
await pglite.close();
console.log(`wrote ${out.pathname}`);
