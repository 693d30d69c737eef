/** The batch floor, shared by bench/queue.ts (Node) and bench/browser/worker.ts (in the browser). */
import type { SqlDatabase } from '../src/sqlite/driver.js';

/**
 * The least SQL a claimMany + ackMany of 32 could run: one transaction of 32 one-row UPDATEs and
 * one of 32 one-row DELETEs, by primary key, on a table shaped like lh_messages at the same
 * backlog, one message per group in a batch as claims would take them. `run` does one batch;
 * `refill` puts its rows back (untimed). Used by the Node and the in-browser benchmarks.
 */
export function batchFloorOf(db: SqlDatabase, backlog: number, groups: number, json: string): { run(): void; refill(): void } {
  db.exec(
    'CREATE TABLE IF NOT EXISTS bench_batch_floor (queue_id INTEGER NOT NULL, group_id TEXT NOT NULL, seq INTEGER NOT NULL, ' +
      'event TEXT NOT NULL, key TEXT, not_before INTEGER, PRIMARY KEY (queue_id, group_id, seq)) WITHOUT ROWID',
  );
  const insert = db.prepare('INSERT INTO bench_batch_floor VALUES (1, ?, ?, ?, NULL, NULL)');
  const update = db.prepare('UPDATE bench_batch_floor SET not_before = ? WHERE queue_id = 1 AND group_id = ? AND seq = ?');
  const remove = db.prepare('DELETE FROM bench_batch_floor WHERE queue_id = 1 AND group_id = ? AND seq = ?');
  const rows: [string, number][] = [];
  let seq = 0;
  let next = 0;
  const put = (count: number) =>
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const row: [string, number] = [`g${(++seq * 7919) % groups}`, seq];
        insert.run(row[0], row[1], json);
        rows.push(row);
      }
    });
  put(backlog);
  return {
    run() {
      const batch = rows.slice(next, next + 32);
      next += 32;
      db.transaction(() => {
        for (const [group, key] of batch) update.run(key, group, key);
      });
      db.transaction(() => {
        for (const [group, key] of batch) remove.run(group, key);
      });
    },
    refill: () => put(32),
  };
}
