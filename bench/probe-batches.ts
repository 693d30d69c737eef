/**
 * `npx tsx bench/probe-batches.ts [--backlogs=1000,10000,100000] [--batches=300] [--rounds=3]`:
 * where a batch of 32 claims and acks spends its time, beside the batch floor (bench/batch-floor.ts),
 * the least SQL such a batch can be. Not part of `npm run bench`; nothing here is asserted.
 *
 * - **CPU per statement**: sqlite-wasm in Node on `:memory:` (the engine the browser runs, with no
 *   file calls), every statement the transport runs timed by its SQL text, µs per message, for
 *   `claimMany` + `ackMany` of 32 and `ackAndClaimMany` of 32, and the whole call beside the
 *   statements (the rest is the transport's JavaScript).
 * - **Pages per batch**: better-sqlite3 on a file in WAL mode with checkpoints off, the WAL's
 *   growth per batch in frames (one frame is one page a commit wrote): in the browser each commit
 *   is one file call, but its bytes and each checkpoint's page writes grow with the frames.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import type { Lease } from '../src/index.js';
import { fromBetterSqlite } from '../src/sqlite/better.js';
import type { SqlDatabase, SqlStatement, SqlValue } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { batchFloorOf } from './batch-floor.js';
import { median } from './lib.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const backlogs = (option('backlogs') ?? '1000,10000,100000').split(',').map(Number);
const BATCHES = Number(option('batches') ?? 300);
const ROUNDS = Number(option('rounds') ?? 3);
const GROUPS = 100;
const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };
const VIS = 30_000;

/** Milliseconds spent in each statement, by SQL text, while `timing` is on. */
const spent = new Map<string, number>();
let timing = false;

function timed(db: SqlDatabase): SqlDatabase {
  const wrap = (sql: string, statement: SqlStatement): SqlStatement => {
    const measure =
      <R>(call: (...params: SqlValue[]) => R) =>
      (...params: SqlValue[]): R => {
        if (!timing) return call(...params);
        const start = performance.now();
        try {
          return call(...params);
        } finally {
          spent.set(sql, (spent.get(sql) ?? 0) + performance.now() - start);
        }
      };
    return {
      run: measure((...p) => statement.run(...p)),
      get: measure((...p) => statement.get(...p)) as SqlStatement['get'],
      all: measure((...p) => statement.all(...p)) as SqlStatement['all'],
    };
  };
  return Object.assign(Object.create(db) as SqlDatabase, { prepare: (sql: string) => wrap(sql, db.prepare(sql)) });
}

type Batching = SqliteTransport<typeof EVENT>;

async function fill(transport: Batching, backlog: number): Promise<void> {
  for (let from = 0; from < backlog; from += 1000) {
    await transport.publishMany(Array.from({ length: Math.min(1000, backlog - from) }, (_, i) => ({ groupId: `g${((from + i) * 7919) % GROUPS}`, event: EVENT })));
  }
}

let now = 1;
const topUp = (transport: Batching, count: number) =>
  transport.publishMany(Array.from({ length: count }, (_, i) => ({ groupId: `g${((now + i) * 7919) % GROUPS}`, event: EVENT })));

/** One way of taking 32 messages through: returns how many it acked. */
type Way = (transport: Batching, held: { leases: Lease<typeof EVENT>[] }) => Promise<number>;
const ways: Record<string, Way> = {
  'claimMany + ackMany': async (transport) => {
    const leases = await transport.claimMany('probe', VIS, { max: 32 });
    await transport.ackMany(leases);
    return leases.length;
  },
  ackAndClaimMany: async (transport, held) => {
    const { acked, claimed } = await transport.ackAndClaimMany(held.leases, 'probe', VIS, { max: 32 });
    held.leases = claimed;
    return acked.length;
  },
};

async function cpu(backlog: number): Promise<void> {
  console.log(`\n## backlog ${backlog.toLocaleString('en-US')}, ${GROUPS} groups, sqlite-wasm :memory: (µs per message, median of ${ROUNDS} rounds of ${BATCHES} batches)\n`);
  const floorDb = await openWasmDatabase();
  const floor = batchFloorOf(floorDb, backlog, GROUPS, JSON.stringify(EVENT));
  const floorRates: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    let ms = 0;
    for (let b = 0; b < BATCHES; b++) {
      const start = performance.now();
      floor.run();
      ms += performance.now() - start;
      floor.refill();
    }
    if (round > 0) floorRates.push((ms * 1000) / (BATCHES * 32));
  }
  floorDb.close();
  console.log(`batch floor: ${median(floorRates).toFixed(2)} µs per message\n`);
  for (const [name, way] of Object.entries(ways)) {
    const db = timed(await openWasmDatabase());
    const transport = new SqliteTransport<typeof EVENT>(db, { clock: () => now });
    await fill(transport, backlog);
    // Only ackAndClaimMany holds a batch between steps; leases held and never acked would starve the other way.
    const held = { leases: name === 'ackAndClaimMany' ? await transport.claimMany('probe', VIS, { max: 32 }) : [] };
    const totals: number[] = [];
    const perStatement = new Map<string, number[]>();
    for (let round = 0; round <= ROUNDS; round++) {
      spent.clear();
      let ms = 0;
      let messages = 0;
      for (let b = 0; b < BATCHES; b++) {
        now += 1;
        timing = true;
        const start = performance.now();
        const done = await way(transport, held);
        ms += performance.now() - start;
        timing = false;
        messages += done;
        await topUp(transport, done);
      }
      if (round === 0) continue;
      totals.push((ms * 1000) / messages);
      for (const [sql, t] of spent) perStatement.set(sql, [...(perStatement.get(sql) ?? []), (t * 1000) / messages]);
    }
    const total = median(totals);
    console.log(`### ${name}: ${total.toFixed(2)} µs per message (${(total / median(floorRates)).toFixed(2)}× the batch floor)\n`);
    let statements = 0;
    for (const [sql, micros] of [...perStatement].sort((a, b) => median(b[1]) - median(a[1]))) {
      statements += median(micros);
      console.log(`- ${median(micros).toFixed(2)} µs  ${sql.replace(/\s+/g, ' ').slice(0, 150)}`);
    }
    console.log(`- ${(total - statements).toFixed(2)} µs  the rest (the transport's JavaScript, the driver's seam, BEGIN/COMMIT)\n`);
    db.close();
  }
}

/** WAL frames per batch with checkpoints off, on better-sqlite3 (same SQL, same schema). */
async function pages(backlog: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-probe-batches-'));
  try {
    const open = (name: string) => {
      const raw = new BetterSqlite3(join(dir, name));
      raw.pragma('journal_mode = WAL');
      raw.pragma('synchronous = NORMAL');
      raw.pragma('locking_mode = EXCLUSIVE');
      raw.pragma('wal_autocheckpoint = 0');
      return { raw, wal: join(dir, `${name}-wal`) };
    };
    const pageSize = (raw: InstanceType<typeof BetterSqlite3>) => Number(raw.pragma('page_size', { simple: true }));
    const frames = (wal: string, size: number, before: number) => (statSync(wal).size - before) / (size + 24);
    const line: string[] = [];
    {
      const { raw, wal } = open('floor.db');
      const floor = batchFloorOf(fromBetterSqlite(raw), backlog, GROUPS, JSON.stringify(EVENT));
      raw.pragma('wal_checkpoint(TRUNCATE)');
      const size = pageSize(raw);
      let total = 0;
      for (let b = 0; b < 50; b++) {
        const before = statSync(wal).size;
        floor.run();
        total += frames(wal, size, before);
        floor.refill();
      }
      line.push(`batch floor ${(total / 50).toFixed(1)}`);
      raw.close();
    }
    for (const [name, way] of Object.entries(ways)) {
      const { raw, wal } = open(`${name.replace(/\W+/g, '-')}.db`);
      const transport = new SqliteTransport<typeof EVENT>(fromBetterSqlite(raw), { clock: () => now });
      await fill(transport, backlog);
      raw.pragma('wal_checkpoint(TRUNCATE)');
      const size = pageSize(raw);
      const held = { leases: name === 'ackAndClaimMany' ? await transport.claimMany('probe', VIS, { max: 32 }) : [] };
      let total = 0;
      for (let b = 0; b < 50; b++) {
        now += 1;
        const before = statSync(wal).size;
        const done = await way(transport, held);
        total += frames(wal, size, before);
        await topUp(transport, done);
      }
      line.push(`${name} ${(total / 50).toFixed(1)}`);
      raw.close();
    }
    console.log(`WAL frames per batch of 32 (better-sqlite3, checkpoints off): ${line.join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const backlog of backlogs) {
  await cpu(backlog);
  await pages(backlog);
}
