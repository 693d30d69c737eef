/**
 * A process to be killed: publishes, commits and claims+acks on a better-sqlite3 file as fast as
 * it can, and reports each call on stdout as soon as it resolves (stdout to a pipe is synchronous
 * on Linux, so a reported call was acknowledged before any kill that follows).
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
const say = (line: string) => process.stdout.write(`${line}\n`);

const exe = (await store.load('stream')) ?? { id: 'stream', version: 0, n: 0 };
say('READY');
for (let n = (exe.n as number) + 1; ; n++) {
  const seq = await transport.publish(`g${n % 5}`, { n });
  say(`P ${n} ${seq}`);
  exe.n = n;
  await store.commit(exe, { emits: [{ targetId: 'sink', event: { n } }], trace: { n } });
  say(`C ${exe.version}`);
  if (n % 2 === 0) {
    const lease = await transport.claim('child', 60_000);
    if (lease) {
      say(`L ${lease.seq} ${lease.attempt} ${lease.expiresAt}`);
      await transport.ack(lease);
      say(`A ${lease.seq} ${lease.attempt}`);
    }
  }
}
