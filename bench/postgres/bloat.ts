/**
 * `npm run bench:postgres -- --bloat [--variant=default|tuned] [--messages=1000000]`: puts
 * `messages` messages through publish → ackAndClaim (8 workers, a publisher keeping ~20,000
 * queued in 1,000 groups) and samples the queue tables' sizes and dead tuples as it goes, with
 * the server's default autovacuum and with per-table settings on lh_groups and lh_messages.
 */
import pg from 'pg';
import { fromPg, PostgresTransport } from '../../src/postgres/index.js';
import type { Lease } from '../../src/transport/contract.js';
import { VISIBILITY_MS, warmPool } from './contenders.js';

const WORKERS = 8;
const GROUPS = 1000;
const BACKLOG = 20_000;
/** Small publish batches: a batch locks every group it publishes to until it commits, holding up those groups' acks. */
const PUBLISH_BATCH = 100;

/** Server settings the "tuned" variant sets (ALTER SYSTEM, reloaded; reset after): per-table settings cannot make autovacuum look more often. */
export const TUNED_SERVER: Record<string, string> = { autovacuum_naptime: '10s' };

/** Per-table storage parameters tried in the "tuned" variant. */
export const TUNED: Record<string, string> = {
  lh_groups: 'fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0',
  lh_messages: 'autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_cost_delay = 0',
};

interface Sample {
  messages: number;
  seconds: number;
  rate: number;
  [k: string]: number | string;
}

async function sizes(admin: pg.Client, schema: string): Promise<Record<string, number>> {
  const { rows } = await admin.query(
    `SELECT c.relname, pg_relation_size(c.oid)::int8 AS bytes, s.n_live_tup, s.n_dead_tup, s.autovacuum_count, s.n_tup_hot_upd, s.n_tup_upd
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
     WHERE n.nspname = $1 AND c.relname IN ('lh_groups', 'lh_messages', 'lh_groups_pkey', 'lh_groups_by_claim_order', 'lh_messages_pkey')`,
    [schema],
  );
  const out: Record<string, number> = {};
  for (const r of rows) {
    out[`${r.relname} kB`] = Math.round(Number(r.bytes) / 1024);
    if (r.n_dead_tup !== null) {
      out[`${r.relname} dead`] = Number(r.n_dead_tup);
      out[`${r.relname} live`] = Number(r.n_live_tup);
      out[`${r.relname} autovacuums`] = Number(r.autovacuum_count);
      out[`${r.relname} hot%`] = Number(r.n_tup_upd) ? Math.round((100 * Number(r.n_tup_hot_upd)) / Number(r.n_tup_upd)) : 0;
    }
  }
  return out;
}

async function variant(admin: pg.Client, url: string, name: 'default' | 'tuned', messages: number): Promise<Sample[]> {
  const schema = `bench_bloat_${name}`;
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const pool = await warmPool(url, WORKERS + 2); // the workers, the publisher, the notices
  const t = new PostgresTransport(fromPg(pool), { schema });
  await t.stats();
  if (name === 'tuned') {
    for (const [table, params] of Object.entries(TUNED)) await admin.query(`ALTER TABLE ${schema}.${table} SET (${params})`);
    await serverSettings(admin, TUNED_SERVER);
  }
  let published = 0;
  let done = 0;
  let retries = 0;
  const publishSome = async (n: number) => {
    const items = Array.from({ length: n }, (_, k) => ({ groupId: `g${(published + k) % GROUPS}`, event: { n: published + k, pad: 'x'.repeat(100) } }));
    for (;;) {
      try {
        await t.publishMany(items);
        break;
      } catch (error) {
        // STORAGE_BUSY (a deadlock the server broke, seen between a batch publish and acks): nothing was written; retry, as the error says.
        if ((error as { code?: string }).code !== 'STORAGE_BUSY') throw error;
        retries++;
      }
    }
    published += n;
  };
  while (published < BACKLOG) await publishSome(1000);
  const samples: Sample[] = [];
  const t0 = performance.now();
  let last = { at: t0, done: 0 };
  const every = Math.max(10_000, Math.round(messages / 10));
  let next = every;
  let stop = false;
  const publisher = (async () => {
    while (!stop && published < messages) {
      if (published - done < BACKLOG) await publishSome(Math.min(PUBLISH_BATCH, messages - published));
      else await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const workers = Array.from({ length: WORKERS }, async (_, w) => {
    let lease: Lease | null = null;
    while (done < messages) {
      let next: Lease | null;
      try {
        next = lease ? await t.ackAndClaim(lease, `w${w}`, VISIBILITY_MS) : await t.claim(`w${w}`, VISIBILITY_MS);
      } catch (error) {
        // STORAGE_BUSY: the server broke a deadlock (see docs/BENCHMARKS.md); nothing changed, the lease still holds: retry.
        if ((error as { code?: string }).code !== 'STORAGE_BUSY') throw error;
        retries++;
        continue;
      }
      if (lease) done++;
      lease = next;
      if (!lease) await new Promise((r) => setTimeout(r, 5));
    }
    if (lease) {
      await t.ack(lease);
      done++;
    }
  });
  const sampler = (async () => {
    while (done < messages) {
      await new Promise((r) => setTimeout(r, 200));
      if (done >= next || done >= messages) {
        const now = performance.now();
        samples.push({ messages: done, seconds: Math.round((now - t0) / 1000), rate: Math.round((done - last.done) / ((now - last.at) / 1000)), 'busy retries': retries, ...(await sizes(admin, schema)) });
        process.stderr.write(`  ${name}: ${JSON.stringify(samples.at(-1))}\n`);
        last = { at: now, done };
        next += every;
      }
    }
  })();
  await Promise.all(workers);
  stop = true;
  await publisher;
  await sampler;
  await t.close();
  await pool.end();
  if (name === 'tuned') await serverSettings(admin, Object.fromEntries(Object.keys(TUNED_SERVER).map((k) => [k, null])));
  return samples;
}

/** ALTER SYSTEM (null: RESET) and reload; a server where we may not (not a superuser) keeps its settings, and we say so. */
async function serverSettings(admin: pg.Client, settings: Record<string, string | null>): Promise<void> {
  try {
    for (const [k, v] of Object.entries(settings)) await admin.query(v === null ? `ALTER SYSTEM RESET ${k}` : `ALTER SYSTEM SET ${k} = '${v}'`);
    await admin.query('SELECT pg_reload_conf()');
  } catch (error) {
    process.stderr.write(`  could not change server settings (${(error as Error).message}); the tuned variant runs with the server's own\n`);
  }
}

/** Runs the variants asked for and returns their samples; prints one table per variant. */
export async function runBloat(admin: pg.Client, url: string, options: { quick: boolean; messages: number }): Promise<Record<string, unknown>> {
  const which = process.argv.find((a) => a.startsWith('--variant='))?.slice('--variant='.length);
  const names = (which ? which.split(',') : ['default', 'tuned']) as ('default' | 'tuned')[];
  const out: Record<string, Sample[]> = {};
  for (const name of names) {
    out[name] = await variant(admin, url, name, options.messages);
    const cols = ['messages', 'seconds', 'rate', 'busy retries', 'lh_groups kB', 'lh_groups dead', 'lh_groups hot%', 'lh_groups autovacuums', 'lh_groups_by_claim_order kB', 'lh_groups_pkey kB',
      'lh_messages kB', 'lh_messages dead', 'lh_messages autovacuums', 'lh_messages_pkey kB'];
    const tuned = [...Object.entries(TUNED).map(([k, v]) => `${k}: ${v}`), `server: ${Object.entries(TUNED_SERVER).map(([k, v]) => `${k} = ${v}`).join(', ')}`];
    console.log(`\n### bloat, ${name}${name === 'tuned' ? ` (${tuned.join('; ')})` : ''}\n`);
    console.log(`| ${cols.join(' | ')} |\n|${cols.map(() => ' ---: ').join('|')}|`);
    for (const s of out[name]!) console.log(`| ${cols.map((c) => String(s[c] ?? '')).join(' | ')} |`);
  }
  return { workers: WORKERS, groups: GROUPS, backlog: BACKLOG, tuned: TUNED, tunedServer: TUNED_SERVER, samples: out };
}
