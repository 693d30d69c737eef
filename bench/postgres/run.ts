/**
 * `npm run bench:postgres [-- --quick] [-- --workers=1,4] [-- --seconds=2] [-- --runs=3] [-- --backlog=30000] [-- --only=leasehold,floor] [-- --profile] [-- --bloat] [-- --ab]`:
 * claim+ack throughput on one real PostgreSQL server — leasehold beside pg-boss and
 * graphile-worker and the single-row-update floor, at 1…32 concurrent workers, interleaved —
 * or (`--bloat`) table and index sizes after 1M messages (see bloat.ts). Prints Markdown tables
 * and writes a JSON record to bench/results/.
 *
 * The server is LEASEHOLD_PG_URL if set, else a throwaway cluster started by
 * scripts/postgres.mjs with durable settings: fsync, full_page_writes and synchronous_commit at
 * PostgreSQL's defaults (on), unlike the test cluster.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { startPostgres } from '../../scripts/postgres.mjs';
import { type BenchRow, median, spreadOf, table, times } from '../lib.js';
import { runBloat } from './bloat.js';
import { floor, leasehold, type LeaseholdBuild, type PgContender } from './contenders.js';
import { graphileWorker, pgBoss } from './peers.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = process.argv.includes('--quick');
const bloat = process.argv.includes('--bloat');
const workerCounts = (arg('workers') ?? (quick ? '1,4,16' : '1,2,4,8,16,32')).split(',').map(Number);
const seconds = Number(arg('seconds') ?? (quick ? 1 : 1.5));
const runs = Number(arg('runs') ?? (quick ? 1 : 3));
const only = arg('only')?.split(',');
const GROUPS = 1000;
/** Server settings beside the script's own (listen address, port, max_connections 200). */
const profile = process.argv.includes('--profile');
const SETTINGS: Record<string, string> = { shared_buffers: '256MB', ...(profile ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {}) };

const started = new Date();
const server = await startPostgres({ label: 'leasehold-pg-bench', settings: SETTINGS });
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
const serverInfo = Object.fromEntries(
  (await admin.query(`SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes',
    'wal_level', 'shared_buffers', 'autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor', 'max_connections', 'checkpoint_timeout', 'max_wal_size')`)).rows.map((r) => [r.name, r.setting]),
);
console.log(`server ${server.throwaway ? '(throwaway cluster)' : '(LEASEHOLD_PG_URL)'}: ${JSON.stringify(serverInfo)}`);
if (profile) await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

process.on('uncaughtException', (e) => {
  console.error(e);
  server.stop();
  process.exit(1);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.stop();
    process.exit(130);
  });
}

/** `--profile`: the statements (inside functions too) that took the most server time, from pg_stat_statements. */
async function printProfile(): Promise<void> {
  const { rows } = await admin.query(`SELECT calls, round(total_exec_time)::int AS ms, round((total_exec_time / calls * 1000)::numeric, 1) AS us_per_call,
    wal_records, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 25`);
  console.log('\n### pg_stat_statements (top 25 by total time)\n');
  for (const r of rows) console.log(`${String(r.ms).padStart(7)} ms ${String(r.calls).padStart(8)} calls ${String(r.us_per_call).padStart(8)} µs ${String(r.wal_records).padStart(8)} wal  ${r.query}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runThroughput(): Promise<Record<string, unknown>> {
  const all: PgContender[] = [
    leasehold('claim-ack'), leasehold('ackAndClaim'), leasehold('claimMany'), leasehold('ackAndClaimMany'), leasehold('ackAndClaim-before'),
    pgBoss(1), pgBoss(10), graphileWorker(false), graphileWorker(true), floor(),
  ];
  // LEASEHOLD_BENCH_PARENT=<worktree of another commit>: its claim → ack and ackAndClaim too, for an A/B in one run.
  const parent = process.env.LEASEHOLD_BENCH_PARENT;
  if (parent) {
    const other = (await import(`${parent}/src/postgres/index.ts`)) as Pick<LeaseholdBuild, 'fromPg' | 'PostgresTransport'>;
    const build: LeaseholdBuild = { key: 'parent', label: `parent (${parent})`, fromPg: other.fromPg, PostgresTransport: other.PostgresTransport };
    all.splice(2, 0, leasehold('claim-ack', undefined, build), leasehold('ackAndClaim', undefined, build));
  }
  // `--ab`: only the single-message loops (this build's and the parent's) and graphile-worker's runner.
  const ab = (c: PgContender) => /^leasehold (claim → ack|ackAndClaim)(, parent|$)/.test(c.name) || c.name === 'graphile-worker runner';
  const contenders = all.filter((c) => (!only || only.some((o) => c.name.includes(o))) && (!process.argv.includes('--ab') || ab(c)));
  for (const c of contenders) await c.setup(server.url);
  /** Jobs queued before each timed run, the same for every contender (pg-boss's fetch slows as its backlog grows). */
  const backlog = Number(arg('backlog') ?? (quick ? 10_000 : 25_000));
  const rows: BenchRow[] = [];
  const loads: Record<number, string[]> = {};
  const measure = async (c: PgContender, workers: number): Promise<number> => {
    const key = `${c.name}@${workers}`;
    const n = backlog;
    await c.fill(n, GROUPS);
    await admin.query('CHECKPOINT');
    const running = await c.start(workers);
    await sleep(250);
    const c0 = running.done();
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const c1 = running.done();
    const t1 = performance.now();
    await running.stop();
    const rate = (c1 - c0) / ((t1 - t0) / 1000);
    if (c1 >= n - workers * 10) process.stderr.write(`\n  ${key}: the queue ran dry (${c1}/${n}): the rate is a lower bound; raise --backlog\n`);
    return rate;
  };
  if (profile) await admin.query('SELECT pg_stat_statements_reset()');
  for (const workers of workerCounts) {
    const rates = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    loads[workers] = [];
    // A warm-up round, then `runs` rounds in which every contender runs once: drift hits all alike.
    for (let round = 0; round <= runs; round++) {
      for (const c of contenders) {
        const rate = await measure(c, workers);
        if (round > 0) rates.get(c.name)!.push(rate);
        process.stderr.write('.');
      }
      loads[workers]!.push(load());
    }
    const best = median(rates.get(contenders[0]!.name)!);
    for (const c of contenders) {
      const r = rates.get(c.name)!;
      rows.push({ workload: `${workers} worker${workers > 1 ? 's' : ''}`, backend: c.name, opsPerSec: median(r), spread: spreadOf(r), rates: r, note: c === contenders[0] ? `load ${loads[workers]!.at(-1)}` : `${contenders[0]!.name}: ${times(best, median(r))}` });
    }
    process.stderr.write(` ${workers} workers done (load ${load()})\n`);
  }
  for (const c of contenders) await c.close();
  if (profile) await printProfile();
  console.log(`\n### claim + ack on PostgreSQL (jobs/s; each contender fetches and completes; floor: transactions/s)\n\n${table(rows, 'jobs/s')}`);
  console.log('\nWhat each row measures:');
  for (const c of contenders) console.log(`- ${c.name}: ${c.measures}`);
  return { rows, loads, groups: GROUPS, backlog, measures: Object.fromEntries(contenders.map((c) => [c.name, c.measures])) };
}

const version = (pkg: string): string => {
  try {
    return JSON.parse(readFileSync(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
  } catch {
    return 'not installed';
  }
};

let results: Record<string, unknown>;
try {
  results = bloat ? await runBloat(admin, server.url, { quick, messages: Number(arg('messages') ?? (quick ? 100_000 : 1_000_000)) }) : await runThroughput();
} finally {
  await admin.end();
  server.stop();
}
const record = {
  started: started.toISOString(),
  seconds: Math.round((Date.now() - started.getTime()) / 1000),
  quick,
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}`, node: process.version, loadAverageAtEnd: os.loadavg() },
  server: { ...serverInfo, throwaway: server.throwaway, extraSettings: SETTINGS },
  versions: Object.fromEntries(['pg', 'pg-boss', 'graphile-worker'].map((p) => [p, version(p)])),
  parameters: { workerCounts, seconds, runs, groups: GROUPS },
  results,
};
mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
const file = new URL(`../results/postgres-${bloat ? 'bloat-' : ''}${started.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(record, null, 2));
console.log(`\nversions: ${JSON.stringify(record.versions)}; node ${process.version}; load at end ${load()}\nwrote ${file.pathname}`);
