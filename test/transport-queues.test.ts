/**
 * What the queue API adds beyond the conformance suite, on the SQL transport in Node: the
 * migration of a database written by leasehold 0.1.0, the queue option's checks, and change
 * notices across connections to one file.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SCHEMA_VERSION } from '../src/sqlite/schema.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Lease, TransportSnapshot } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { asReadToday } from './support/snapshots.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
});
function scratchFile(name: string): string {
  const scratch = scratchDir();
  cleanups.push(scratch.remove);
  return join(scratch.dir, name);
}

describe('a database written by leasehold 0.1.0 (schema version 3)', () => {
  it('opens with every message, group, lease, park, key and dead letter in place, in the default queue', async () => {
    const file = scratchFile('v3.db');
    copyFileSync(fixture('schema-v3.db'), file);
    const written = JSON.parse(readFileSync(fixture('schema-v3.json'), 'utf8')) as { now: number; snapshot: TransportSnapshot; leases: Record<'a' | 'b', Lease> };
    const db = await openBetterSqliteDatabase(file);
    cleanups.push(() => db.close());
    const clock = new ManualClock(written.now);
    const transport = new SqliteTransport(db, { clock: clock.now, maxAttempts: 2 });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    expect(await transport.inspect()).toEqual(asReadToday(written.snapshot));
    expect(await new SqliteStore(db).load('order-1')).toMatchObject({ id: 'order-1', status: 'new' });

    // The leases handed out before the upgrade still hold, and the queue carries on.
    await transport.ack(written.leases.a);
    expect(await transport.publish('g0', 'again', { key: 'k3' })).toBe(4); // the key survived
    const next = await transport.publish('g9', 'new');
    expect(next).toBeGreaterThan(5); // seqs continue after the old ones
    const claimed = await transport.claimMany('w', 1000, { max: 5 });
    expect(claimed.map((l) => l.seq)).toEqual([next, 4]); // never-claimed first, then by claim order; g1 is parked
    expect(await transport.stats()).toMatchObject({ queued: 4, groups: 3, leased: 2, waiting: 1, dead: 1 });
    expect(await transport.redrive(3)).toBeGreaterThan(next);
  });
});

describe('a database written with schema version 4', () => {
  it('opens with both queues in place, its triggers replaced, and batches carrying on', async () => {
    const file = scratchFile('v4.db');
    copyFileSync(fixture('schema-v4.db'), file);
    const written = JSON.parse(readFileSync(fixture('schema-v4.json'), 'utf8')) as { now: number; snapshot: TransportSnapshot; other: TransportSnapshot; leases: Lease[] };
    const db = await openBetterSqliteDatabase(file);
    cleanups.push(() => db.close());
    const clock = new ManualClock(written.now);
    const transport = new SqliteTransport(db, { clock: clock.now, maxAttempts: 2 });
    const other = new SqliteTransport(db, { clock: clock.now, queue: 'other' });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    expect(await transport.inspect()).toEqual(asReadToday(written.snapshot));
    expect(await other.inspect()).toEqual(asReadToday(written.other));
    const triggers = db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").all<{ sql: string }>();
    // The three that keep the counters (entries 5, 6 and 11), and the three of `after` (entry 8).
    expect(triggers.map(({ sql }) => /CREATE TRIGGER (\w+)/.exec(sql)![1])).toEqual([
      'lh_claimed_group_gone', 'lh_dead_letter_gone', 'lh_message_removed', 'lh_seq_taken', 'lh_waited_gone', 'lh_waiter_gone',
    ]);
    for (const { sql } of triggers.filter(({ sql }) => /lh_claimed_group_gone|lh_message_removed|lh_seq_taken/.test(sql))) expect(sql).toMatch(/UPDATE OR FAIL lh_counters/);

    // The leases handed out before the upgrade still hold; the counters keep counting.
    expect((await transport.ackMany(written.leases)).acked).toEqual(written.leases);
    expect(await transport.publish('g3', 'again', { key: 'k3' })).toBe(15); // k3 (seq 4) was acked: a new message, after the 14 before
    const batch = await transport.claimMany('w', 1000, { max: 10 });
    expect(batch.map((l) => l.groupId)).toEqual(['g0', 'g1', 'g3']); // g2 parked, 'later' delayed; the rest by claim order
    expect((await transport.ackMany(batch)).lost).toEqual([]);
    const stats = await transport.stats();
    const queued = (await transport.inspect()).groups.reduce((n, g) => n + g.messages.length, 0);
    expect(stats).toMatchObject({ queued, dead: 2 });
    clock.advance(60_000);
    expect((await transport.claimMany('w', 1000, { max: 10 })).map((l) => l.groupId)).toEqual(['later', 'g2', 'g0', 'g1', 'g3']);
    expect(await other.stats()).toMatchObject({ queued: 1, groups: 1 });
  });
});

describe('the queue option', () => {
  it('refuses a queue name that is not a non-empty string, on every transport', async () => {
    const db = await openBetterSqliteDatabase(scratchFile('q.db'));
    cleanups.push(() => db.close());
    expect(() => new SqliteTransport(db, { queue: '' })).toThrow(RangeError);
    expect(() => new SqliteTransport(db, { queue: 7 as never })).toThrow(TypeError);
    expect(() => new InMemoryTransport({ queue: '' })).toThrow(/options\.queue/);
  });
});

describe('change notices across connections', () => {
  it('wakes a listener on another connection to the same file soon after a commit there, and stops when unsubscribed', async () => {
    const file = scratchFile('shared.db');
    const first = await openBetterSqliteDatabase(file);
    const second = await openBetterSqliteDatabase(file);
    cleanups.push(() => first.close(), () => second.close());
    const publisher = new SqliteTransport(first);
    const consumer = new SqliteTransport(second);
    const otherQueue = new SqliteTransport(second, { queue: 'other' });
    let heard = 0;
    const stop = consumer.onChange(() => heard++);
    await publisher.publish('g', 1);
    await expect.poll(() => heard).toBe(1);
    await publisher.publish('g', 2);
    await expect.poll(() => heard).toBe(2);
    stop();
    await publisher.publish('g', 3);
    await otherQueue.publish('g', 'own notice only for its own listeners');
    // The watch is gone: nothing polls, nothing is heard (a real interval, not a sleep: the
    // watch ticks every 50 ms, so three ticks would have fired).
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(heard).toBe(2);
    await publisher.close();
    await consumer.close();
  });
});
