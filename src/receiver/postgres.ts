/**
 * Receipts in PostgreSQL, through leasehold's PostgreSQL seam: a server through `fromPg(pool)`,
 * or PGlite through `fromPglite(pglite)`. The tables live in the schema the app names (default
 * `public`), prefixed `lh_receiver_`, with their own numbered migrations recorded in
 * `<schema>.lh_receiver_migrations`, so they sit beside leasehold's transport tables or the
 * app's own without touching either.
 */
import { SchemaTooNewError } from '../errors.js';
import type { PgDatabase, PgQueryable } from '../postgres/driver.js';
import { checkOptions } from '../validate.js';
import type { Delivery } from './protocol.js';
import { decide, Refusal, refusalAnswer, type OriginCounts, type Receipt, type ReceiptStore, type StoredAnswer } from './store.js';

/**
 * The receiver's PostgreSQL tables, as numbered steps of statements for schema `s` (quoted):
 * entry i moves the schema's receiver tables from version i to i + 1. Tables, indexes and data
 * only; a released entry never changes. No functions or triggers: leasehold's transport drops
 * `lh_` functions it does not define when it installs its own.
 */
export const receiverPostgresMigrations: readonly ((s: string) => string[])[] = [
  // 1: receipts (see sqlite.ts for the columns) and lost origins.
  (s) => [
    `CREATE TABLE ${s}.lh_receiver_receipts (
      origin    text     NOT NULL,
      queue     text     NOT NULL,
      counter   bigint   NOT NULL,
      revision  bigint   NOT NULL,
      refused   boolean  NOT NULL,
      status    smallint NOT NULL,
      body      text,              -- the answer's JSON text; NULL once pruned
      low_water bigint   NOT NULL, -- the highest lowWater this number's deliveries carried
      at        double precision NOT NULL,
      PRIMARY KEY (origin, queue, counter)
    )`,
    `CREATE TABLE ${s}.lh_receiver_lost (
      origin text PRIMARY KEY,
      at     double precision NOT NULL
    )`,
  ],
];

/** The receiver's PostgreSQL table version this build writes. */
export const RECEIVER_PG_VERSION = receiverPostgresMigrations.length;

/** Options of {@link postgresReceipts}. */
export interface PostgresReceiptsOptions {
  /** The schema that holds the tables (created if missing). Default `'public'`. */
  schema?: string;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function migrate(db: PgDatabase, schema: string, s: string): Promise<void> {
  const current = async (q: PgQueryable): Promise<number> => {
    try {
      const [row] = await q.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${s}.lh_receiver_migrations`);
      return row?.v ?? 0;
    } catch (error) {
      const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      if (code === '3F000' || code === '42P01') return 0; // no schema, no table yet
      throw error;
    }
  };
  if ((await current(db)) === RECEIVER_PG_VERSION) return;
  await db.transaction(async (tx) => {
    // Processes starting together: one migrates, the others then find it done.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`leasehold-receiver:${schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.lh_receiver_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const version = await current(tx);
    if (version > RECEIVER_PG_VERSION) throw new SchemaTooNewError(`schema ${s} in ${db.label}`, 'receiver', version, RECEIVER_PG_VERSION);
    for (let v = version; v < RECEIVER_PG_VERSION; v++) {
      for (const statement of receiverPostgresMigrations[v]!(s)) await tx.query(statement);
      await tx.query(`INSERT INTO ${s}.lh_receiver_migrations (version) VALUES ($1)`, [v + 1]);
    }
  });
}

interface Row {
  revision: string | number;
  refused: boolean;
  status: number;
  body: string | null;
}

/**
 * Keeps a receiver's receipts in PostgreSQL. The tables are created or upgraded on first use.
 * The app's `apply` gets the transaction (`tx.query(...)`) the receipt is written in: its writes
 * commit with the receipt or not at all.
 *
 * Concurrent deliveries of one number serialize on its receipt row: the first inserts it (a
 * placeholder until apply returns) and holds it until commit; the others wait on the insert,
 * then read the committed receipt under `FOR UPDATE`. Deliveries of different numbers never
 * wait for each other (no per-queue row is written: a queue's mark is the greatest of its
 * receipts').
 *
 * @throws TypeError / RangeError for a `db` that is not a leasehold `PgDatabase` or bad options.
 */
export function postgresReceipts(db: PgDatabase, options: PostgresReceiptsOptions = {}): ReceiptStore<PgQueryable, false> {
  if (typeof db !== 'object' || db === null || typeof db.transaction !== 'function' || typeof db.query !== 'function') {
    throw new TypeError('db must be a leasehold PgDatabase (fromPg(pool) or fromPglite(pglite))');
  }
  checkOptions('options', options, ['schema'], true);
  const schema = options?.schema ?? 'public';
  if (typeof schema !== 'string') throw new TypeError(`options.schema must be a non-empty string, got ${typeof schema}`);
  if (schema.length === 0 || schema.length > 63 || schema.includes('\0')) throw new RangeError(`options.schema must be 1–63 characters without NUL, got ${JSON.stringify(schema)}`);
  const s = quote(schema);
  let ready: Promise<void> | undefined;
  const migrated = (): Promise<void> => {
    ready ??= migrate(db, schema, s).catch((error: unknown) => {
      ready = undefined; // a failed start (the server was down) is tried again by the next call
      throw error;
    });
    return ready;
  };
  const R = `${s}.lh_receiver_receipts`;

  return {
    synchronous: false,
    label: `PostgreSQL schema ${s} at ${db.label}`,
    async deliver(d: Delivery, now: number, apply: (tx: PgQueryable) => StoredAnswer | Promise<StoredAnswer>): Promise<Receipt> {
      await migrated();
      const key = [d.origin, d.queue, d.counter];
      // A repeat or a stale delivery that carries no higher mark changes nothing: answered from
      // the committed receipt without a transaction (a writing one costs a commit flush). A
      // receipt once committed only moves to higher revisions, so the answer is one a
      // serialized run at this moment would give.
      const [seen] = await db.query<Row & { low_water: string | number }>(`SELECT revision, refused, status, body, low_water FROM ${R} WHERE origin = $1 AND queue = $2 AND counter = $3`, key);
      if (seen !== undefined && Number(seen.low_water) >= d.lowWater) {
        const early = decide({ revision: Number(seen.revision), refused: seen.refused }, d.revision);
        if (early !== 'apply') return { status: Number(seen.status), body: seen.body, repeat: early };
      }
      return db.transaction(async (tx) => {
        // The placeholder takes the number's row lock until COMMIT; a concurrent delivery of the
        // same number waits here and then finds the committed receipt.
        const inserted = await tx.query(
          `INSERT INTO ${R} (origin, queue, counter, revision, refused, status, body, low_water, at) VALUES ($1, $2, $3, $4, false, 0, NULL, $5, $6)
           ON CONFLICT (origin, queue, counter) DO NOTHING RETURNING 1 AS fresh`,
          [...key, d.revision, d.lowWater, now],
        );
        let found: Row | undefined;
        if (inserted.length === 0) [found] = await tx.query<Row>(`SELECT revision, refused, status, body FROM ${R} WHERE origin = $1 AND queue = $2 AND counter = $3 FOR UPDATE`, key);
        const decision = decide(found && { revision: Number(found.revision), refused: found.refused }, d.revision);
        if (decision !== 'apply') {
          await tx.query(`UPDATE ${R} SET low_water = $4 WHERE origin = $1 AND queue = $2 AND counter = $3 AND low_water < $4`, [...key, d.lowWater]);
          return { status: Number(found!.status), body: found!.body, repeat: decision };
        }
        let answer: StoredAnswer;
        let refused = false;
        await tx.query('SAVEPOINT lh_receiver_apply');
        try {
          answer = await apply(tx);
          await tx.query('RELEASE SAVEPOINT lh_receiver_apply');
        } catch (error) {
          if (!(error instanceof Refusal)) throw error;
          await tx.query('ROLLBACK TO SAVEPOINT lh_receiver_apply');
          answer = refusalAnswer(error);
          refused = true;
        }
        await tx.query(
          `UPDATE ${R} SET revision = $4, refused = $5, status = $6, body = $7, low_water = greatest(low_water, $8), at = $9 WHERE origin = $1 AND queue = $2 AND counter = $3`,
          [...key, d.revision, refused, answer.status, answer.body, d.lowWater, now],
        );
        return { ...answer, repeat: false };
      });
    },
    async counts(origin): Promise<OriginCounts | null> {
      await migrated();
      // One snapshot for the three reads: a delivery committing between them cannot skew the report.
      return db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const queues = await tx.query<{ queue: string; received: string; highest: string; low_water: string }>(
          `SELECT queue, count(*) AS received, max(counter) AS highest, max(low_water) AS low_water FROM ${R} WHERE origin = $1 GROUP BY queue ORDER BY queue`,
          [origin],
        );
        if (queues.length === 0) return null;
        const gaps = await tx.query<{ queue: string; first: string; last: string }>(
          `SELECT queue, prev + 1 AS first, counter - 1 AS last FROM (
             SELECT queue, counter, lag(counter, 1, 0::bigint) OVER (PARTITION BY queue ORDER BY counter) AS prev FROM ${R} WHERE origin = $1
           ) g WHERE counter - prev > 1 ORDER BY queue, first`,
          [origin],
        );
        const [lost] = await tx.query(`SELECT 1 FROM ${s}.lh_receiver_lost WHERE origin = $1`, [origin]);
        return {
          lost: lost !== undefined,
          queues: queues.map((q) => ({
            queue: q.queue,
            received: Number(q.received),
            highest: Number(q.highest),
            lowWater: Number(q.low_water),
            gaps: gaps.filter((g) => g.queue === q.queue).map((g) => [Number(g.first), Number(g.last)] as const),
          })),
        };
      });
    },
    async markLost(origin, now) {
      await migrated();
      const rows = await db.query(
        `INSERT INTO ${s}.lh_receiver_lost (origin, at) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM ${R} WHERE origin = $1)
         ON CONFLICT (origin) DO NOTHING RETURNING 1`,
        [origin, now],
      );
      if (rows.length > 0) return true;
      const [known] = await db.query(`SELECT 1 FROM ${R} WHERE origin = $1 LIMIT 1`, [origin]);
      return known !== undefined;
    },
    async prune(before) {
      await migrated();
      const [row] = await db.query<{ n: number }>(
        `WITH pruned AS (
           UPDATE ${R} r SET body = NULL
            WHERE NOT r.refused AND r.body IS NOT NULL AND r.at < $1
              AND r.counter < (SELECT max(m.low_water) FROM ${R} m WHERE m.origin = r.origin AND m.queue = r.queue)
            RETURNING 1
         ) SELECT count(*)::int AS n FROM pruned`,
        [before],
      );
      return row?.n ?? 0;
    },
  };
}
