// The lab page's file checker, for the crash tests: opens a database's file straight on
// opfs-sahpool, where and as the browser host keeps it (src/browser/opfs.ts), with no host in
// between, and answers with SQLite's integrity check and the seqs of every queued message. The
// host of a crashed tab may still hold the files for a moment: retried like the host retries.
import { fromWasmDatabase, loadSqliteWasm } from 'leasehold/sqlite-wasm';

self.onmessage = async (event: MessageEvent<{ name: string }>) => {
  try {
    const sqlite3 = await loadSqliteWasm();
    let pool;
    for (let attempt = 0; ; attempt++) {
      try {
        const options = { name: `leasehold-${event.data.name}`, preserveOnInitFailure: true, forceReinitIfPreviouslyFailed: attempt > 0 };
        pool = await sqlite3.installOpfsSAHPoolVfs(options as Parameters<typeof sqlite3.installOpfsSAHPoolVfs>[0]);
        break;
      } catch (error) {
        if ((error as { name?: string }).name !== 'NoModificationAllowedError' || attempt === 40) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const db = fromWasmDatabase(sqlite3, new pool.OpfsSAHPoolDb('/leasehold.db'));
    try {
      db.exec('PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL');
      const integrity = db.prepare('PRAGMA integrity_check').all<{ integrity_check: string }>().map((row) => row.integrity_check).join('; ');
      const hasQueue = db.prepare("SELECT 1 AS yes FROM sqlite_schema WHERE name = 'lh_messages'").get();
      const seqs = hasQueue ? db.prepare('SELECT seq FROM lh_messages ORDER BY seq').all<{ seq: number }>().map((row) => row.seq) : [];
      postMessage({ integrity, seqs });
    } finally {
      db.close();
      pool.pauseVfs();
    }
  } catch (error) {
    postMessage({ error: String(error) });
  }
};
