/**
 * Writes schema/postgres.sql: a fresh leasehold schema, migrated and installed on an embedded
 * PGlite, described from the catalog (scripts/describe-postgres.ts). Run `npm run
 * schema:postgres` after changing anything under src/postgres/sql/; the tests compare fresh and
 * upgraded schemas on a server and on PGlite with the file.
 */
import { writeFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { fromPglite } from '../src/postgres/pglite.js';
import { migratePostgres } from '../src/postgres/schema.js';
import { describeSchema } from './describe-postgres.js';

const pglite = new PGlite();
const db = fromPglite(pglite);
await migratePostgres(db, 'leasehold');
const out = new URL('../schema/postgres.sql', import.meta.url);
writeFileSync(out, await describeSchema(db, 'leasehold'));
await db.close();
await pglite.close();
console.log(`wrote ${out.pathname}`);
