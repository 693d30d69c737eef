/**
 * Execution-store throughput in Node, per backend: commits per second (an execution with ~1 KB
 * of context, one emit, one timer re-armed, one trace step: what the runtime writes per handled
 * event) and loads per second. Each figure is the median of 5 timed runs after a warm-up run.
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
import { repeat, type BenchRow } from './lib.js';

interface Backend {
  name: string;
  /** Operations per timed run (the in-memory store is ~50× faster, so it gets more). */
  ops: number;
  open(): Promise<{ store: ExecutionStore; close(): void }>;
}

const EXECUTIONS = 1_000;
const RUNS = 5;

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

async function benchBackend(backend: Backend): Promise<BenchRow[]> {
  const { store, close } = await backend.open();
  try {
    const executions: Execution[] = Array.from({ length: EXECUTIONS }, (_, n) => ({ id: `exe-${n}`, version: 0, status: 'running', context: context(n) }));
    let clock = 0;
    const commits = await repeat(RUNS, () => rate(backend.ops, async (i) => {
      const exe = executions[i % EXECUTIONS]!;
      exe.status = i % 3 === 0 ? 'waiting' : 'running';
      clock++;
      await store.commit(exe, {
        emits: [{ targetId: `exe-${(i + 1) % EXECUTIONS}`, event: { type: 'Advance', at: clock } }],
        timers: [{ action: 'schedule', path: 'waiting.timeout', fireAt: clock + 30_000 }],
        trace: { event: 'Advance', from: 'waiting', to: 'running', at: clock },
      });
    }));
    const loads = await repeat(RUNS, () => rate(backend.ops, async (i) => {
      await store.load(`exe-${(i * 7919) % EXECUTIONS}`);
    }));
    return [
      { workload: 'store commit (1 KB context, emit, timer, trace)', backend: backend.name, ...commits },
      { workload: 'store load', backend: backend.name, ...loads },
    ];
  } finally {
    close();
  }
}

/**
 * Measures every backend and returns one row per (workload, backend). `quick` runs a tenth of
 * the operations, for a smoke check; the figures are then noisier.
 */
export async function benchStore(options: { quick: boolean }): Promise<BenchRow[]> {
  const scale = options.quick ? 0.1 : 1;
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-store-'));
  const sql = (open: () => Promise<SqlDatabase>) => async () => {
    const db = await open();
    const store = new SqliteStore(db);
    return { store, close: () => db.close() };
  };
  const backends: Backend[] = [
    {
      name: 'InMemoryStore',
      ops: 200_000 * scale,
      open: async () => {
        const store = new InMemoryStore();
        return { store, close: () => void store.close() };
      },
    },
    { name: 'SqliteStore / sqlite-wasm :memory:', ops: 20_000 * scale, open: sql(() => openWasmDatabase()) },
    { name: 'SqliteStore / better-sqlite3 file (WAL)', ops: 20_000 * scale, open: sql(() => openBetterSqliteDatabase(join(dir, 'store.db'))) },
  ];
  try {
    const rows: BenchRow[] = [];
    for (const backend of backends) rows.push(...(await benchBackend(backend)));
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
