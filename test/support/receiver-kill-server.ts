/**
 * The receiving server of test/receiver-kill.test.ts and test/postgres-receiver-kill.test.ts,
 * run as a process of its own (bundled by esbuild, so a restart costs a Node start, not a tsx
 * one): createReceiver + toNodeListener over a better-sqlite3 file or a PostgreSQL schema, with
 * an app that writes a record and a log line per applied delivery in the receipt's transaction.
 *
 * It kills itself with SIGKILL at random, and only on deliveries: before the receiver sees a
 * request, inside apply (the app's writes made, nothing committed), or after `handle()`
 * resolved (the receipt committed) but before a byte of the answer is written — the case
 * that turns every delivery into an at-least-once one. The kill lives here, not in the
 * receiver: no test hook exists in what ships.
 *
 * Argument: JSON `{ engine: 'sqlite', file } | { engine: 'pg', url, schema }`. It starts as a
 * standby, its modules loaded, and opens the database only when its first stdin line arrives
 * (JSON `{ point, rate, seed }`: where this life may die, and how likely at each delivery that
 * reaches it; rate 0 never kills): the parent keeps one ready, so a restart
 * after a kill costs a database open, not a Node start. It exits when its stdin closes (the
 * test process is gone). Lines on stdout: `PORT <n>` once listening, `KILL <point> <key>` just
 * before each kill, `ERROR <text>` for what the receiver answered 500/503 (the test fails on any).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { Pool } from 'pg';
import type { PgQueryable } from '../../src/postgres/driver.js';
import { fromPg } from '../../src/postgres/pg.js';
import { createReceiver, postgresReceipts, sqliteReceipts, toNodeListener, type ApplyContext, type Receiver } from '../../src/receiver/index.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { seeded } from './torture.js';

/** One edit of a record, as the device publishes (and merges) it: always the whole record. */
export interface RecordEdit {
  record: string;
  text: string;
  /** The device's edit number, unique in a run: which edit the text is. */
  v: number;
}

export type KillPoint = 'before' | 'during' | 'after';

/** Where the server keeps receipts and the app's tables: a better-sqlite3 file, or a PostgreSQL schema. */
export type EngineConfig = { engine: 'sqlite'; file: string } | { engine: 'pg'; url: string; schema: string };

/**
 * What one start of the server is told: the one point where it may kill itself (the parent
 * takes them in turn, so every run kills at each), how likely at each delivery, and its seed.
 */
export interface StartConfig {
  point: KillPoint;
  rate: number;
  seed: number;
}

/** A pool with one connection open already: connecting is no part of what a restart proves. */
async function connect(url: string): Promise<Pool> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  await pool.query('SELECT 1');
  return pool;
}

const engine = JSON.parse(process.argv[2]!) as EngineConfig;
// As a standby, everything that reads no data: modules, and on PostgreSQL a connection.
const pool = engine.engine === 'pg' ? await connect(engine.url) : null;
if (engine.engine === 'sqlite') await import('better-sqlite3');
const input = createInterface({ input: process.stdin });
input.once('close', () => process.exit(0));
const config = await new Promise<StartConfig>((resolve) => input.once('line', (line) => resolve(JSON.parse(line) as StartConfig)));
const random = seeded(config.seed);
const killsAt = (point: KillPoint) => config.point === point && random() < config.rate;

/** Says where, then dies: pipes are written synchronously on Linux, so the line gets out first. */
function die(point: KillPoint, key: string): never {
  process.stdout.write(`KILL ${point} ${key}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('still alive after SIGKILL'); // never returns normally: nothing may commit after this
}

const onError = (error: unknown) => process.stdout.write(`ERROR ${String(error instanceof Error ? (error.stack ?? error.message) : error).replaceAll('\n', ' | ')}\n`);

async function sqliteReceiver(file: string): Promise<Receiver> {
  const db = await openBetterSqliteDatabase(file);
  db.exec(`
    CREATE TABLE IF NOT EXISTS app_records (id TEXT PRIMARY KEY, text TEXT NOT NULL, v INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS app_log (n INTEGER PRIMARY KEY AUTOINCREMENT, origin TEXT NOT NULL, counter INTEGER NOT NULL, revision INTEGER NOT NULL, record TEXT NOT NULL, text TEXT NOT NULL, token TEXT NOT NULL);
  `);
  const save = db.prepare('INSERT INTO app_records (id, text, v) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text, v = excluded.v');
  const log = db.prepare('INSERT INTO app_log (origin, counter, revision, record, text, token) VALUES (?, ?, ?, ?, ?, ?)');
  return createReceiver<RecordEdit, SqlDatabase, true>({
    store: sqliteReceipts(db),
    onError,
    apply(edit, { delivery }: ApplyContext<SqlDatabase>) {
      const token = randomUUID();
      save.run(edit.record, edit.text, edit.v);
      log.run(delivery.origin, delivery.counter, delivery.revision, edit.record, edit.text, token);
      if (killsAt('during')) die('during', delivery.id);
      return { status: 201, body: { token, record: edit.record, text: edit.text } };
    },
  });
}

async function postgresReceiver(pool: Pool, schema: string): Promise<Receiver> {
  const db = fromPg(pool);
  const s = `"${schema}"`;
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.app_records (id text PRIMARY KEY, text text NOT NULL, v integer NOT NULL)`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.app_log (n bigserial PRIMARY KEY, origin text NOT NULL, counter bigint NOT NULL, revision bigint NOT NULL, record text NOT NULL, text text NOT NULL, token text NOT NULL)`);
  return createReceiver<RecordEdit, PgQueryable, false>({
    store: postgresReceipts(db, { schema }),
    onError,
    async apply(edit, { delivery, tx }) {
      const token = randomUUID();
      await tx.query(`INSERT INTO ${s}.app_records (id, text, v) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET text = excluded.text, v = excluded.v`, [edit.record, edit.text, edit.v]);
      await tx.query(`INSERT INTO ${s}.app_log (origin, counter, revision, record, text, token) VALUES ($1, $2, $3, $4, $5, $6)`, [delivery.origin, delivery.counter, delivery.revision, edit.record, edit.text, token]);
      if (killsAt('during')) die('during', delivery.id);
      return { status: 201, body: { token, record: edit.record, text: edit.text } };
    },
  });
}

const receiver = engine.engine === 'sqlite' ? await sqliteReceiver(engine.file) : await postgresReceiver(pool!, engine.schema);

// Lost reports and gaps reports are never killed: only deliveries carry an Idempotency-Key.
const handle = async (request: Request): Promise<Response> => {
  const key = request.headers.get('idempotency-key');
  if (key !== null && killsAt('before')) die('before', key);
  const response = await receiver.handle(request);
  if (key !== null && killsAt('after')) die('after', key);
  return response;
};

const server = createServer(toNodeListener(handle));
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
