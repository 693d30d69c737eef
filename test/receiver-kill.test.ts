/**
 * The receiver survives being killed between its commit and its answer, on a better-sqlite3
 * file: a real server process running createReceiver + toNodeListener SIGKILLs itself before,
 * inside and after its commits, dozens of times, while a device delivers its outbox over HTTP
 * and keeps merging edits into queued messages. Every edit is applied exactly once with its
 * latest content, every repeat gets the first answer, nothing is dropped, gaps() ends empty;
 * and a device database deleted mid-run is reported with exactly the numbers it never
 * delivered. The body is test/support/receiver-kill.ts; the PostgreSQL run is
 * postgres-receiver-kill.test.ts.
 */
import { join } from 'node:path';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { scratchDir } from './support/backends.js';
import { describeReceiverKill, type ServerSide } from './support/receiver-kill.js';

async function sqliteSide(): Promise<ServerSide> {
  const scratch = scratchDir();
  const file = join(scratch.dir, 'server.db');
  return {
    config: { engine: 'sqlite', file },
    async read() {
      const db = await openBetterSqliteDatabase(file);
      try {
        const records = new Map(db.prepare('SELECT id, text FROM app_records').all<{ id: string; text: string }>().map((r) => [r.id, r.text]));
        const log = db.prepare('SELECT origin, counter, revision, record, text, token FROM app_log ORDER BY n').all<{ origin: string; counter: number; revision: number; record: string; text: string; token: string }>();
        const receipts = db
          .prepare('SELECT origin, queue, counter, revision, refused, status, body, low_water FROM lh_receiver_receipts ORDER BY origin, queue, counter')
          .all<{ origin: string; queue: string; counter: number; revision: number; refused: number; status: number; body: string | null; low_water: number }>()
          .map((r) => ({ origin: r.origin, queue: r.queue, counter: Number(r.counter), revision: Number(r.revision), refused: r.refused === 1, status: Number(r.status), body: r.body, lowWater: Number(r.low_water) }));
        return { records, log: log.map((r) => ({ ...r, counter: Number(r.counter), revision: Number(r.revision) })), receipts };
      } finally {
        db.close();
      }
    },
    dispose: async () => scratch.remove(),
  };
}

describeReceiverKill('better-sqlite3', sqliteSide, { torture: 20, beforeLoss: 5, afterLoss: 5 });
