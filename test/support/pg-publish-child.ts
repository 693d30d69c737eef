/**
 * Publishes one message to a queue on a PostgreSQL server from a process of its own, then exits:
 * the other process's consumer can only learn of it through LISTEN/NOTIFY (or a poll).
 * Args: url schema queue groupId eventJson. Prints `P <seq>`.
 */
import pg from 'pg';
import { fromPg } from '../../src/postgres/pg.js';
import { PostgresTransport } from '../../src/postgres/transport.js';

const [url, schema, queue, groupId, event] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 1 });
const seq = await new PostgresTransport(fromPg(pool), { schema, queue }).publish(groupId!, JSON.parse(event!));
await pool.end();
process.stdout.write(`P ${seq}\n`, () => process.exit(0));
