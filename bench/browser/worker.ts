/**
 * The in-worker half of the browser benchmark: SqliteTransport straight on opfs-sahpool, with
 * no RPC in between, beside the floor (the cheapest write transaction on the same VFS). Also
 * fills a browser database's backlog before a page opens it (setup, not measured).
 */
import { type SqlDatabase, SqliteTransport } from 'leasehold';
import { fromWasmDatabase, loadSqliteWasm } from 'leasehold/sqlite-wasm';
import { coalesceWalWrites } from '../../src/browser/coalesce.ts';
import { batchFloorOf } from '../batch-floor.ts';

/** Fill the database `name` (as openBrowserDatabase keeps it) with `backlog` messages. */
export interface FillRequest {
  fill: string;
  backlog: number;
  groups: number;
}

export interface WorkerRequest {
  backlog: number;
  groups: number;
  ops: number;
  /** Operations per run with synchronous=FULL, where every commit waits for the disk. */
  fullOps: number;
  runs: number;
  /** PRAGMA cache_size in KiB for the database on disk (SQLite's default when absent: 2,000). */
  cacheKiB?: number;
  /** PRAGMA wal_autocheckpoint in pages (SQLite's default when absent: 1,000). */
  checkpointPages?: number;
}

export interface WorkerResult {
  label: string;
  rates: number[];
  /** For batch rows: the file calls one batch of 32 made, by method, in the timed runs. */
  calls?: string;
}

/**
 * File calls made by this worker, by FileSystemSyncAccessHandle method: on OPFS a call costs
 * the same whatever its size, so a batch's cost follows how many it makes (see BENCHMARKS.md).
 * Counted by wrapping the prototype's methods, which opfs-sahpool calls on each handle.
 */
const fileCalls: Record<string, number> = { write: 0, read: 0, flush: 0, getSize: 0, truncate: 0 };
function countFileCalls(): void {
  const proto = (globalThis as { FileSystemSyncAccessHandle?: { prototype: Record<string, unknown> } }).FileSystemSyncAccessHandle?.prototype;
  if (!proto || proto['leaseholdCounted']) return;
  for (const name of Object.keys(fileCalls)) {
    const original = proto[name] as (...args: unknown[]) => unknown;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      fileCalls[name]! += 1;
      return original.apply(this, args);
    };
  }
  proto['leaseholdCounted'] = true;
}

/** Counts the file calls of timed batches only, and describes them per batch. */
function callTally() {
  const total: Record<string, number> = {};
  let batches = 0;
  return {
    /** Adds one batch: the calls made since `before` (a copy of fileCalls taken as it started). */
    add(before: Record<string, number>): void {
      for (const name of Object.keys(fileCalls)) total[name] = (total[name] ?? 0) + fileCalls[name]! - before[name]!;
      batches += 1;
    },
    describe: () =>
      `file calls a batch: ${Object.entries(total)
        .filter(([, n]) => n > 0)
        .map(([name, n]) => `${(n / Math.max(1, batches)).toFixed(1)} ${name}`)
        .join(', ') || 'none'}`,
  };
}

/** The queue API's batch calls (QUEUE-API.md), used when the transport has them. */
interface Batching {
  claimMany(workerId: string, visibilityMs: number, options: { max: number }): Promise<unknown[]>;
  ackMany(leases: unknown[]): Promise<unknown>;
  ackAndClaimMany(leases: unknown[], workerId: string, visibilityMs: number, options: { max: number }): Promise<{ acked: unknown[]; claimed: unknown[] }>;
  publishMany(items: { groupId: string; event: unknown }[]): Promise<number[]>;
}

const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };

self.onmessage = async (event: MessageEvent<WorkerRequest | FillRequest>) => {
  try {
    const request = event.data;
    postMessage({ results: 'fill' in request ? await fillBrowserDatabase(request) : await measure(request) });
  } catch (error) {
    postMessage({ error: String(error) });
  }
};

async function measure({ backlog, groups, ops: normalOps, fullOps, runs, cacheKiB, checkpointPages }: WorkerRequest): Promise<WorkerResult[]> {
  const sqlite3 = await loadSqliteWasm();
  countFileCalls();
  const pool = await sqlite3.installOpfsSAHPoolVfs({ name: 'leasehold-bench', preserveOnInitFailure: true });
  await pool.wipeFiles();
  // As the browser host opens it (src/browser/opfs.ts): each WAL commit reaches the file in one
  // call when `coalesce`; without, every frame is two calls (a header and a page).
  const open = (synchronous: 'NORMAL' | 'FULL', coalesce: boolean) => {
    const raw = new pool.OpfsSAHPoolDb('/bench.db');
    const db = fromWasmDatabase(sqlite3, raw);
    db.exec(`PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=${synchronous}`);
    if (cacheKiB !== undefined) db.exec(`PRAGMA cache_size=-${cacheKiB}`);
    if (checkpointPages !== undefined) db.exec(`PRAGMA wal_autocheckpoint=${checkpointPages}`);
    db.prepare('PRAGMA schema_version').get();
    if (coalesce && !coalesceWalWrites(sqlite3, raw)) throw new Error('no WAL file to coalesce');
    return db;
  };
  const results: WorkerResult[] = [];
  let db = open('NORMAL', false);
  let now = 1;
  fill(db, backlog, groups);

  for (const synchronous of ['NORMAL', 'FULL'] as const) {
    const durability = synchronous === 'NORMAL' ? 'normal' : 'full';
    const ops = synchronous === 'NORMAL' ? normalOps : fullOps;
    // The floor: two one-row write transactions, what a claim plus an ack cannot go below; on
    // the bare VFS (two file calls a commit), then as the host writes (one).
    for (const coalesce of [false, true]) {
      db.close();
      db = open(synchronous, coalesce);
      db.exec('CREATE TABLE IF NOT EXISTS floor (k INTEGER PRIMARY KEY, v INTEGER); INSERT OR IGNORE INTO floor VALUES (1, 0)');
      const bump = db.prepare('UPDATE floor SET v = v + 1 WHERE k = 1');
      results.push({
        label: `floor${coalesce ? '' : ', bare VFS'}: 2 one-row write transactions, durability ${durability}`,
        rates: timed(runs + 1, ops, () => {
          db.transaction(() => bump.run());
          db.transaction(() => bump.run());
        }).slice(1),
      });
    }
    const floorCalls = callTally();
    results.push({
      label: `batch floor: 32 one-row UPDATEs by key in one transaction, 32 one-row DELETEs in a second, durability ${durability}`,
      rates: batchFloor(db, backlog, groups, ops * 4, runs, floorCalls),
      calls: floorCalls.describe(),
    });
    const transport = new SqliteTransport(db, { clock: () => now });
    const rates: number[] = [];
    for (let run = 0; run <= runs; run++) {
      let elapsed = 0;
      for (let i = 0; i < ops; i++) {
        now += 1;
        const start = performance.now();
        const lease = await transport.claim('bench', 30_000);
        await transport.ack(lease!);
        elapsed += performance.now() - start;
        await transport.publish(`g${(now * 7919) % groups}`, EVENT);
      }
      if (run > 0) rates.push((ops / elapsed) * 1000);
    }
    results.push({ label: `claim+ack in the worker, durability ${durability}`, rates });
    // The same loop with ackAndClaim: each step acks the held lease and claims the next in one commit.
    const combinedRates: number[] = [];
    let held = await transport.claim('bench', 30_000);
    for (let run = 0; run <= runs; run++) {
      let elapsed = 0;
      for (let i = 0; i < ops; i++) {
        now += 1;
        const start = performance.now();
        held = await transport.ackAndClaim(held!, 'bench', 30_000);
        elapsed += performance.now() - start;
        await transport.publish(`g${(now * 7919) % groups}`, EVENT);
      }
      if (run > 0) combinedRates.push((ops / elapsed) * 1000);
    }
    await transport.ack(held!);
    results.push({ label: `claim+ack with ackAndClaim in the worker, durability ${durability}`, rates: combinedRates });
    const batched = transport as unknown as Batching;
    if (typeof batched.claimMany === 'function') {
      // 32 claims in one transaction, then 32 acks in one: two commits per 32 messages.
      const batchRates: number[] = [];
      const batchCalls = callTally();
      for (let run = 0; run <= runs; run++) {
        let elapsed = 0;
        for (let done = 0; done < ops * 4; ) {
          now += 1;
          const before = { ...fileCalls };
          const start = performance.now();
          const leases = await batched.claimMany('bench', 30_000, { max: 32 });
          await batched.ackMany(leases);
          elapsed += performance.now() - start;
          if (run > 0) batchCalls.add(before);
          done += leases.length;
          await batched.publishMany(leases.map((_, i) => ({ groupId: `g${((now + i) * 7919) % groups}`, event: EVENT })));
        }
        if (run > 0) batchRates.push(((ops * 4) / elapsed) * 1000);
      }
      results.push({ label: `claimMany + ackMany of 32 in the worker, durability ${durability}`, rates: batchRates, calls: batchCalls.describe() });
      // One transaction per 32: this batch's acks and the next batch's claims.
      const combinedBatchRates: number[] = [];
      const combinedCalls = callTally();
      let leases = await batched.claimMany('bench', 30_000, { max: 32 });
      for (let run = 0; run <= runs; run++) {
        let elapsed = 0;
        for (let done = 0; done < ops * 4; ) {
          now += 1;
          const before = { ...fileCalls };
          const start = performance.now();
          const { acked, claimed } = await batched.ackAndClaimMany(leases, 'bench', 30_000, { max: 32 });
          elapsed += performance.now() - start;
          if (run > 0) combinedCalls.add(before);
          done += acked.length;
          leases = claimed;
          await batched.publishMany(acked.map((_, i) => ({ groupId: `g${((now + i) * 7919) % groups}`, event: EVENT })));
        }
        if (run > 0) combinedBatchRates.push(((ops * 4) / elapsed) * 1000);
      }
      await batched.ackMany(leases);
      results.push({ label: `ackAndClaimMany of 32 in the worker, durability ${durability}`, rates: combinedBatchRates, calls: combinedCalls.describe() });
    }
    const publishRates = [];
    for (let run = 0; run <= runs; run++) {
      const start = performance.now();
      for (let i = 0; i < ops; i++) await transport.publish(`g${i % groups}`, EVENT);
      if (run > 0) publishRates.push((ops / (performance.now() - start)) * 1000);
    }
    results.push({ label: `publish in the worker, durability ${durability}`, rates: publishRates });
  }
  db.close();
  await pool.wipeFiles();
  pool.pauseVfs();
  results.push(...(await cpuBound(sqlite3, backlog, groups, normalOps, runs)));
  return results;
}

/**
 * The same batches on a database in the worker's memory: no file calls at all, so what is left
 * is SQLite's and the transport's own work. A batch on disk cannot run faster than this.
 */
async function cpuBound(sqlite3: Awaited<ReturnType<typeof loadSqliteWasm>>, backlog: number, groups: number, ops: number, runs: number): Promise<WorkerResult[]> {
  const db = fromWasmDatabase(sqlite3, new sqlite3.oo1.DB(':memory:'));
  try {
    fill(db, backlog, groups);
    const rates = { batchFloor: batchFloor(db, backlog, groups, ops * 4, runs), batches: [] as number[] };
    const transport = new SqliteTransport(db, { clock: () => 1 });
    let leases = await transport.claimMany('bench', 30_000, { max: 32 });
    for (let run = 0; run <= runs; run++) {
      let elapsed = 0;
      for (let done = 0, n = 0; done < ops * 4; ) {
        const start = performance.now();
        const { acked, claimed } = await transport.ackAndClaimMany(leases, 'bench', 30_000, { max: 32 });
        elapsed += performance.now() - start;
        done += acked.length;
        leases = claimed;
        await transport.publishMany(acked.map(() => ({ groupId: `g${(n++ * 7919) % groups}`, event: EVENT })));
      }
      if (run > 0) rates.batches.push(((ops * 4) / elapsed) * 1000);
    }
    return [
      { label: 'batch floor in memory (no file calls: the CPU alone), ratio to the durability normal floor', rates: rates.batchFloor },
      { label: 'ackAndClaimMany of 32 in memory (no file calls: the CPU alone), ratio to the durability normal floor', rates: rates.batches },
    ];
  } finally {
    db.close();
  }
}

/** The batch floor (see bench/batch-floor.ts), messages/s. */
function batchFloor(db: SqlDatabase, backlog: number, groups: number, messages: number, runs: number, calls?: ReturnType<typeof callTally>): number[] {
  const floor = batchFloorOf(db, backlog, groups, JSON.stringify(EVENT));
  const rates: number[] = [];
  for (let run = 0; run <= runs; run++) {
    let elapsed = 0;
    for (let done = 0; done < messages; done += 32) {
      const before = { ...fileCalls };
      const start = performance.now();
      floor.run();
      elapsed += performance.now() - start;
      if (run > 0) calls?.add(before);
      floor.refill();
    }
    if (run > 0) rates.push((messages / elapsed) * 1000);
  }
  db.exec('DROP TABLE bench_batch_floor');
  return rates;
}

function timed(runs: number, ops: number, body: () => void): number[] {
  const rates = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    for (let i = 0; i < ops; i++) body();
    rates.push((ops / (performance.now() - start)) * 1000);
  }
  return rates;
}

/**
 * Fills the backlog in one transaction (setup, not measured): publishing 100,000 messages one
 * transaction at a time takes minutes on OPFS in a private window. Each publish runs as a
 * savepoint of the one transaction, so the rows are exactly what publish writes.
 */
function fill(db: SqlDatabase, backlog: number, groups: number): void {
  const inOne = Object.assign(Object.create(db) as SqlDatabase, { transaction: <T>(body: () => T): T => db.savepoint!(body) });
  db.transaction(() => {
    const transport = new SqliteTransport(inOne, { clock: () => 0 });
    for (let i = 1; i <= backlog; i++) void transport.publish(`g${(i * 7919) % groups}`, EVENT);
  });
}

/** Where openBrowserDatabase keeps database `name` (see src/browser/opfs.ts). */
async function fillBrowserDatabase({ fill: name, backlog, groups }: FillRequest): Promise<[]> {
  const sqlite3 = await loadSqliteWasm();
  const pool = await sqlite3.installOpfsSAHPoolVfs({ name: `leasehold-${name}`, preserveOnInitFailure: true });
  const db = fromWasmDatabase(sqlite3, new pool.OpfsSAHPoolDb('/leasehold.db'));
  db.exec('PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL');
  fill(db, backlog, groups);
  db.close();
  pool.pauseVfs();
  return [];
}
