// Run in the scratch app by the pack test: publish, claim and ack on each SQLite driver the app
// has installed, through the installed package's public entries only. Prints one JSON line.
import { SqliteTransport } from 'leasehold';

const drivers = {
  'sqlite-wasm': async () => (await import('leasehold/sqlite-wasm')).openWasmDatabase(),
  'better-sqlite3': async () => (await import('leasehold/better-sqlite3')).openBetterSqliteDatabase(process.argv[2] ?? 'queue.db'),
};
const results = {};
for (const [name, open] of Object.entries(drivers)) {
  const db = await open();
  const transport = new SqliteTransport(db);
  const seq = await transport.publish('order-1', { driver: name, n: 1 });
  const lease = await transport.claim('w1', 30_000);
  await transport.ack(lease);
  const after = await transport.claim('w1', 30_000);
  results[name] = { seq, event: lease.event, leaseSeq: lease.seq, emptyAfterAck: after === null };
  db.close();
}
console.log(JSON.stringify(results));
