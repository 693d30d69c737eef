/**
 * Transport throughput in Node: claim+ack per second at a steady backlog (1k, 10k, 100k
 * messages over 100 or 10,000 groups), on every backend, beside the seeds' own algorithms
 * (the verbatim claim SQL on the same drivers; the in-memory claim that sorts every message).
 *
 * The backlog is held steady: each timed claim+ack is followed by an untimed publish of a
 * replacement message, so every claim sees the stated backlog. Only claim and ack are timed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { SeedMemoryTransport, SeedSqlTransport } from '../test/support/seed.js';
import { type BenchRow, repeat } from './lib.js';

/** What one contender must do: publish, and one timed claim+ack. Time comes from `tick()`. */
interface Contender {
  publish(groupId: string, event: unknown): Promise<unknown> | unknown;
  claimAck(now: number): Promise<boolean> | boolean;
  close(): void;
}

interface ContenderKind {
  name: string;
  note?: string;
  /** True for the seed's algorithms, whose cost grows with the backlog: measured with fewer operations. */
  seed: boolean;
  open(dir: string): Promise<Contender>;
}

const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) }; // ~100 B of JSON

const ours = (open: (dir: string) => Promise<SqlDatabase>) => async (dir: string): Promise<Contender> => {
  const db = await open(dir);
  let now = 0;
  const transport = new SqliteTransport(db, { clock: () => now });
  return {
    publish: (g, e) => transport.publish(g, e),
    async claimAck(time) {
      now = time;
      const lease = await transport.claim('bench', 30_000);
      if (lease) await transport.ack(lease);
      return lease !== null;
    },
    close: () => db.close(),
  };
};

const seedSql = (open: (dir: string) => Promise<SqlDatabase>) => async (dir: string): Promise<Contender> => {
  const db = await open(dir);
  const seed = new SeedSqlTransport(db);
  return {
    publish: (g, e) => seed.publish(g, e, 0),
    claimAck(now) {
      const seq = seed.claim('bench', 30_000, 0, now);
      if (seq === null) return false;
      const groupId = db.prepare('SELECT group_id FROM messages WHERE seq = ?').get<{ group_id: string }>(seq)!.group_id;
      seed.ack(seq, groupId);
      return true;
    },
    close: () => db.close(),
  };
};

const wasm = () => openWasmDatabase();
const betterFile = (dir: string) => openBetterSqliteDatabase(join(dir, `bench-${Math.random().toString(36).slice(2)}.db`));

export const contenders: ContenderKind[] = [
  {
    name: 'InMemoryTransport',
    seed: false,
    async open() {
      let now = 0;
      const transport = new InMemoryTransport({ clock: () => now });
      return {
        publish: (g, e) => transport.publish(g, e),
        async claimAck(time) {
          now = time;
          const lease = await transport.claim('bench', 30_000);
          if (lease) await transport.ack(lease);
          return lease !== null;
        },
        close: () => {},
      };
    },
  },
  {
    name: 'seed in-memory (sort every claim)',
    note: 'what the seed achieves',
    seed: true,
    async open() {
      const seed = new SeedMemoryTransport();
      return {
        publish: (g, e) => seed.publish(g, e),
        claimAck(now) {
          const lease = seed.claim('bench', 30_000, 0, now);
          if (lease) seed.ack(lease.seq);
          return lease !== null;
        },
        close: () => {},
      };
    },
  },
  { name: 'SqliteTransport, sqlite-wasm', seed: false, open: ours(wasm) },
  { name: 'seed SQL, sqlite-wasm', note: 'what the seed achieves', seed: true, open: seedSql(wasm) },
  { name: 'SqliteTransport, better-sqlite3 file (WAL)', seed: false, open: ours(betterFile) },
  { name: 'seed SQL, better-sqlite3 file (WAL)', note: 'what the seed achieves', seed: true, open: seedSql(betterFile) },
];

async function fill(contender: Contender, backlog: number, groups: number): Promise<void> {
  for (let i = 0; i < backlog; i++) await contender.publish(`g${i % groups}`, EVENT);
}

/** Claim+ack rate at a steady backlog; returns ops/s of one run of `ops` operations. */
async function claimAckRun(contender: Contender, ops: number, groups: number, clock: { t: number }): Promise<number> {
  let elapsed = 0;
  for (let i = 0; i < ops; i++) {
    clock.t += 1;
    const start = performance.now();
    const done = await contender.claimAck(clock.t);
    elapsed += performance.now() - start;
    if (!done) throw new Error('bench: queue ran dry');
    await contender.publish(`g${(clock.t * 7919) % groups}`, EVENT);
  }
  return (ops / elapsed) * 1000;
}

export interface TransportBenchOptions {
  quick: boolean;
}

export async function benchTransport(options: TransportBenchOptions): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-'));
  const rows: BenchRow[] = [];
  const backlogs = options.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const groupCounts = options.quick ? [100] : [100, 10_000];
  const runs = options.quick ? 3 : 5;
  try {
    for (const groups of groupCounts) {
      for (const backlog of backlogs) {
        if (groups > backlog) continue;
        // Contenders alternate within one workload so drift on a shared machine hits all alike.
        for (const kind of contenders) {
          const contender = await kind.open(dir);
          await fill(contender, backlog, groups);
          const clock = { t: 1 };
          const ops = kind.seed ? Math.max(10, Math.min(500, Math.round(2e6 / backlog / (kind.name.includes('memory') ? 4 : 1)))) : kind.name === 'InMemoryTransport' ? 20_000 : 2_000;
          const result = await repeat(runs, () => claimAckRun(contender, ops, groups, clock));
          contender.close();
          rows.push({ workload: `claim+ack, backlog ${backlog.toLocaleString('en-US')}, ${groups.toLocaleString('en-US')} groups`, backend: kind.name, ...result, ...(kind.note ? { note: kind.note } : {}) });
          process.stderr.write('.');
        }
      }
    }
    // Publish rate into a 10k backlog.
    for (const kind of contenders.filter((k) => !k.seed)) {
      const contender = await kind.open(dir);
      await fill(contender, 10_000, 100);
      const ops = kind.name === 'InMemoryTransport' ? 50_000 : 5_000;
      let n = 0;
      const result = await repeat(runs, async () => {
        const start = performance.now();
        for (let i = 0; i < ops; i++) await contender.publish(`g${n++ % 100}`, EVENT);
        return (ops / (performance.now() - start)) * 1000;
      });
      contender.close();
      rows.push({ workload: 'publish (~100 B event), 100 groups', backend: kind.name, ...result });
      process.stderr.write('.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
