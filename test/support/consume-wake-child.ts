/**
 * One of two consumers playing ping-pong through one better-sqlite3 file: it consumes queue
 * `mine` and, for each hop it handles, publishes the next hop to queue `theirs`, which the other
 * process consumes. Its idle poll is `pollMs`, far longer than a hop should take, so the hops
 * can only move quickly if each process wakes on the other's commits (change notices).
 * Lines: `READY`; `H <hop> <t>` handled hop (t: Date.now); `c` a claim-like call;
 * `T <ms>` an idle timer of at least 1 s that fired (a poll, or a wake at a known expiry).
 */
import { consume } from '../../src/consume/consume.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { Transport } from '../../src/transport/contract.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';

const [file, mine, theirs, hops, poll] = process.argv.slice(2);
const pollMs = Number(poll);
const db = await openBetterSqliteDatabase(file!);
const inbox = new SqliteTransport<{ hop: number }>(db, { queue: mine! });
const outbox = new SqliteTransport<{ hop: number }>(db, { queue: theirs! });
const say = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));

const counted = new Proxy(inbox, {
  get(target, property) {
    const value = Reflect.get(target, property) as unknown;
    if (typeof value !== 'function') return value;
    return (...args: unknown[]) => {
      if (property === 'claim' || property === 'claimMany' || property === 'ackAndClaim' || property === 'ackAndClaimMany') void say('c');
      return (value as (...a: unknown[]) => unknown).apply(target, args);
    };
  },
}) as Transport<{ hop: number }>;

consume(
  counted,
  async (event) => {
    await say(`H ${event.hop} ${Date.now()}`);
    if (event.hop < Number(hops)) await outbox.publish('ball', { hop: event.hop + 1 });
  },
  {
    workerId: mine,
    idleMinMs: pollMs,
    idleMaxMs: pollMs,
    visibilityMs: 120_000,
    scheduler: {
      setTimeout: (callback, ms) => setTimeout(() => (ms >= 1000 ? void say(`T ${ms}`).then(callback) : callback()), ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    },
  },
);
await say('READY');
