/**
 * `npx tsx bench/postgres/probe-cpu.ts [--workers=1,4] [--n=6000] [--rounds=3] [--durable]`:
 * CPU per message, the server's and this process's, for leasehold's claim → ack and
 * `ackAndClaim`, graphile-worker's runner and the one-row-update floor — the contenders of
 * `npm run bench:postgres`, run the same way (25 jobs a group, 1,000 groups), but each to N
 * finished jobs rather than for a fixed time, and measured in CPU rather than only in wall time.
 *
 * Where workers share 2 cores with their server, throughput follows the CPU a message costs both
 * sides; this says which side, and how much each contender spends. The server's CPU is summed
 * over the postmaster and every child process (backends, WAL writer, checkpointer…) from /proc,
 * so a backend that exits during the run still counts (its parent's child time). Without
 * `--durable` the server runs with `synchronous_commit` off, so that time waiting on the disk
 * does not hide the CPU; with it, the bench's durable settings.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startPostgres } from '../../scripts/postgres.mjs';
import { median, spreadOf } from '../lib.js';
import { floor, leasehold } from './contenders.js';
import { graphileWorker } from './peers.js';
import { cpuTicks } from './proc.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(arg('n') ?? 6000);
const ROUNDS = Number(arg('rounds') ?? 3);
const WORKERS = (arg('workers') ?? '1,4').split(',').map(Number);
const durable = process.argv.includes('--durable');
const GROUPS = 1000;

const server = await startPostgres({
  label: 'leasehold-pg-cpu',
  settings: { shared_buffers: '256MB', ...(durable ? {} : { synchronous_commit: 'off' }) },
});
try {
  const admin = new pg.Pool({ connectionString: server.url, max: 1 });
  const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const postmaster = Number(readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  const serverTicks = (): number => {
    const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return children.reduce((sum, pid) => sum + cpuTicks(Number(pid), true), cpuTicks(postmaster, true));
  };
  const contenders = [leasehold('claim-ack'), leasehold('ackAndClaim'), graphileWorker(false), floor()];
  for (const c of contenders) await c.setup(server.url);
  const results = new Map<string, { server: number[]; client: number[]; rate: number[] }>();
  for (const workers of WORKERS) {
    for (let round = 0; round <= ROUNDS; round++) {
      for (const c of contenders) {
        await c.fill(N + 25 * workers + 1000, GROUPS);
        await admin.query('CHECKPOINT');
        const s0 = serverTicks();
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const running = await c.start(workers);
        while (running.done() < N) await new Promise((resolve) => setTimeout(resolve, 5));
        const done = running.done();
        const wall = performance.now() - t0;
        const client = process.cpuUsage(c0);
        const server = serverTicks() - s0;
        await running.stop();
        if (round === 0) continue; // warm-up
        const key = `${workers} worker${workers === 1 ? '' : 's'}: ${c.name}`;
        const r = results.get(key) ?? { server: [], client: [], rate: [] };
        r.server.push((server * 10_000) / done);
        r.client.push((client.user + client.system) / done);
        r.rate.push((done / wall) * 1000);
        results.set(key, r);
      }
      process.stderr.write('.');
    }
  }
  console.log(`\nCPU µs per message, median of ${ROUNDS} rounds (spread); synchronous_commit ${durable ? 'on' : 'off'}; ${N} jobs a run\n`);
  console.log('| contender | server CPU | client CPU | messages/s |\n| --- | ---: | ---: | ---: |');
  for (const [key, r] of results) {
    console.log(`| ${key} | ${median(r.server).toFixed(0)} (${spreadOf(r.server)}) | ${median(r.client).toFixed(0)} (${spreadOf(r.client)}) | ${median(r.rate).toFixed(0)} (${spreadOf(r.rate)}) |`);
  }
  for (const c of contenders) await c.close();
  await admin.end();
} finally {
  server.stop();
}
