/**
 * `npx tsx bench/probe-drain.ts [--tree=<dir>] [--mode=consume|batches] [--n=10000] [--runs=3] [--count] [--exec=<sql>]`:
 * drains `n` messages (100 groups, ~100 B events) from a better-sqlite3 file (WAL, NORMAL), the
 * way issue 45's harness did: `consume()` at concurrency 16, or `claimMany(32)` then
 * `ackAndClaimMany(32)` until the queue is empty. `--tree` loads the library from another
 * checkout (a worktree of an older commit), so one script times both sides of an A/B, and
 * `--cpu-prof` on node profiles either. `--count` wraps the database's statements and prints
 * how many ran per message, by statement, and the time spent in each. Prints one rate per run (messages/s) and the process's CPU time per message (user + system, µs),
 * which a shared machine moves less than it moves the rate. Not part of
 * `npm run bench`; nothing here is asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const tree = resolve(option('tree') ?? new URL('..', import.meta.url).pathname);
const mode = option('mode') ?? 'consume';
const N = Number(option('n') ?? 10_000);
const RUNS = Number(option('runs') ?? 3);
const count = process.argv.includes('--count');
// Statements run once after the tables are made (a trigger dropped, an index…), `;` between them.
const exec = option('exec');
const GROUPS = Array.from({ length: 100 }, (_, i) => `g${i}`);
const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };

interface Stmt { run(...p: unknown[]): number; get(...p: unknown[]): unknown; all(...p: unknown[]): unknown[] }
interface Db { prepare(sql: string): Stmt; transaction<T>(body: () => T): T; close(): void }
interface Lease { groupId: string }
interface Q {
  publishMany(items: { groupId: string; event: unknown }[]): Promise<number[]>;
  claimMany(w: string, v: number, o: { max: number }): Promise<Lease[]>;
  ackAndClaimMany(l: Lease[], w: string, v: number, o: { max: number }): Promise<{ acked: Lease[]; claimed: Lease[] }>;
}

const { openBetterSqliteDatabase } = (await import(join(tree, 'src/sqlite/better.ts'))) as { openBetterSqliteDatabase(f: string): Promise<Db> };
const { SqliteTransport } = (await import(join(tree, 'src/transport/sqlite.ts'))) as { SqliteTransport: new (db: Db) => Q };
const { consume } = (await import(join(tree, 'src/consume/consume.ts'))) as {
  consume(t: Q, h: () => Promise<void>, o: object): { stop(o: object): Promise<void>; handled: number };
};

const counts = new Map<string, number>();
const spent = new Map<string, number>();
let transactions = 0;
function counting(db: Db): Db {
  const wrap = (sql: string, s: Stmt): Stmt => {
    const timed = <T>(call: () => T): T => {
      const start = performance.now();
      try {
        return call();
      } finally {
        counts.set(sql, (counts.get(sql) ?? 0) + 1);
        spent.set(sql, (spent.get(sql) ?? 0) + performance.now() - start);
      }
    };
    return {
      run: (...p) => timed(() => s.run(...p)),
      get: (...p) => timed(() => s.get(...p)),
      all: (...p) => timed(() => s.all(...p)),
    };
  };
  return Object.assign(Object.create(db) as Db, {
    prepare: (sql: string) => wrap(sql, db.prepare(sql)),
    transaction: <T>(body: () => T) => (transactions++, db.transaction(body)),
  });
}

async function drain(dir: string, run: number): Promise<{ rate: number; cpuUs: number }> {
  const raw = await openBetterSqliteDatabase(join(dir, `drain-${run}.db`));
  const db = count ? counting(raw) : raw;
  const transport = new SqliteTransport(db);
  if (exec) for (const sql of exec.split(';')) if (sql.trim()) raw.prepare(sql).run();
  for (let from = 0; from < N; from += 1000) {
    await transport.publishMany(Array.from({ length: Math.min(1000, N - from) }, (_, i) => ({ groupId: GROUPS[(from + i) % GROUPS.length]!, event: EVENT })));
  }
  counts.clear();
  spent.clear();
  transactions = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  if (mode === 'consume') {
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const consumer = consume(transport, async () => {
      if (++handled === N) done();
    }, { concurrency: 16, onError: (e: unknown) => console.error(e) });
    await finished;
    await consumer.stop({ graceMs: Infinity });
    if (consumer.handled !== N) throw new Error(`${consumer.handled} of ${N} handled`);
  } else {
    let acked = 0;
    let leases = await transport.claimMany('w', 30_000, { max: 32 });
    while (leases.length > 0) {
      const r = await transport.ackAndClaimMany(leases, 'w', 30_000, { max: 32 });
      acked += r.acked.length;
      leases = r.claimed;
    }
    if (acked !== N) throw new Error(`${acked} of ${N} acked`);
  }
  const rate = (N / (performance.now() - start)) * 1000;
  const cpu = process.cpuUsage(cpuStart);
  raw.close();
  return { rate, cpuUs: (cpu.user + cpu.system) / N };
}

const dir = mkdtempSync(join(tmpdir(), 'leasehold-probe-drain-'));
try {
  const runs: { rate: number; cpuUs: number }[] = [];
  for (let run = 0; run < RUNS; run++) runs.push(await drain(dir, run));
  console.log(JSON.stringify({ tree, mode, n: N, rates: runs.map((r) => Math.round(r.rate)), cpuUs: runs.map((r) => Number(r.cpuUs.toFixed(1))) }));
  if (count) {
    console.log(`transactions per message: ${(transactions / N).toFixed(3)}`);
    for (const [sql, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`${(n / N).toFixed(3)} a message, ${((spent.get(sql)! * 1000) / N).toFixed(1)} µs a message  ${sql.slice(0, 120)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
