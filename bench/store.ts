/**
 * Execution-store throughput in Node, per backend: commits per second (an execution with ~1 KB
 * of context, one emit, one timer re-armed, one trace step: what the runtime writes per handled
 * event) and loads per second, beside the floor (one one-row write transaction on the same driver).
 * Each figure is the median of 5 timed runs after a warm-up round, the backends taking turns.
 *
 * `bench/run.ts` imports `benchStore` and prints the rows; nothing here asserts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { Execution, ExecutionStore } from '../src/store/contract.js';
import { InMemoryStore } from '../src/store/memory.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { alternate, type BenchRow, type Entrant, times } from './lib.js';

interface Backend {
  name: string;
  /** Operations per timed run (the in-memory store is ~50× faster, so it gets more). */
  ops: number;
  open(): Promise<{ store: ExecutionStore; close(): void }>;
}

const EXECUTIONS = 1_000;

/** About 1 KB of JSON: the shape of a real workflow context (ids, amounts, a few lines). */
function context(n: number): Record<string, unknown> {
  return {
    orderId: `order-${n}`,
    customer: { id: `cust-${n % 97}`, name: 'Ada Lovelace', email: 'ada@example.com', tier: 'gold' },
    lines: Array.from({ length: 8 }, (_, i) => ({ sku: `SKU-${1000 + i}`, qty: i + 1, price: 9.99 + i, note: 'gift wrap' })),
    shipping: { street: '12 Analytical Engine Way', city: 'London', zip: 'NW1 2DB', country: 'GB' },
    flags: { paid: true, shipped: false, expedite: n % 2 === 0 },
    history: ['created', 'validated', 'reserved', 'charged', 'packing'],
    message: 'Please leave the parcel with the neighbour at number 14 if nobody answers.',
  };
}

/** Ops per second of one timed run of `ops` awaited calls. */
async function rate(ops: number, body: (i: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ops; i++) await body(i);
  return ops / ((performance.now() - start) / 1000);
}

/** Commit and load entrants for one backend; the executions exist once the first commit ran. */
async function entrants(backend: Backend): Promise<{ commit: Entrant; load: Entrant; close(): void }> {
  const { store, close } = await backend.open();
  const executions: Execution[] = Array.from({ length: EXECUTIONS }, (_, n) => ({ id: `exe-${n}`, version: 0, status: 'running', context: context(n) }));
  let clock = 0;
  let i = 0;
  const commit: Entrant = {
    name: backend.name,
    measure: () => rate(backend.ops, async () => {
      const exe = executions[i % EXECUTIONS]!;
      exe.status = i % 3 === 0 ? 'waiting' : 'running';
      clock++;
      i++;
      await store.commit(exe, {
        emits: [{ targetId: `exe-${i % EXECUTIONS}`, event: { type: 'Advance', at: clock } }],
        timers: [{ action: 'schedule', path: 'waiting.timeout', fireAt: clock + 30_000 }],
        trace: { event: 'Advance', from: 'waiting', to: 'running', at: clock },
      });
    }),
  };
  const load: Entrant = { name: backend.name, measure: () => rate(backend.ops, async (n) => void (await store.load(`exe-${(n * 7919) % EXECUTIONS}`))) };
  return { commit, load, close };
}

/** The floor for a commit: one one-row write transaction on the same driver. */
async function floorEntrant(name: string, ops: number, open: () => Promise<SqlDatabase>): Promise<{ commit: Entrant; close(): void }> {
  const db = await open();
  db.exec('CREATE TABLE floor (k INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO floor VALUES (1, 0)');
  const bump = db.prepare('UPDATE floor SET v = v + 1 WHERE k = 1');
  return { commit: { name, measure: () => rate(ops, async () => void db.transaction(() => bump.run())) }, close: () => db.close() };
}

/**
 * Measures every backend, the backends taking turns, and returns one row per (workload, backend).
 * `quick` runs a tenth of the operations, for a smoke check; the figures are then noisier.
 */
export async function benchStore(options: { quick: boolean }): Promise<BenchRow[]> {
  const scale = options.quick ? 0.1 : 1;
  const runs = options.quick ? 3 : 5;
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-store-'));
  const sql = (open: () => Promise<SqlDatabase>) => async () => {
    const db = await open();
    const store = new SqliteStore(db);
    return { store, close: () => db.close() };
  };
  const wasmName = 'SqliteStore, sqlite-wasm :memory:';
  const betterName = 'SqliteStore, better-sqlite3 file (WAL, NORMAL)';
  const backends: Backend[] = [
    {
      name: 'InMemoryStore',
      ops: 200_000 * scale,
      open: async () => {
        const store = new InMemoryStore();
        return { store, close: () => void store.close() };
      },
    },
    { name: wasmName, ops: 20_000 * scale, open: sql(() => openWasmDatabase()) },
    { name: betterName, ops: 20_000 * scale, open: sql(() => openBetterSqliteDatabase(join(dir, 'store.db'))) },
  ];
  try {
    const opened = await Promise.all(backends.map(entrants));
    const floors = [
      await floorEntrant('floor: one-row write transaction, sqlite-wasm', 20_000 * scale, () => openWasmDatabase()),
      await floorEntrant('floor: one-row write transaction, better-sqlite3 file', 20_000 * scale, () => openBetterSqliteDatabase(join(dir, 'floor.db'))),
    ];
    const commits = await alternate(runs, [...opened.map((o) => o.commit), ...floors.map((f) => f.commit)]);
    const loads = await alternate(runs, opened.map((o) => o.load));
    for (const o of [...opened, ...floors]) o.close();
    const floorOf = (name: string) => commits.get(name === wasmName ? floors[0]!.commit.name : floors[1]!.commit.name)!.opsPerSec;
    const rows: BenchRow[] = [];
    for (const [backend, r] of commits) {
      const note = backend.startsWith('floor') ? 'one write transaction per op' : backend === 'InMemoryStore' ? undefined : `cost ${times(floorOf(backend), r.opsPerSec)} the floor`;
      rows.push({ workload: 'store commit (1 KB context, emit, timer, trace)', backend, ...r, ...(note ? { note } : {}) });
    }
    for (const [backend, r] of loads) rows.push({ workload: 'store load (1 KB context)', backend, ...r });
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
