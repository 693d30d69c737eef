/**
 * A worker of the schedule contention test: runs a Runtime that fires the schedules (and applies
 * the slot events to execution `ticks`) on a better-sqlite3 file, on the real clock, for
 * `for=<ms>` from its start (`READY` when it begins). Reports every slot publish it made (`PUB <seq> <event id>`) and every claim of a
 * slot event (`CLAIM <seq> <event id>`), each written before the call's result is used (stdout
 * to a pipe is synchronous on Linux, so a report is out before a kill). With `die=<n>`, it
 * SIGKILLs itself right after its n-th slot publish: inside a firing, before its commit.
 */
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { Schedules } from '../../src/schedule/schedules.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Transport } from '../../src/transport/contract.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';

const [file, ...flags] = process.argv.slice(2);
const option = (name: string): string | undefined => flags.find((f) => f.startsWith(`${name}=`))?.slice(name.length + 1);
const runFor = Number(option('for'));
const dieAfter = Number(option('die') ?? 0);

const db = await openBetterSqliteDatabase(file!);
const store = new SqliteStore(db);
const sqlite = new SqliteTransport(db);
let publishes = 0;
const reported: Partial<Transport> = {
  async publish(groupId: string, event: unknown, options?: object) {
    const seq = await sqlite.publish(groupId, event, options);
    if (groupId === 'ticks') {
      process.stdout.write(`PUB ${seq} ${(event as { id: string }).id}\n`);
      if (++publishes === dieAfter) process.kill(process.pid, 'SIGKILL');
    }
    return seq;
  },
  async claim(workerId: string, visibilityMs: number) {
    const lease = await sqlite.claim(workerId, visibilityMs);
    if (lease?.groupId === 'ticks') process.stdout.write(`CLAIM ${lease.seq} ${(lease.event as { id: string }).id}\n`);
    return lease;
  },
  // Runtime.run claims with its acks too.
  async ackAndClaim(lease, workerId, visibilityMs, options) {
    const next = await sqlite.ackAndClaim(lease, workerId, visibilityMs, options);
    if (next?.groupId === 'ticks') process.stdout.write(`CLAIM ${next.seq} ${(next.event as { id: string }).id}\n`);
    return next;
  },
};
// Every other call goes to the transport itself (bound: its methods use private fields).
const transport = new Proxy(sqlite, {
  get(target, key) {
    if (key in reported) return reported[key as keyof Transport];
    const value = Reflect.get(target, key, target) as unknown;
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  },
}) as Transport;
const schedules = new Schedules({ store, transport });
const runtime = new Runtime({
  store,
  transport,
  workerId: `w-${process.pid}`,
  visibilityMs: 1_000,
  idleMinMs: 5,
  idleMaxMs: 20,
  handler: schedules.handler((exe, event) => {
    (exe.seen as unknown[]).push(event.slot);
  }),
});
const stop = new AbortController();
setTimeout(() => stop.abort(), runFor);
process.stdout.write('READY\n');
await runtime.run({ signal: stop.signal });
process.stdout.write('DONE\n', () => process.exit(0));
