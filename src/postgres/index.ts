/**
 * leasehold/postgres: the transport contract on PostgreSQL, for queues shared by many processes
 * and machines — a server through node-postgres (`fromPg(pool)`), or PGlite embedded in Node or
 * a tab (`fromPglite(pglite)`). Neither package is imported here: the application creates the
 * pool or the PGlite instance and hands it over.
 */
export { PostgresTransport } from './transport.js';
export type { PostgresTransportOptions } from './transport.js';
export { PostgresStore } from './store.js';
export type { PostgresStoreOptions } from './store.js';
export { fromPg } from './pg.js';
export type { FromPgOptions, PgClientLike, PgPoolLike } from './pg.js';
export { fromPglite } from './pglite.js';
export type { PgliteLike, PgliteTransactionLike } from './pglite.js';
export type { PgDatabase, PgQueryable, PgRow } from './driver.js';
export { PG_SCHEMA_VERSION } from './schema.js';
export { PG_MAX_ID_BYTES } from './ids.js';
