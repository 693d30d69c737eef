import { fromWasmDatabase, loadSqliteWasm } from 'leasehold/sqlite-wasm';

try {
  const sqlite3 = await loadSqliteWasm();
  const pool = await sqlite3.installOpfsSAHPoolVfs({ name: 'leasehold-demo-visits', preserveOnInitFailure: true });
  const db = fromWasmDatabase(sqlite3, new pool.OpfsSAHPoolDb('/visits.db'));
  db.exec('CREATE TABLE IF NOT EXISTS visits (n INTEGER NOT NULL); INSERT INTO visits SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM visits)');
  const visits = db.transaction(() => {
    db.prepare('UPDATE visits SET n = n + 1').run();
    return db.prepare('SELECT n FROM visits').get<{ n: number }>()!.n;
  });
  db.close();
  postMessage({ visits });
} catch (error) {
  postMessage({ error: error instanceof Error ? error.message : String(error) });
}
