/**
 * The queue API in Node, on each backend, measured in turns (see `alternate`):
 * - claim+ack in batches (`claimMany` + `ackMany` of 8 and 32) beside one at a time (`claim` +
 *   `ack`, and `ackAndClaim`), the driver's floor (two one-row write transactions per
 *   message) and the batch floor (the least SQL a batch of 32 claims and acks could run), at a
 *   steady backlog of 10,000 messages in 1,000 groups, messages/s;
 * - publish in batches of 32 (`publishMany`) beside one at a time, messages/s;
 * - `stats()` and `inspect()` at 100,000 queued in 10,000 groups, calls/s.
 * Every message claimed is replaced by an untimed publish, so each run sees the same backlog.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { PublishItem, Transport } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { batchFloorOf } from './batch-floor.js';
import { alternate, type BenchRow, type Entrant, times } from './lib.js';
import { EVENT_100B } from './transport.js';

const VISIBILITY_MS = 30_000;

interface Backend {
  name: string;
  open(dir: string): Promise<{ transport: Transport; clock: { t: number }; db?: SqlDatabase; close(): void }>;
}

let files = 0;
const backends: Backend[] = [
  {
    name: 'InMemoryTransport',
    async open() {
      const clock = { t: 1 };
      const transport = new InMemoryTransport({ clock: () => clock.t });
      return { transport, clock, close: () => void transport.close() };
    },
  },
  {
    name: 'SqliteTransport, sqlite-wasm :memory:',
    async open() {
      const db = await openWasmDatabase();
      const clock = { t: 1 };
      return { transport: new SqliteTransport(db, { clock: () => clock.t }), clock, db, close: () => db.close() };
    },
  },
  {
    name: 'SqliteTransport, better-sqlite3 file (WAL, NORMAL)',
    async open(dir) {
      const db = await openBetterSqliteDatabase(join(dir, `queue-${++files}.db`));
      const clock = { t: 1 };
      return { transport: new SqliteTransport(db, { clock: () => clock.t }), clock, db, close: () => db.close() };
    },
  },
];

const ids = (groups: number) => Array.from({ length: groups }, (_, i) => `g${i}`);

async function fill(transport: Transport, count: number, groups: string[]): Promise<void> {
  for (let i = 0; i < count; i += 1000) {
    const items: PublishItem[] = [];
    for (let j = i; j < Math.min(count, i + 1000); j++) items.push({ groupId: groups[j % groups.length]!, event: EVENT_100B });
    await transport.publishMany(items);
  }
}

/** The cheapest write transaction of the driver, twice per message (a claim and an ack). */
function floorOf(db: SqlDatabase): () => void {
  db.exec('CREATE TABLE IF NOT EXISTS bench_floor (k INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT OR IGNORE INTO bench_floor VALUES (1, 0)');
  const bump = db.prepare('UPDATE bench_floor SET v = v + 1 WHERE k = 1');
  return () => {
    db.transaction(() => bump.run());
    db.transaction(() => bump.run());
  };
}

type Way = 'claim+ack' | 'ackAndClaim' | 'batch 8' | 'batch 32' | 'ackAndClaimMany 32' | 'floor' | 'batch floor';

/** Processes `messages` messages the given way; returns messages/s (the refills are untimed). */
async function consumeRun(way: Way, transport: Transport, clock: { t: number }, messages: number, groups: string[], floor?: () => void, batchFloor?: { run(): void; refill(): void }): Promise<number> {
  let elapsed = 0;
  let refill = 0;
  const replace = async (count: number) => {
    const items: PublishItem[] = [];
    for (let i = 0; i < count; i++) items.push({ groupId: groups[(refill++ * 7919) % groups.length]!, event: EVENT_100B });
    await transport.publishMany(items);
  };
  if (way === 'ackAndClaim') {
    let lease = await transport.claim('bench', VISIBILITY_MS);
    for (let i = 0; i < messages; i++) {
      clock.t += 1;
      const start = performance.now();
      lease = await transport.ackAndClaim(lease!, 'bench', VISIBILITY_MS);
      elapsed += performance.now() - start;
      if (!lease) throw new Error('bench: queue ran dry');
      await replace(1);
    }
    await transport.ack(lease!);
    await replace(1);
    return (messages / elapsed) * 1000;
  }
  if (way === 'ackAndClaimMany 32') {
    // One call per 32: this batch's acks and the next batch's claims.
    let leases = await transport.claimMany('bench', VISIBILITY_MS, { max: 32 });
    for (let done = 0; done < messages; done += 32) {
      clock.t += 1;
      const start = performance.now();
      const { claimed } = await transport.ackAndClaimMany(leases, 'bench', VISIBILITY_MS, { max: 32 });
      elapsed += performance.now() - start;
      if (claimed.length < 32) throw new Error('bench: queue ran dry');
      leases = claimed;
      await replace(32);
    }
    await transport.ackMany(leases);
    await replace(32);
    return (messages / elapsed) * 1000;
  }
  const size = way === 'batch 8' ? 8 : way === 'batch 32' || way === 'batch floor' ? 32 : 1;
  for (let done = 0; done < messages; done += size) {
    clock.t += 1;
    const start = performance.now();
    if (way === 'floor') {
      floor!();
    } else if (way === 'batch floor') {
      batchFloor!.run();
    } else if (size === 1) {
      await transport.ack((await transport.claim('bench', VISIBILITY_MS))!);
    } else {
      const leases = await transport.claimMany('bench', VISIBILITY_MS, { max: size });
      if (leases.length < size) throw new Error('bench: queue ran dry');
      await transport.ackMany(leases);
    }
    elapsed += performance.now() - start;
    if (way === 'batch floor') batchFloor!.refill();
    else if (way !== 'floor') await replace(size);
  }
  return (messages / elapsed) * 1000;
}

export async function benchQueue(options: { quick: boolean }): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-queue-'));
  const runs = options.quick ? 3 : 5;
  const rows: BenchRow[] = [];
  try {
    // Batches against one at a time and the floor, one backend at a time (each its own turns).
    const backlog = options.quick ? 2_000 : 10_000;
    const groups = ids(1_000);
    for (const backend of backends) {
      const entrants: Entrant[] = [];
      const open: { close(): void }[] = [];
      const batchWays: Way[] = ['batch 8', 'batch 32', 'ackAndClaimMany 32'];
      const ways: Way[] = backend.name.startsWith('InMemory') ? ['claim+ack', 'ackAndClaim', ...batchWays] : ['floor', 'batch floor', 'claim+ack', 'ackAndClaim', ...batchWays];
      for (const way of ways) {
        const opened = await backend.open(dir);
        open.push(opened);
        await fill(opened.transport, backlog, groups);
        const floor = way === 'floor' ? floorOf(opened.db!) : undefined;
        const batchFloor = way === 'batch floor' ? batchFloorOf(opened.db!, backlog, groups.length, JSON.stringify(EVENT_100B)) : undefined;
        const messages = backend.name.startsWith('InMemory') ? 32_000 : 1_600;
        entrants.push({ name: way, measure: () => consumeRun(way, opened.transport, opened.clock, messages, groups, floor, batchFloor) });
      }
      const results = await alternate(runs, entrants);
      const one = results.get('claim+ack')!.opsPerSec;
      const floor = results.get('floor')?.opsPerSec;
      for (const [way, r] of results) {
        const note = way === 'floor' ? 'two one-row write transactions per message' : way === 'batch floor' ? `per 32 messages: 32 one-row UPDATEs, then 32 one-row DELETEs, one transaction each; ${times(r.opsPerSec, floor!)} the floor` : [way === 'claim+ack' ? '' : `${times(r.opsPerSec, one)} claim+ack`, floor ? `${times(r.opsPerSec, floor)} the floor` : ''].filter(Boolean).join('; ');
        rows.push({ workload: `consume, backlog ${backlog.toLocaleString('en-US')} in 1,000 groups, ${backend.name}`, backend: way === 'floor' ? 'floor' : way, ...r, note });
      }
      for (const o of open) o.close();
      process.stderr.write('.');
    }

    // publishMany of 32 against 32 publishes.
    for (const backend of backends) {
      const entrants: Entrant[] = [];
      const open: { close(): void }[] = [];
      for (const batch of [1, 32]) {
        const opened = await backend.open(dir);
        open.push(opened);
        const messages = backend.name.startsWith('InMemory') ? 64_000 : 3_200;
        let n = 0;
        entrants.push({
          name: batch === 1 ? 'publish, one at a time' : 'publishMany, batches of 32',
          async measure() {
            const start = performance.now();
            for (let i = 0; i < messages; i += batch) {
              if (batch === 1) await opened.transport.publish(groups[n++ % groups.length]!, EVENT_100B);
              else await opened.transport.publishMany(Array.from({ length: batch }, () => ({ groupId: groups[n++ % groups.length]!, event: EVENT_100B })));
            }
            return (messages / (performance.now() - start)) * 1000;
          },
        });
      }
      const results = await alternate(runs, entrants);
      const one = results.get('publish, one at a time')!.opsPerSec;
      for (const [name, r] of results) rows.push({ workload: `publish, ~100 B event, 1,000 groups, ${backend.name}`, backend: name, ...r, note: name.startsWith('publishMany') ? `${times(r.opsPerSec, one)} one at a time` : '' });
      for (const o of open) o.close();
      process.stderr.write('.');
    }

    // stats() and inspect() at a large backlog: calls/s.
    const queued = options.quick ? 20_000 : 100_000;
    for (const backend of backends) {
      const opened = await backend.open(dir);
      await fill(opened.transport, queued, ids(queued / 10));
      // Some groups leased and parked, so the counts have something to tell apart.
      for (const lease of await opened.transport.claimMany('bench', VISIBILITY_MS, { max: 100 })) await opened.transport.nack(lease, lease.seq % 2 ? 0 : 60_000);
      await opened.transport.claimMany('bench', VISIBILITY_MS, { max: 100 });
      const calls = (n: number, call: () => Promise<unknown>) => async () => {
        const start = performance.now();
        for (let i = 0; i < n; i++) await call();
        return (n / (performance.now() - start)) * 1000;
      };
      const results = await alternate(runs, [
        { name: 'stats()', measure: calls(backend.name.startsWith('InMemory') ? 200 : 20, () => opened.transport.stats()) },
        { name: 'inspect()', measure: calls(2, () => opened.transport.inspect()) },
      ]);
      const statsRate = results.get('stats()')!.opsPerSec;
      for (const [name, r] of results) {
        rows.push({ workload: `counting ${queued.toLocaleString('en-US')} queued in ${(queued / 10).toLocaleString('en-US')} groups, ${backend.name}`, backend: name, ...r, note: `${(1000 / r.opsPerSec).toFixed(r.opsPerSec > 1000 ? 3 : 1)} ms a call${name === 'inspect()' ? `; stats() ${times(statsRate, r.opsPerSec)} faster` : ''}` });
      }
      opened.close();
      process.stderr.write('.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
