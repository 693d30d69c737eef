/**
 * The PostgreSQL benchmark's contenders, behind one interface: leasehold's PostgresTransport in
 * its consume forms (claim → ack, ackAndClaim, claimMany/ackMany, ackAndClaimMany) and the floor — one
 * UPDATE of one row per transaction. pg-boss and graphile-worker live in peers.ts.
 *
 * Every contender runs its workers in this process, each worker on its own connection of a pool
 * sized to the worker count (opened and warmed before the clock starts), against one server.
 */
import pg from 'pg';
import { fromPg, PostgresTransport } from '../../src/postgres/index.js';
import type { Lease } from '../../src/transport/contract.js';

/** Workers running against a filled queue: how many jobs they finished so far, and a way to stop them. */
export interface Running {
  done(): number;
  /** Stops every worker after its current call and releases its connections. */
  stop(): Promise<void>;
}

export interface PgContender {
  name: string;
  /** What one counted operation is and what it guarantees, for the docs. */
  measures: string;
  /** Creates its schema or tables (untimed). */
  setup(url: string): Promise<void>;
  /** Empties its tables, then queues `n` jobs (untimed). `groups`: how many groups (or named queues) where it has them. */
  fill(n: number, groups: number): Promise<void>;
  /** Starts `workers` workers on `workers` warmed connections. */
  start(workers: number): Promise<Running>;
  close(): Promise<void>;
}

export const VISIBILITY_MS = 30_000;

/** A pool of `max` connections, every one opened before it is returned. */
export async function warmPool(url: string, max: number): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 0 });
  pool.on('error', () => {});
  const clients = await Promise.all(Array.from({ length: max }, () => pool.connect()));
  for (const c of clients) c.release();
  return pool;
}

/** Runs `step` in `workers` loops until stopped or a step returns null (nothing left); counts what steps return. */
export function loops(workers: number, step: (worker: number) => Promise<number | null>, finish: (worker: number) => Promise<void> = async () => {}, cleanup: () => Promise<void> = async () => {}): Running {
  let stopped = false;
  let done = 0;
  const all = Array.from({ length: workers }, async (_, w) => {
    while (!stopped) {
      const n = await step(w);
      if (n === null) break;
      done += n;
    }
    await finish(w);
  });
  return {
    done: () => done,
    async stop() {
      stopped = true;
      await Promise.all(all);
      await cleanup();
    },
  };
}

/** An experiment on the shipped SQL: statements run on the contender's schema after it is migrated. */
export interface LeaseholdVariant {
  /** Appended to the schema name, so the variant and the shipped form run side by side. */
  key: string;
  label: string;
  patch: (schema: string) => string[];
}

/**
 * Another build of leasehold's PostgreSQL backend (a scratch worktree of a parent commit), run
 * beside this one in its own schemas for a same-run A/B (`LEASEHOLD_BENCH_PARENT`, run.ts).
 */
export interface LeaseholdBuild {
  key: string;
  label: string;
  fromPg: typeof fromPg;
  PostgresTransport: typeof PostgresTransport;
}

type Form = 'claim-ack' | 'ackAndClaim' | 'claimMany' | 'ackAndClaimMany' | 'ackAndClaim-before';
export const BATCH = 10;

/** leasehold: per-group FIFO and exclusivity, one live lease per group, fencing on every ack. */
export function leasehold(form: Form, variant?: LeaseholdVariant, build?: LeaseholdBuild): PgContender {
  const schema = `bench_lh_${form.toLowerCase().replace(/-/g, '_')}${variant ? `_${variant.key}` : ''}${build ? `_${build.key}` : ''}`;
  const Transport = build?.PostgresTransport ?? PostgresTransport;
  let url = '';
  let admin: pg.Pool;
  let filler: PostgresTransport;
  // 'ackAndClaim-before': as this driver was before the notices moved out of the transaction and
  // statements were prepared (the SQL functions are the current ones), for a same-run comparison.
  const before = form === 'ackAndClaim-before';
  const transportOn = (pool: pg.Pool) => {
    const db = (build?.fromPg ?? fromPg)(pool, { preparedStatements: !before });
    return new Transport(before ? { ...db, notify: undefined } : db, { schema });
  };
  return {
    name: {
      'claim-ack': 'leasehold claim → ack', ackAndClaim: 'leasehold ackAndClaim', claimMany: `leasehold claimMany/ackMany (${BATCH})`,
      ackAndClaimMany: `leasehold ackAndClaimMany (${BATCH})`,
      'ackAndClaim-before': 'leasehold ackAndClaim, NOTIFY in the transaction, unprepared',
    }[form] + (variant ? `, ${variant.label}` : '') + (build ? `, ${build.label}` : ''),
    measures: {
      'claim-ack': 'claim() then ack(): two calls, two transactions per message',
      ackAndClaim: 'ackAndClaim(): one call per message (acks the held lease, claims the next)',
      claimMany: `claimMany({ max: ${BATCH} }) then ackMany(): two calls per ${BATCH} messages`,
      ackAndClaimMany: `ackAndClaimMany(held, { max: ${BATCH} }): one call (one transaction) acks the last batch and claims the next`,
      'ackAndClaim-before': 'ackAndClaim() with each call NOTIFYing inside its transaction and no prepared statements (how fromPg ran before), for comparison',
    }[form],
    async setup(u) {
      url = u;
      admin = await warmPool(url, 1);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      filler = transportOn(admin);
      await filler.stats(); // migrates and opens the default queue
      for (const sql of variant?.patch(schema) ?? []) await admin.query(sql);
    },
    async fill(n, groups) {
      await admin.query(`TRUNCATE ${schema}.lh_messages, ${schema}.lh_groups`);
      for (let i = 0; i < n; i += 2000) {
        const items = Array.from({ length: Math.min(2000, n - i) }, (_, k) => ({ groupId: `g${(i + k) % groups}`, event: { n: i + k } }));
        await filler.publishMany(items);
      }
      await admin.query(`ANALYZE ${schema}.lh_groups, ${schema}.lh_messages`);
    },
    async start(workers) {
      // One connection per worker, and one for the change notices fromPg sends after commits
      // (as graphile-worker gets one for its LISTEN).
      const pool = await warmPool(url, workers + 1);
      const t = transportOn(pool);
      await t.stats();
      const held: (Lease | null)[] = Array.from({ length: workers }, () => null);
      const batches: Lease[][] = Array.from({ length: workers }, () => []);
      const step = async (w: number): Promise<number | null> => {
        const id = `w${w}`;
        if (form === 'claim-ack') {
          const lease = await t.claim(id, VISIBILITY_MS);
          if (!lease) return null;
          await t.ack(lease);
          return 1;
        }
        if (form === 'ackAndClaim' || before) {
          const lease = held[w];
          held[w] = lease ? await t.ackAndClaim(lease, id, VISIBILITY_MS) : await t.claim(id, VISIBILITY_MS);
          // The first claim acks nothing; every later call acks one message.
          if (lease) return 1;
          return held[w] ? 0 : null;
        }
        if (form === 'ackAndClaimMany') {
          const { acked, claimed } = await t.ackAndClaimMany(batches[w]!, id, VISIBILITY_MS, { max: BATCH });
          batches[w] = claimed;
          return acked.length === 0 && claimed.length === 0 ? null : acked.length;
        }
        const leases = await t.claimMany(id, VISIBILITY_MS, { max: BATCH });
        if (leases.length === 0) return null;
        return (await t.ackMany(leases)).acked.length;
      };
      const finish = async (w: number) => {
        const lease = held[w];
        if (lease) await t.ack(lease);
        if (batches[w]!.length > 0) await t.ackMany(batches[w]!);
      };
      return loops(workers, step, finish, async () => {
        await t.close();
        await pool.end();
      });
    },
    async close() {
      await filler.close();
      await admin.end();
    },
  };
}

/** The floor: the cheapest durable write, one UPDATE of one row (each worker its own) per transaction. */
export function floor(): PgContender {
  let url = '';
  let admin: pg.Pool;
  return {
    name: 'floor: UPDATE 1 row / transaction',
    measures: 'UPDATE bench_floor SET n = n + 1 WHERE id = $worker, autocommit: one transaction (one WAL flush) per count',
    async setup(u) {
      url = u;
      admin = await warmPool(url, 1);
      await admin.query('DROP TABLE IF EXISTS bench_floor');
      await admin.query('CREATE TABLE bench_floor (id integer PRIMARY KEY, n bigint NOT NULL)');
    },
    async fill(_n, _groups) {
      await admin.query('TRUNCATE bench_floor');
      await admin.query('INSERT INTO bench_floor SELECT i, 0 FROM generate_series(0, 63) i');
    },
    async start(workers) {
      const pool = await warmPool(url, workers);
      return loops(workers, async (w) => {
        await pool.query('UPDATE bench_floor SET n = n + 1 WHERE id = $1', [w]);
        return 1;
      }, undefined, () => pool.end());
    },
    async close() {
      await admin.end();
    },
  };
}
