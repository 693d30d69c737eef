/**
 * What a receipt costs: deliveries per second through `receiver.receive` (a new number each: the
 * receipt read and written, apply's one-row insert under a savepoint, all in one transaction),
 * repeats answered from the receipt, beside the floor — the same one-row insert of the app's in
 * a transaction of its own — and that insert plus a bare insert of a receipt-shaped row (what a
 * hand-written receipts table costs at the least). One delivery at a time, awaited, on
 * better-sqlite3 (a file, WAL) and PostgreSQL (a throwaway cluster started here, default
 * settings: every commit flushed). Medians of several runs, the contenders taking turns.
 *
 * `bench/run.ts` imports `benchReceiver` and prints the rows; nothing here asserts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgres } from '../scripts/postgres.mjs';
import type { PgQueryable } from '../src/postgres/driver.js';
import { fromPg } from '../src/postgres/pg.js';
import { createReceiver, postgresReceipts, sqliteReceipts, type Receiver } from '../src/receiver/index.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { alternate, type BenchRow, type Entrant, times } from './lib.js';

interface Edit {
  note: string;
  text: string;
}

const ORIGIN = '0123456789abcdef0123456789abcdef';
const TEXT = 'Please leave the parcel with the neighbour at number 14 if nobody answers.';

/** Deliveries per second of one timed run of `ops` awaited calls. */
async function rate(ops: number, body: (i: number) => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ops; i++) await body(i);
  return ops / ((performance.now() - start) / 1000);
}

interface Engine {
  name: string;
  receiver: Receiver;
  /** The app's one-row insert in a transaction of its own. */
  bare(n: number): Promise<void>;
  /** That insert plus an insert of a receipt-shaped row, in one transaction. */
  bareWithRow(n: number): Promise<void>;
  close(): Promise<void>;
}

async function sqliteEngine(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'lh-bench-receiver-'));
  const db = await openBetterSqliteDatabase(join(dir, 'receiver.db'));
  db.exec(`CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL);
    CREATE TABLE bare_notes (id TEXT PRIMARY KEY, text TEXT NOT NULL);
    CREATE TABLE bare_receipts (origin TEXT NOT NULL, queue TEXT NOT NULL, counter INTEGER NOT NULL, revision INTEGER NOT NULL, refused INTEGER NOT NULL,
      status INTEGER NOT NULL, body TEXT, low_water INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (origin, queue, counter)) WITHOUT ROWID;`);
  const save = db.prepare('INSERT INTO notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text');
  const bare = db.prepare('INSERT INTO bare_notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text');
  const row = db.prepare('INSERT INTO bare_receipts VALUES (?, ?, ?, 0, 0, 200, ?, 1, ?)');
  const receiver = createReceiver<Edit, SqlDatabase, true>({ store: sqliteReceipts(db), apply: (e) => void save.run(e.note, e.text) });
  return {
    name: 'better-sqlite3',
    receiver,
    bare: async (n) => db.transaction(() => void bare.run(`n${n}`, TEXT)),
    bareWithRow: async (n) =>
      db.transaction(() => {
        bare.run(`r${n}`, TEXT);
        row.run(ORIGIN, 'bench', n, '{"ok":true}', n);
      }),
    close: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresEngine(): Promise<Engine> {
  const server = await startPostgres({ label: 'leasehold-pg-bench-receiver' });
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  const db = fromPg(pool);
  // A schema of its own: LEASEHOLD_PG_URL may name a database that holds other things.
  const schema = `lh_bench_receiver_${process.pid}`;
  await db.query(`CREATE SCHEMA ${schema};
    CREATE TABLE ${schema}.notes (id text PRIMARY KEY, text text NOT NULL);
    CREATE TABLE ${schema}.bare_notes (id text PRIMARY KEY, text text NOT NULL);
    CREATE TABLE ${schema}.bare_receipts (origin text NOT NULL, queue text NOT NULL, counter bigint NOT NULL, revision bigint NOT NULL, refused boolean NOT NULL,
      status smallint NOT NULL, body text, low_water bigint NOT NULL, at double precision NOT NULL, PRIMARY KEY (origin, queue, counter))`);
  const receiver = createReceiver<Edit, PgQueryable, false>({
    store: postgresReceipts(db, { schema }),
    apply: async (e, { tx }) => void (await tx.query(`INSERT INTO ${schema}.notes (id, text) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET text = excluded.text`, [e.note, e.text])),
  });
  const insert = (tx: PgQueryable, id: string) => tx.query(`INSERT INTO ${schema}.bare_notes (id, text) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET text = excluded.text`, [id, TEXT]);
  return {
    name: 'PostgreSQL',
    receiver,
    bare: (n) => db.transaction(async (tx) => void (await insert(tx, `n${n}`))),
    bareWithRow: (n) =>
      db.transaction(async (tx) => {
        await insert(tx, `r${n}`);
        await tx.query(`INSERT INTO ${schema}.bare_receipts VALUES ($1, 'bench', $2, 0, false, 200, '{"ok":true}', 1, $3)`, [ORIGIN, n, n]);
      }),
    close: async () => {
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
      await db.close();
      await pool.end();
      server.stop();
    },
  };
}

/** The rows of one engine: new deliveries, repeats, and the two floors. */
async function measure(engine: Engine, ops: number, runs: number): Promise<BenchRow[]> {
  let next = 0; // every timed delivery a new number, across runs
  let bareNext = 0;
  let rowNext = 0;
  const key = (n: number) => `"${ORIGIN}/bench/${n}/0"`;
  const entrants: Entrant[] = [
    { name: 'receive: a new delivery (receipt + apply)', measure: () => rate(ops, async () => engine.receiver.receive({ idempotencyKey: key(++next), lowWater: 1, event: { note: `n${next}`, text: TEXT } })) },
    // Repeats of numbers already applied: answered from the receipt, apply not run.
    { name: 'receive: a repeat (answered from the receipt)', measure: () => rate(ops, async (i) => engine.receiver.receive({ idempotencyKey: key((i % Math.max(1, next)) + 1), lowWater: 1, event: { note: 'x', text: TEXT } })) },
    { name: 'floor: the app\'s insert in a transaction', measure: () => rate(ops, () => engine.bare(++bareNext)) },
    { name: 'floor: the insert + a bare receipt-shaped row', measure: () => rate(ops, () => engine.bareWithRow(++rowNext)) },
  ];
  const results = await alternate(runs, entrants);
  const floor = results.get(entrants[2]!.name)!.opsPerSec;
  return entrants.map((e) => {
    const r = results.get(e.name)!;
    return { workload: `receipts on ${engine.name}, one delivery at a time (${ops} a run)`, backend: `${engine.name}: ${e.name}`, ...r, note: e === entrants[2] ? 'the floor' : `${times(r.opsPerSec, floor)} the floor's rate` };
  });
}

export async function benchReceiver({ quick }: { quick: boolean }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [open, ops] of [[sqliteEngine, quick ? 500 : 5_000], [postgresEngine, quick ? 200 : 1_000]] as const) {
    const engine = await open();
    try {
      rows.push(...(await measure(engine, ops, quick ? 2 : 5)));
    } finally {
      await engine.close();
    }
  }
  return rows;
}
