/**
 * Receipts in a SQLite database, through leasehold's driver seam: better-sqlite3 and sqlite-wasm
 * in Node, a Durable Object's `ctx.storage.sql` (`fromDurableObjectStorage`). The tables are the
 * `'receiver'` component of the database's schema versions, beside leasehold's own or an app's.
 */
import type { SqlDatabase } from '../sqlite/driver.js';
import { migrateComponent } from '../sqlite/migrate.js';
import type { Delivery } from './protocol.js';
import { decide, Refusal, refusalAnswer, type OriginCounts, type QueueCounts, type Receipt, type ReceiptStore, type StoredAnswer } from './store.js';

/** The component the receiver's SQLite migrations are numbered under (see `SqlDatabase.schemaVersion`). */
export const RECEIVER_COMPONENT = 'receiver';

/**
 * The receiver's SQLite tables, as numbered steps: entry i moves the component from version i to
 * i + 1. Tables, indexes and data only; a released entry never changes. Each ends with a
 * statement (a Durable Object refuses trailing comments).
 */
export const receiverSqliteMigrations: readonly string[] = [
  // 1: one receipt per (origin, queue, counter), the primary key being the table (WITHOUT
  // ROWID): the highest revision seen, applied (0) or refused (1), the answer given (its JSON
  // text, NULL once pruned), the highest low-water mark its deliveries carried — a queue's mark
  // is the greatest of them, so no hot per-queue row is written by every delivery — and when.
  // Lost origins, one row each, written by reportLost.
  `
  CREATE TABLE lh_receiver_receipts (
    origin    TEXT    NOT NULL,
    queue     TEXT    NOT NULL,
    counter   INTEGER NOT NULL,
    revision  INTEGER NOT NULL,
    refused   INTEGER NOT NULL,
    status    INTEGER NOT NULL,
    body      TEXT,
    low_water INTEGER NOT NULL,
    at        INTEGER NOT NULL,
    PRIMARY KEY (origin, queue, counter)
  ) WITHOUT ROWID;
  CREATE TABLE lh_receiver_lost (
    origin TEXT    PRIMARY KEY,
    at     INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
];

interface Row {
  revision: number;
  refused: number;
  status: number;
  body: string | null;
}

/**
 * Keeps a receiver's receipts in `db`, creating or upgrading its tables now (a cheap version
 * read when they are current). The app's `apply` gets `db` itself as its transaction handle and
 * runs inside `db.transaction()`: synchronously, as every SQLite transaction in leasehold does
 * (an apply that returns a promise is refused with a TypeError and nothing is recorded).
 *
 * Deliveries serialize on SQLite's write lock (`BEGIN IMMEDIATE`), across connections and
 * processes; in a Durable Object the object runs one at a time.
 *
 * @throws TypeError when `db` is not a leasehold `SqlDatabase` with savepoints.
 * @throws SchemaTooNewError when a newer leasehold's receiver wrote the tables; nothing changed.
 */
export function sqliteReceipts(db: SqlDatabase): ReceiptStore<SqlDatabase, true> {
  if (typeof db !== 'object' || db === null || typeof db.transaction !== 'function' || typeof db.prepare !== 'function') {
    throw new TypeError('db must be a leasehold SqlDatabase (openBetterSqliteDatabase, openWasmDatabase, fromDurableObjectStorage)');
  }
  if (typeof db.savepoint !== 'function') throw new TypeError('db must support savepoints: a refused apply is undone under one');
  migrateComponent(db, RECEIVER_COMPONENT, receiverSqliteMigrations);
  const read = db.prepare('SELECT revision, refused, status, body FROM lh_receiver_receipts WHERE origin = ? AND queue = ? AND counter = ?');
  const write = db.prepare(
    `INSERT INTO lh_receiver_receipts (origin, queue, counter, revision, refused, status, body, low_water, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (origin, queue, counter) DO UPDATE SET revision = excluded.revision, refused = excluded.refused, status = excluded.status,
       body = excluded.body, low_water = max(low_water, excluded.low_water), at = excluded.at`,
  );
  const raiseMark = db.prepare('UPDATE lh_receiver_receipts SET low_water = ? WHERE origin = ? AND queue = ? AND counter = ? AND low_water < ?');
  const summary = db.prepare('SELECT queue, count(*) AS received, max(counter) AS highest, max(low_water) AS low_water FROM lh_receiver_receipts WHERE origin = ? GROUP BY queue ORDER BY queue');
  // Each received number whose predecessor (by number) was not received starts after a gap.
  const gaps = db.prepare(
    `SELECT queue, prev + 1 AS first, counter - 1 AS last FROM (
       SELECT queue, counter, lag(counter, 1, 0) OVER (PARTITION BY queue ORDER BY counter) AS prev FROM lh_receiver_receipts WHERE origin = ?
     ) WHERE counter - prev > 1 ORDER BY queue, first`,
  );
  const known = db.prepare('SELECT 1 AS found FROM lh_receiver_receipts WHERE origin = ? LIMIT 1');
  const isLost = db.prepare('SELECT 1 AS found FROM lh_receiver_lost WHERE origin = ?');
  const addLost = db.prepare('INSERT INTO lh_receiver_lost (origin, at) VALUES (?, ?) ON CONFLICT (origin) DO NOTHING');
  const prune = db.prepare(
    `UPDATE lh_receiver_receipts SET body = NULL
      WHERE refused = 0 AND body IS NOT NULL AND at < ?
        AND counter < (SELECT max(m.low_water) FROM lh_receiver_receipts m WHERE m.origin = lh_receiver_receipts.origin AND m.queue = lh_receiver_receipts.queue)`,
  );

  const deliver = (d: Delivery, now: number, apply: (tx: SqlDatabase) => StoredAnswer): Receipt =>
    db.transaction(() => {
      const found = read.get<Row>(d.origin, d.queue, d.counter);
      const decision = decide(found && { revision: Number(found.revision), refused: Number(found.refused) === 1 }, d.revision);
      if (decision !== 'apply') {
        raiseMark.run(d.lowWater, d.origin, d.queue, d.counter, d.lowWater);
        return { status: Number(found!.status), body: found!.body, repeat: decision };
      }
      let answer: StoredAnswer;
      let refused = false;
      try {
        answer = db.savepoint!(() => apply(db));
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        answer = refusalAnswer(error);
        refused = true;
      }
      write.run(d.origin, d.queue, d.counter, d.revision, refused ? 1 : 0, answer.status, answer.body, d.lowWater, now);
      return { ...answer, repeat: false };
    });

  return {
    synchronous: true,
    label: `SQLite database ${JSON.stringify(db.filename)}`,
    deliver: async (d, now, apply) => deliver(d, now, apply as (tx: SqlDatabase) => StoredAnswer),
    async counts(origin): Promise<OriginCounts | null> {
      return db.transaction(() => {
        const queues = summary.all<{ queue: string; received: number; highest: number; low_water: number }>(origin);
        if (queues.length === 0) return null;
        const ranges = new Map<string, [number, number][]>();
        for (const g of gaps.all<{ queue: string; first: number; last: number }>(origin)) {
          const list = ranges.get(g.queue) ?? [];
          list.push([Number(g.first), Number(g.last)]);
          ranges.set(g.queue, list);
        }
        const counted: QueueCounts[] = queues.map((q) => ({
          queue: q.queue,
          received: Number(q.received),
          highest: Number(q.highest),
          lowWater: Number(q.low_water),
          gaps: ranges.get(q.queue) ?? [],
        }));
        return { lost: isLost.get(origin) !== undefined, queues: counted };
      });
    },
    async markLost(origin, now) {
      return db.transaction(() => {
        if (known.get(origin) === undefined) return false;
        addLost.run(origin, now);
        return true;
      });
    },
    async prune(before) {
      return db.transaction(() => prune.run(before));
    },
  };
}
