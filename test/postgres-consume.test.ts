/**
 * consume() on the PostgreSQL server, over real sockets and in real time (the consume suite's
 * manual scheduler counts event-loop turns, which a round trip does not fit; it runs on PGlite).
 * Every wait below waits for a condition to hold, never for a time, and no duration is asserted
 * except lower bounds the contract sets (a retry never comes before its back-off delay).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consume } from '../src/consume/consume.js';
import type { Consumer } from '../src/consume/types.js';
import type { PgDatabase } from '../src/postgres/driver.js';
import { fromPg } from '../src/postgres/pg.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import type { Scheduler } from '../src/worker/types.js';
import { runChild } from './support/child.js';
import { newServerPool } from './support/postgres.js';
import { pgUrl } from './support/servers.js';

// This file needs the run's PostgreSQL server: started here, before any test (pools and sockets take its URL at once).
await pgUrl();

let pools: pg.Pool[] = [];
let db: PgDatabase;
let schemas = 0;
const schema = () => `lh_consume_${process.pid}_${++schemas}`;
const consumers: Consumer[] = [];

beforeAll(() => {
  db = fromPg(pool());
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop({ graceMs: 0 })));
  for (let i = 1; i <= schemas; i++) await db.query(`DROP SCHEMA IF EXISTS lh_consume_${process.pid}_${i} CASCADE`);
  await db.close();
  await Promise.all(pools.map((p) => p.end()));
});

function pool(max = 4): pg.Pool {
  const p = newServerPool(max);
  pools.push(p);
  return p;
}

/** Resolves once `ready()` holds, checking every few milliseconds (the test's timeout bounds it). */
async function waitFor(ready: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 5));
}

function start<E>(...args: Parameters<typeof consume<E>>): Consumer {
  const consumer = consume<E>(...args);
  consumers.push(consumer);
  return consumer;
}

describe('consume() on the PostgreSQL server', () => {
  it('acks each message once its handler resolves, in order within each group', async () => {
    const transport = new PostgresTransport<{ g: number; i: number }>(fromPg(pool()), { schema: schema() });
    for (let i = 0; i < 40; i++) await transport.publish(`g${i % 4}`, { g: i % 4, i });
    const seen: { g: number; i: number }[] = [];
    const consumer = start(transport, (event) => void seen.push(event), { concurrency: 3, onError: () => {} });
    await waitFor(() => consumer.handled === 40);
    await consumer.stop();
    expect(await transport.stats()).toMatchObject({ queued: 0, leased: 0, dead: 0 });
    for (let g = 0; g < 4; g++) {
      const mine = seen.filter((e) => e.g === g).map((e) => e.i);
      expect(mine).toEqual(Array.from({ length: 10 }, (_, k) => g + 4 * k));
    }
    expect(consumer).toMatchObject({ handled: 40, failed: 0, lost: 0 });
  });

  it('nacks a failing handler with its back-off delay and dead-letters it after maxAttempts', async () => {
    const transport = new PostgresTransport<string>(fromPg(pool()), { schema: schema(), maxAttempts: 3 });
    const seq = await transport.publish('poison', 'boom');
    const claimedAt: number[] = [];
    const visibilityMs = 30_000;
    const consumer = start(
      transport,
      (_event, lease) => {
        claimedAt.push(lease.expiresAt - visibilityMs); // the server's clock at the claim
        throw new Error('handler failed');
      },
      { visibilityMs, backoff: { baseMs: 40, factor: 2 }, idleMinMs: 5, idleMaxMs: 20, onError: () => {} },
    );
    await waitFor(async () => (await transport.deadLetters()).length === 1);
    await consumer.stop();
    const [dead] = await transport.deadLetters();
    expect(dead).toMatchObject({ seq, groupId: 'poison', event: 'boom', attempt: 3 });
    expect(claimedAt).toHaveLength(3);
    // Each redelivery came no earlier than its back-off: 40 ms after attempt 1, 80 ms after attempt 2.
    expect(claimedAt[1]! - claimedAt[0]!).toBeGreaterThanOrEqual(40);
    expect(claimedAt[2]! - claimedAt[1]!).toBeGreaterThanOrEqual(80);
    expect(consumer.failed).toBe(3);
    expect(await transport.stats()).toMatchObject({ queued: 0, dead: 1 });
  });

  it('runs handlers concurrently, across two consumers on two pools, never two of one group at once', async () => {
    const name = schema();
    const a = new PostgresTransport<{ g: string; i: number }>(fromPg(pool()), { schema: name });
    const b = new PostgresTransport<{ g: string; i: number }>(fromPg(pool()), { schema: name });
    for (let i = 0; i < 60; i++) await a.publish(`g${i % 6}`, { g: `g${i % 6}`, i });
    // b's pool connects now, not after the consumers start: on a loaded machine a's consumer
    // could otherwise handle all 60 while b's first connection is being made.
    await b.stats();
    const running = new Map<string, number>();
    const order = new Map<string, number[]>();
    let now = 0;
    let most = 0;
    const overlaps: string[] = [];
    const handler = async (event: { g: string; i: number }) => {
      if (running.has(event.g)) overlaps.push(`${event.i} while ${running.get(event.g)} of ${event.g} ran`);
      running.set(event.g, event.i);
      most = Math.max(most, ++now);
      // Hold the slot until another handler has started (or a few turns passed): real overlap.
      await new Promise((resolve) => setTimeout(resolve, 3));
      order.set(event.g, [...(order.get(event.g) ?? []), event.i]);
      running.delete(event.g);
      now--;
    };
    const first = start(a, handler, { concurrency: 4, workerId: 'a', onError: () => {} });
    const second = start(b, handler, { concurrency: 4, workerId: 'b', onError: () => {} });
    await waitFor(() => first.handled + second.handled === 60);
    await Promise.all([first.stop(), second.stop()]);
    expect(overlaps).toEqual([]);
    for (const [g, list] of order) expect(list).toEqual(Array.from({ length: 10 }, (_, k) => Number(g.slice(1)) + 6 * k));
    expect(most).toBeGreaterThan(1);
    expect(first.handled).toBeGreaterThan(0);
    expect(second.handled).toBeGreaterThan(0);
  });

  it('wakes on a publish from another process through LISTEN/NOTIFY, not by polling', async () => {
    const name = schema();
    const transport = new PostgresTransport<{ n: number }>(fromPg(pool()), { schema: name, queue: 'wake' });
    await transport.stats(); // the schema and queue exist before the other process publishes
    let claims = 0;
    const counted = new Proxy(transport, {
      get(target, property) {
        const value = Reflect.get(target, property) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (property === 'claim' || property === 'claimMany' || property === 'ackAndClaim') claims++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    // Idle polls every 10 minutes: far beyond this test's timeout, so only a notice can wake it.
    const pollMs = 600_000;
    const longTimers: number[] = [];
    const scheduler: Scheduler = {
      setTimeout: (callback, ms) => setTimeout(() => (ms >= 1_000 && longTimers.push(ms), callback()), ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    };
    const handled: number[] = [];
    const consumer = start(counted, (event) => void handled.push(event.n), { idleMinMs: pollMs, idleMaxMs: pollMs, scheduler, onError: () => {} });
    // Idle (its first claim found nothing) and listening (a connection's last statement was LISTEN).
    await waitFor(() => claims > 0 && consumer.active === 0);
    await waitFor(async () => {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE state = 'idle' AND query = 'LISTEN lh_' || to_regclass(format('%I.%I', $1::text, 'lh_q1_claims'))::oid`,
        [name],
      );
      return row!.n > 0;
    });
    for (let n = 1; n <= 3; n++) {
      const child = runChild(new URL('./support/pg-publish-child.ts', import.meta.url).pathname, [await pgUrl(), name, 'wake', 'ball', JSON.stringify({ n })], () => {});
      const { code, stderr } = await child.ended;
      expect(code, stderr).toBe(0);
      await waitFor(() => handled.length === n);
    }
    await consumer.stop();
    expect(handled).toEqual([1, 2, 3]);
    expect(longTimers).toEqual([]);
  });

  it('stop() gives back every lease its handlers still hold: nothing stays leased', async () => {
    const transport = new PostgresTransport<number>(fromPg(pool()), { schema: schema() });
    for (let i = 0; i < 3; i++) await transport.publish(`g${i}`, i);
    const aborted: number[] = [];
    const consumer = start(
      transport,
      (event, _lease, { signal }) => new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => (aborted.push(event), reject(signal.reason)))),
      { concurrency: 3, onError: () => {} },
    );
    await waitFor(async () => consumer.active === 3 && (await transport.stats()).leased === 3);
    await consumer.stop({ graceMs: 0 });
    expect(aborted.sort()).toEqual([0, 1, 2]);
    expect(consumer.released).toBe(3);
    expect(await transport.stats()).toMatchObject({ queued: 3, leased: 0, ready: 3 });
    // Another consumer takes them over at once (nacked with delay 0, no lease to wait out).
    const next = start(transport, () => {}, { concurrency: 3, onError: () => {} });
    await waitFor(() => next.handled === 3);
    await next.stop();
    expect(await transport.stats()).toMatchObject({ queued: 0, leased: 0 });
  });
});
