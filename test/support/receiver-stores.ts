/**
 * The receipt stores the receiver's suite runs on, each with a small app table written in the
 * receipt's own transaction (so a test can see that a refusal or a failure undid the app's
 * writes): better-sqlite3 on a file, sqlite-wasm in memory, the run's PostgreSQL server through
 * a pool of its own (truly concurrent transactions), and PGlite. Each harness gets a database
 * or a schema of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PgDatabase, PgQueryable } from '../../src/postgres/driver.js';
import { fromPg } from '../../src/postgres/pg.js';
import { postgresReceipts } from '../../src/receiver/postgres.js';
import { sqliteReceipts } from '../../src/receiver/sqlite.js';
import type { ReceiptStore } from '../../src/receiver/store.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { openWasmDatabase } from '../../src/sqlite/wasm.js';
import { newServerPool, pgliteDatabase } from './postgres.js';
import { pgUrl, unlessFast } from './servers.js';

/** A receipt row as every store reports it. */
export interface ReceiptRow {
  origin: string;
  queue: string;
  counter: number;
  revision: number;
  refused: boolean;
  status: number;
  body: string | null;
  lowWater: number;
}

export interface ReceiptHarness {
  store: ReceiptStore<unknown, boolean>;
  /** Writes `text` as note `id` through the apply's transaction handle (a promise on PostgreSQL). */
  write(tx: unknown, id: string, text: string): void | Promise<void>;
  /** The app's notes, by id. */
  notes(): Promise<Record<string, string>>;
  /** Every receipt, ordered by origin, queue, counter. */
  receipts(): Promise<ReceiptRow[]>;
  /** Every lost origin. */
  lost(): Promise<string[]>;
  dispose(): Promise<void>;
}

export interface ReceiptBackend {
  name: string;
  /** Whether apply must be synchronous (SQLite). */
  synchronous: boolean;
  make(): Promise<ReceiptHarness>;
}

function sqliteHarness(db: SqlDatabase, dispose: () => void): ReceiptHarness {
  const store = sqliteReceipts(db);
  db.exec('CREATE TABLE IF NOT EXISTS app_notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)');
  return {
    store: store as ReceiptStore<unknown, boolean>,
    write: (tx, id, text) => void (tx as SqlDatabase).prepare('INSERT INTO app_notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text').run(id, text),
    notes: async () => Object.fromEntries(db.prepare('SELECT id, text FROM app_notes ORDER BY id').all<{ id: string; text: string }>().map((r) => [r.id, r.text])),
    receipts: async () =>
      db
        .prepare('SELECT origin, queue, counter, revision, refused, status, body, low_water FROM lh_receiver_receipts ORDER BY origin, queue, counter')
        .all<Record<string, string | number | null>>()
        .map((r) => ({ origin: String(r.origin), queue: String(r.queue), counter: Number(r.counter), revision: Number(r.revision), refused: r.refused === 1, status: Number(r.status), body: r.body as string | null, lowWater: Number(r.low_water) })),
    lost: async () => db.prepare('SELECT origin FROM lh_receiver_lost ORDER BY origin').all<{ origin: string }>().map((r) => r.origin),
    dispose: async () => dispose(),
  };
}

let schemas = 0;

async function postgresHarness(db: PgDatabase, close: () => Promise<void>): Promise<ReceiptHarness> {
  const schema = `lh_rcv_${process.pid}_${++schemas}`;
  const s = `"${schema}"`;
  const store = postgresReceipts(db, { schema });
  // The store creates the schema on first use; the app's table goes beside it.
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
  await db.query(`CREATE TABLE ${s}.app_notes (id text PRIMARY KEY, text text NOT NULL)`);
  return {
    store: store as ReceiptStore<unknown, boolean>,
    write: async (tx, id, text) => {
      await (tx as PgQueryable).query(`INSERT INTO ${s}.app_notes (id, text) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET text = excluded.text`, [id, text]);
    },
    notes: async () => Object.fromEntries((await db.query<{ id: string; text: string }>(`SELECT id, text FROM ${s}.app_notes ORDER BY id`)).map((r) => [r.id, r.text])),
    receipts: async () => {
      const exists = await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'lh_receiver_receipts'`, [schema]);
      if (exists.length === 0) return [];
      const rows = await db.query<Record<string, unknown>>(`SELECT origin, queue, counter, revision, refused, status, body, low_water FROM ${s}.lh_receiver_receipts ORDER BY origin COLLATE "C", queue COLLATE "C", counter`);
      return rows.map((r) => ({ origin: String(r.origin), queue: String(r.queue), counter: Number(r.counter), revision: Number(r.revision), refused: r.refused === true, status: Number(r.status), body: r.body as string | null, lowWater: Number(r.low_water) }));
    },
    lost: async () => {
      const exists = await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'lh_receiver_lost'`, [schema]);
      if (exists.length === 0) return [];
      return (await db.query<{ origin: string }>(`SELECT origin FROM ${s}.lh_receiver_lost ORDER BY origin`)).map((r) => r.origin);
    },
    dispose: async () => {
      await db.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      await close();
    },
  };
}

/** The stores, SQLite's first; the PostgreSQL rows are left out under `npm run test:fast`. */
export function receiptBackends(): ReceiptBackend[] {
  return [
    {
      name: 'better-sqlite3',
      synchronous: true,
      async make() {
        const dir = mkdtempSync(join(tmpdir(), 'lh-receiver-'));
        const db = await openBetterSqliteDatabase(join(dir, 'receipts.db'));
        return sqliteHarness(db, () => {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        });
      },
    },
    {
      name: 'sqlite-wasm',
      synchronous: true,
      async make() {
        const db = await openWasmDatabase();
        return sqliteHarness(db, () => db.close());
      },
    },
    ...unlessFast<ReceiptBackend>([
      {
        name: 'PostgreSQL server',
        synchronous: false,
        async make() {
          await pgUrl();
          const pool = newServerPool(10);
          return postgresHarness(fromPg(pool), () => pool.end());
        },
      },
      {
        name: 'PGlite',
        synchronous: false,
        async make() {
          return postgresHarness(await pgliteDatabase(), async () => {});
        },
      },
    ]),
  ];
}
