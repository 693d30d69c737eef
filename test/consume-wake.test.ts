/**
 * Two processes consuming one better-sqlite3 file wake each other: a ball is passed between
 * them (each consumes its own named queue and publishes the next hop to the other's) while both
 * poll only every 10 minutes when idle. The hops must all pass, with no poll firing and only a
 * few claims each: the wake-ups come from the change notices SqliteTransport raises for other
 * processes' commits, not from polling faster than the back-off. No time limit is asserted on a
 * hop: one that waited for a poll would take 10 minutes, which no load explains.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { runChild } from './support/child.js';

const HOPS = 12;
const POLL_MS = 600_000;
const child = new URL('./support/consume-wake-child.ts', import.meta.url).pathname;

describe('consume() in two processes on one file', () => {
  it('wakes on the other process’s commits instead of waiting for its idle poll', async () => {
    const scratch = scratchDir();
    const file = join(scratch.dir, 'wake.db');
    const db = await openBetterSqliteDatabase(file);
    const first = new SqliteTransport(db, { queue: 'a' });
    new SqliteTransport(db, { queue: 'b' }); // both queues exist before the children start
    const handled: { hop: number; t: number; by: string }[] = [];
    const claims = { a: 0, b: 0 };
    const polls: string[] = [];
    let ready = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let started!: () => void;
    const bothReady = new Promise<void>((resolve) => (started = resolve));
    const children = (['a', 'b'] as const).map((mine) =>
      runChild(child, [file, mine, mine === 'a' ? 'b' : 'a', String(HOPS), String(POLL_MS)], (line) => {
        const [kind, x, y] = line.split(' ');
        if (kind === 'READY' && ++ready === 2) started();
        if (kind === 'c') claims[mine] += 1;
        if (kind === 'T') polls.push(`${mine}: ${x} ms`);
        if (kind === 'H') {
          handled.push({ hop: Number(x), t: Number(y), by: mine });
          if (Number(x) === HOPS) finish();
        }
      }),
    );
    try {
      await bothReady;
      const sent = Date.now();
      await first.publish('ball', { hop: 0 }); // from this (third) process
      // Without wake-ups the first hop would wait 10 minutes for a poll: give up long before.
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 80_000))]);
      for (const { proc } of children) proc.kill('SIGKILL');
      await Promise.all(children.map((c) => c.ended));
      expect(handled.map((h) => h.hop)).toEqual(Array.from({ length: HOPS + 1 }, (_, i) => i));
      expect(handled.map((h) => h.by)).toEqual(handled.map((h) => (h.hop % 2 === 0 ? 'a' : 'b')));
      // Every hop passed long before any idle timer could fire: the notices carried them all.
      expect(polls).toEqual([]);
      // A claim when woken, the ackAndClaim after the handler, and a few for notices of the
      // other's own claims and acks: far fewer than polling at wake-up speed would need.
      expect(claims.a + claims.b).toBeLessThanOrEqual(6 * (HOPS + 1) + 4);
      const latency = handled.map((h, i) => h.t - (i === 0 ? sent : handled[i - 1]!.t));
      console.log(`hop latencies (ms): ${latency.join(' ')}; claims a ${claims.a}, b ${claims.b}; polls ${polls.length}`);
    } finally {
      for (const { proc } of children) proc.kill('SIGKILL');
      db.close();
      scratch.remove();
    }
  }, 120_000);
});
