/**
 * consume() in Node: how many messages a consumer drains per second with concurrency 1, 4 and
 * 16, on each backend, beside the same backend driven by a hand-written ackAndClaim loop, the
 * floor (two one-row write transactions per message) and, on better-sqlite3, plainjob.
 *
 * Each timed run publishes `ops` messages over 100 groups (untimed), then starts a consumer
 * whose handler resolves at once, and stops the clock when `stop()` has settled after the last
 * message was handled (its ack included). Real clock and timers: this is the loop as users run it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { consume } from '../src/consume/consume.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { Transport } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { contenders, type Driver, type Queue } from './contenders.js';
import { alternate, type BenchRow, type Entrant, times } from './lib.js';
import { EVENT_100B } from './transport.js';

const CONCURRENCY = [1, 4, 16] as const;
const GROUPS = Array.from({ length: 100 }, (_, i) => `g${i}`);

interface Backend {
  driver: Driver;
  label: string;
  open(dir: string): Promise<{ transport: Transport; close(): void }>;
}

const sql = (db: SqlDatabase) => ({ transport: new SqliteTransport(db), close: () => db.close() });
const backends: Backend[] = [
  { driver: 'memory', label: 'InMemoryTransport', open: async () => ({ transport: new InMemoryTransport(), close() {} }) },
  { driver: 'sqlite-wasm', label: 'SqliteTransport, sqlite-wasm :memory:', open: async () => sql(await openWasmDatabase()) },
  { driver: 'better-sqlite3', label: 'SqliteTransport, better-sqlite3 file (WAL, NORMAL)', open: async (dir) => sql(await openBetterSqliteDatabase(join(dir, `consume-${Math.random().toString(36).slice(2)}.db`))) },
];

/** One timed run: publish `ops` (untimed), then drain them with a fresh consumer. */
async function drain(transport: Transport, ops: number, concurrency: number): Promise<number> {
  for (let i = 0; i < ops; i++) await transport.publish(GROUPS[i % GROUPS.length]!, EVENT_100B);
  let handled = 0;
  let allHandled!: () => void;
  const finished = new Promise<void>((resolve) => (allHandled = resolve));
  const start = performance.now();
  const consumer = consume(transport, async () => {
    if (++handled === ops) allHandled();
  }, { concurrency, onError: (error) => console.error(error) });
  await finished;
  await consumer.stop({ graceMs: Infinity });
  const elapsed = performance.now() - start;
  if (consumer.handled !== ops) throw new Error(`bench: ${consumer.handled} of ${ops} acked`);
  return (ops / elapsed) * 1000;
}

/** A claim+ack loop over one of bench/contenders.ts's queues, `ops` times, as a reference. */
async function loop(queue: Queue, ops: number, clock: { t: number }): Promise<number> {
  for (let i = 0; i < ops; i++) await queue.publish(GROUPS[i % GROUPS.length]!, EVENT_100B);
  const start = performance.now();
  for (let i = 0; i < ops; i++) if (!(await queue.claimAck(++clock.t, 'bench'))) throw new Error('bench: queue ran dry');
  return (ops / (performance.now() - start)) * 1000;
}

export async function benchConsume(options: { quick: boolean }): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-consume-'));
  const runs = options.quick ? 3 : 5;
  const rows: BenchRow[] = [];
  try {
    for (const backend of backends) {
      const ops = (backend.driver === 'memory' ? 20_000 : 2_000) / (options.quick ? 2 : 1);
      const entrants: Entrant[] = [];
      const closers: (() => void)[] = [];
      for (const concurrency of CONCURRENCY) {
        const { transport, close } = await backend.open(dir);
        closers.push(close);
        entrants.push({ name: `consume(), concurrency ${concurrency}`, measure: () => drain(transport, ops, concurrency) });
      }
      const references = contenders.filter((c) => c.driver === backend.driver && (c.family === 'floor' || c.family === 'peer' || c.name.includes('ackAndClaim')));
      for (const c of references) {
        const queue = await c.open(dir);
        closers.push(() => queue.close());
        const clock = { t: 1 };
        entrants.push({ name: c.family === 'leasehold' ? 'hand-written ackAndClaim loop' : c.name, measure: () => loop(queue, ops, clock) });
      }
      const results = await alternate(runs, entrants);
      const floor = [...results].find(([name]) => name.startsWith('floor'))?.[1].opsPerSec;
      for (const [name, r] of results) {
        const row: BenchRow = { workload: `consume() drains ${ops.toLocaleString('en-US')} messages, 100 groups, ~100 B event: ${backend.label}`, backend: name, ...r };
        if (name.startsWith('consume') && floor) row.note = `cost ${times(floor, r.opsPerSec)} the floor`;
        if (name.startsWith('floor')) row.note = 'two write transactions per message';
        rows.push(row);
      }
      for (const close of closers) close();
      process.stderr.write('.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
