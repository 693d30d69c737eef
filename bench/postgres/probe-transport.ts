/**
 * `npx tsx bench/postgres/probe-transport.ts [--n=3000] [--rounds=3] [--defs] [--only=0,2]`:
 * where a claim → ack's time goes between PostgresTransport and the server, one call at a time
 * (no contention), `synchronous_commit` off so that CPU, not the WAL flush, is measured. The
 * variants (`--only` picks them by index) are the transport as shipped, the transport with the
 * after-commit notices switched off, and the same two statements sent straight through the pool
 * or one client; `LEASEHOLD_BENCH_PARENT` adds another build's transport. Each variant claims and
 * acks N messages from a freshly filled queue, alternating in every round. Prints the median of
 * the rounds per claim → ack: wall time, this process's CPU time and the server's (every process
 * of the cluster, from /proc), with spreads. `--defs` prints the functions' current source.
 */
import pg from 'pg';
import { startPostgres } from '../../scripts/postgres.mjs';
import { fromPg, PostgresTransport } from '../../src/postgres/index.js';
import { median, spreadOf } from '../lib.js';
import { cpuTicks } from './proc.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const N = Number(arg('n') ?? 3000);
const ROUNDS = Number(arg('rounds') ?? 3);
const schema = 'probe';
const server = await startPostgres({ label: 'leasehold-pg-probe', settings: { shared_buffers: '256MB', synchronous_commit: 'off' } });
try {
  const admin = new pg.Pool({ connectionString: server.url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const filler = new PostgresTransport(fromPg(admin), { schema });
  await filler.stats();
  if (process.argv.includes('--defs')) {
    for (const f of ['lh_claim_one', 'lh_ack', 'lh_ack_claim_one', 'lh_claim', 'lh_low_water']) {
      const { rows } = await admin.query(`SELECT pg_get_functiondef(p.oid) AS d FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = $2`, [schema, f]);
      for (const r of rows) console.log(r.d);
    }
  }
  const fill = async () => {
    await admin.query(`TRUNCATE ${schema}.lh_messages, ${schema}.lh_groups`);
    for (let i = 0; i < N + 100; i += 2000) await filler.publishMany(Array.from({ length: Math.min(2000, N + 100 - i) }, (_, k) => ({ groupId: `g${(i + k) % 1000}`, event: { n: i + k } })));
    await admin.query(`VACUUM ANALYZE ${schema}.lh_groups, ${schema}.lh_messages`);
  };
  const [{ id: qid, claims }] = (await admin.query(`SELECT id, to_regclass('${schema}.lh_q' || id || '_claims')::oid::int8 AS claims FROM ${schema}.lh_queues`)).rows;
  const s = schema;
  const claimSql = `SELECT * FROM ${s}.lh_claim_one($1, $2, $3, $4, $5, $6, $7)`;
  const ackSql = `SELECT ${s}.lh_ack($1, $2, $3, $4, $5, $6) AS ok`;
  type Variant = { name: string; run: () => Promise<void> };
  const pool = new pg.Pool({ connectionString: server.url, max: 2, idleTimeoutMillis: 0 });
  await Promise.all([pool.connect(), pool.connect()]).then((cs) => cs.forEach((c) => c.release()));
  const viaTransport = (db: ReturnType<typeof fromPg>) => async () => {
    const t = new PostgresTransport(db, { schema });
    await t.stats();
    for (let i = 0; i < N; i++) {
      const lease = (await t.claim('w0', 30_000))!;
      await t.ack(lease);
    }
    await t.close();
  };
  const raw = (on: { query: pg.Pool['query'] }, named: boolean) => async () => {
    for (let i = 0; i < N; i++) {
      const cv = [qid, claims, 'w0', 30_000, 0, null, null];
      const { rows } = named ? await on.query({ name: 'c', text: claimSql, values: cv }) : await on.query(claimSql, cv);
      const r = rows[0];
      const av = [qid, r.o_group, Number(r.o_seq), r.o_attempt, 'w0', null];
      const a = named ? await on.query({ name: 'a', text: ackSql, values: av }) : await on.query(ackSql, av);
      if (!a.rows[0].ok) throw new Error('lost');
    }
  };
  const variants: Variant[] = [
    { name: 'transport (fromPg, as shipped)', run: viaTransport(fromPg(pool)) },
    { name: 'transport, notify() a no-op', run: viaTransport({ ...fromPg(pool), notify: () => {} }) },
    { name: 'pool.query, named statements', run: raw(pool, true) },
    {
      name: 'one client, named statements',
      run: async () => {
        const c = await pool.connect();
        try {
          await raw(c as unknown as pg.Pool, true)();
        } finally {
          c.release();
        }
      },
    },
    { name: 'pool.query, unnamed', run: raw(pool, false) },
  ];
  const only = arg('only')?.split(',');
  if (only) variants.splice(0, variants.length, ...variants.filter((_, i) => only.includes(String(i))));
  // LEASEHOLD_BENCH_PARENT=<worktree of another commit>: its transport too, in the same rounds.
  const parent = process.env.LEASEHOLD_BENCH_PARENT;
  if (parent) {
    const other = (await import(`${parent}/src/postgres/index.ts`)) as { fromPg: typeof fromPg; PostgresTransport: typeof PostgresTransport };
    const t = new other.PostgresTransport(other.fromPg(admin), { schema });
    await t.stats();
    variants.push({
      name: `transport, parent (${parent})`,
      run: async () => {
        const p = new other.PostgresTransport(other.fromPg(pool), { schema });
        for (let i = 0; i < N; i++) await p.ack((await p.claim('w0', 30_000))!);
        await p.close();
      },
    });
  }
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  // CPU time, not only wall time: on a shared machine it is what a variant itself costs. The
  // server's is summed over every process of the cluster (backends, WAL writer…), from /proc.
  const serverCpuMs = async (): Promise<number> => {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity');
    return rows.reduce((sum, r) => sum + cpuTicks(r.pid), 0) * 10; // USER_HZ 100
  };
  const cpu = new Map<string, { client: number[]; server: number[] }>(variants.map((v) => [v.name, { client: [], server: [] }]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const v of variants) {
      await fill();
      const s0 = await serverCpuMs();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await v.run();
      const us = ((performance.now() - t0) * 1000) / N;
      const c1 = process.cpuUsage(c0);
      const s1 = await serverCpuMs();
      if (round > 0) {
        times.get(v.name)!.push(us);
        cpu.get(v.name)!.client.push((c1.user + c1.system) / N);
        cpu.get(v.name)!.server.push(((s1 - s0) * 1000) / N);
      }
    }
    process.stderr.write('.');
  }
  console.log(`\nµs per claim → ack, ${N} sequential, median of ${ROUNDS} (spread): wall, then CPU µs of this process and of the server`);
  for (const v of variants) {
    const t = times.get(v.name)!;
    const { client, server: srv } = cpu.get(v.name)!;
    console.log(`${median(t).toFixed(0).padStart(6)} (${spreadOf(t)})  client CPU ${median(client).toFixed(0)} (${spreadOf(client)})  server CPU ${median(srv).toFixed(0)} (${spreadOf(srv)})  ${v.name}  [${t.map((x) => x.toFixed(0)).join(', ')}]`);
  }
  await pool.end();
  await filler.close();
  await admin.end();
} finally {
  server.stop();
}
