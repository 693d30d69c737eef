/**
 * A process to be killed: publishes, commits and claims+acks on a better-sqlite3 file as fast as
 * it can, and reports each call on stdout as soon as it resolves, waiting until the line is in
 * the pipe before it goes on: Node queues a write to a full pipe in the process's own memory,
 * which a SIGKILL loses, so without the wait the parent could see fewer reports than were made.
 * Lines: `P <n> <seq>` published, `C <n>` committed execution "stream" at version n,
 * `L <seq> <attempt> <t>` claimed, `A <seq> <attempt>` acked.
 */
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';

const [file] = process.argv.slice(2);
const db = await openBetterSqliteDatabase(file!);
const transport = new SqliteTransport(db);
const store = new SqliteStore(db);
/** Resolves once the line has been handed to the kernel (it then outlives a SIGKILL). */
const say = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));

const exe = (await store.load('stream')) ?? { id: 'stream', version: 0, n: 0 };
await say('READY');
for (let n = (exe.n as number) + 1; ; n++) {
  const seq = await transport.publish(`g${n % 5}`, { n });
  await say(`P ${n} ${seq}`);
  exe.n = n;
  await store.commit(exe, { emits: [{ targetId: 'sink', event: { n } }], trace: { n } });
  await say(`C ${exe.version}`);
  if (n % 2 === 0) {
    const lease = await transport.claim('child', 60_000);
    if (lease) {
      await say(`L ${lease.seq} ${lease.attempt} ${lease.expiresAt}`);
      await transport.ack(lease);
      await say(`A ${lease.seq} ${lease.attempt}`);
    }
  }
}
