/**
 * pg-boss 10.4 and graphile-worker 0.16 as contenders of the PostgreSQL benchmark: each fetches
 * a job and completes it, through its fastest reasonable API, with `workers` concurrent workers
 * on as many connections of one pool. Both are only run and measured here, never copied.
 */
import { Logger, run } from 'graphile-worker';
import PgBoss from 'pg-boss';
import type pg from 'pg';
import { BATCH, loops, type PgContender, warmPool } from './contenders.js';

const QUEUE = 'bench';

/** pg-boss: `fetch` (SKIP LOCKED, state → active) then `complete` (state → completed; the row stays until maintenance deletes it). */
export function pgBoss(batchSize: number): PgContender {
  const schema = `bench_pgboss_${batchSize}`;
  let url = '';
  let admin: pg.Pool;
  const boss = (max: number) => new PgBoss({ connectionString: url, schema, max, supervise: false, schedule: false, migrate: false });
  return {
    name: batchSize === 1 ? 'pg-boss fetch → complete' : `pg-boss fetch/complete (batchSize ${batchSize})`,
    measures: batchSize === 1
      ? 'fetch(queue) then complete(queue, id): two calls per job; no groups, no order among concurrent workers'
      : `fetch(queue, { batchSize: ${batchSize} }) then complete(queue, ids): two calls per ${batchSize} jobs`,
    async setup(u) {
      url = u;
      admin = await warmPool(url, 1);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      const b = new PgBoss({ connectionString: url, schema, max: 2, supervise: false, schedule: false, migrate: true });
      b.on('error', () => {});
      await b.start();
      await b.createQueue(QUEUE, { name: QUEUE, policy: 'standard' });
      await b.stop({ graceful: false, wait: true });
    },
    async fill(n) {
      await admin.query(`TRUNCATE ${schema}.job`);
      const b = boss(1);
      b.on('error', () => {});
      await b.start();
      for (let i = 0; i < n; i += 2000) {
        await b.insert(Array.from({ length: Math.min(2000, n - i) }, (_, k) => ({ name: QUEUE, data: { n: i + k } })));
      }
      await b.stop({ graceful: false, wait: true });
      await admin.query(`ANALYZE ${schema}.job`);
    },
    async start(workers) {
      const b = boss(workers);
      b.on('error', () => {});
      await b.start();
      // Open every pool connection before the clock starts.
      await Promise.all(Array.from({ length: workers }, () => b.getDb().executeSql('SELECT pg_sleep(0.05)', [])));
      return loops(workers, async () => {
        const jobs = batchSize === 1 ? await b.fetch(QUEUE) : await b.fetch(QUEUE, { batchSize });
        if (jobs.length === 0) return null;
        await b.complete(QUEUE, jobs.map((j) => j.id));
        return jobs.length;
      }, undefined, () => b.stop({ graceful: false, wait: true }));
    },
    async close() {
      await admin.end();
    },
  };
}

/**
 * graphile-worker: its runner with `concurrency` workers (each gets a job with SKIP LOCKED, runs
 * the task, completes it: the row is deleted). `named`: every job in a named queue (one per
 * group), which graphile-worker runs one job at a time — its form of per-group exclusivity.
 */
export function graphileWorker(named: boolean): PgContender {
  const schema = named ? 'bench_gw_named' : 'bench_gw';
  let url = '';
  let admin: pg.Pool;
  const logger = new Logger(() => () => {});
  return {
    name: named ? 'graphile-worker runner, queue_name per group' : 'graphile-worker runner',
    measures: named
      ? 'the same, every job in a named queue (one per group): graphile-worker runs one job of a named queue at a time'
      : 'run({ concurrency: workers }) over a pool of workers + 1 connections (one LISTENs); a no-op task; job deleted on completion',
    async setup(u) {
      url = u;
      admin = await warmPool(url, 1);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      // Starting a runner once installs the schema and registers the task.
      const runner = await run({ connectionString: url, schema, concurrency: 1, noHandleSignals: true, logger, taskList: { t: async () => {} } });
      await admin.query(`SELECT ${schema}.add_job('t', '{}'::json)`);
      await new Promise((r) => setTimeout(r, 300));
      await runner.stop();
    },
    async fill(n, groups) {
      await admin.query(`TRUNCATE ${schema}._private_jobs`);
      await admin.query(`DELETE FROM ${schema}._private_job_queues`);
      for (let i = 0; i < n; i += 2000) {
        await admin.query(
          `SELECT ${schema}.add_jobs(array(SELECT json_populate_record(null::${schema}.job_spec,
            json_build_object('identifier', 't', 'payload', json_build_object('n', x), 'queue_name', CASE WHEN $3 THEN 'g' || (x % $4) END))
            FROM generate_series($1::int, $2::int) x))`,
          [i, Math.min(n, i + 2000) - 1, named, groups],
        );
      }
      await admin.query(`ANALYZE ${schema}._private_jobs`);
    },
    async start(workers) {
      const pool = await warmPool(url, workers + 1);
      let done = 0;
      const runner = await run({
        pgPool: pool, schema, concurrency: workers, noHandleSignals: true, logger, pollInterval: 1000,
        taskList: { t: async () => { done++; } },
      });
      return { done: () => done, async stop() { await runner.stop(); await pool.end(); } };
    },
    async close() {
      await admin.end();
    },
  };
}

export { BATCH };
