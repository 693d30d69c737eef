/**
 * The page-side workloads of the browser benchmark, run through the public API
 * (`openBrowserDatabase`) in the tab that owns the database or in a second, forwarding tab.
 * Each returns what it did and when (epoch milliseconds), so the driver can also combine runs
 * of two tabs that ran at once.
 */
import { consume as startConsumer } from 'leasehold';
import type { BrowserDatabase } from 'leasehold/browser';

export const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };
const GROUPS = 100;
const VISIBILITY_MS = 30_000;

export type LoopMode = 'claim+ack' | 'ackAndClaim' | 'batch32' | 'ackAndClaimMany32' | 'consume';

export interface Timed {
  done: number;
  start: number;
  end: number;
}

/** The queue API's batch calls (QUEUE-API.md), used when the transport has them. */
interface Batching {
  claimMany(workerId: string, visibilityMs: number, options: { max: number }): Promise<Lease[]>;
  ackMany(leases: Lease[]): Promise<unknown>;
  ackAndClaimMany(leases: Lease[], workerId: string, visibilityMs: number, options: { max: number }): Promise<{ acked: Lease[]; claimed: Lease[] }>;
  publishMany(items: { groupId: string; event: unknown }[]): Promise<number[]>;
}
type Lease = { seq: number };

export function hasBatches(db: BrowserDatabase): boolean {
  return typeof (db.transport as unknown as Partial<Batching>).claimMany === 'function';
}

const epoch = () => performance.timeOrigin + performance.now();

/**
 * `loops` consumers at once, until `ops` messages were claimed and acked between them:
 * claim then ack (two commits each), ackAndClaim (one commit per message), claimMany and
 * ackMany of 32 (two commits per 32 messages), or ackAndClaimMany of 32 (one commit per 32).
 */
export async function runLoops(db: BrowserDatabase, loops: number, ops: number, mode: LoopMode, worker: string): Promise<Timed> {
  const t = db.transport;
  const batching = t as unknown as Batching;
  let done = 0;
  const start = epoch();
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      const workerId = `${worker}-${loop}`;
      if (mode === 'ackAndClaimMany32') {
        let leases = await batching.claimMany(workerId, VISIBILITY_MS, { max: 32 });
        while (done < ops) {
          if (leases.length === 0) throw new Error('bench backlog ran dry');
          const { acked, claimed } = await batching.ackAndClaimMany(leases, workerId, VISIBILITY_MS, { max: 32 });
          done += acked.length;
          leases = claimed;
        }
        await batching.ackMany(leases);
        done += leases.length;
      } else if (mode === 'batch32') {
        while (done < ops) {
          const leases = await batching.claimMany(workerId, VISIBILITY_MS, { max: 32 });
          if (leases.length === 0) throw new Error('bench backlog ran dry');
          await batching.ackMany(leases);
          done += leases.length;
        }
      } else if (mode === 'claim+ack') {
        while (done < ops) {
          const lease = await t.claim(workerId, VISIBILITY_MS);
          if (!lease) throw new Error('bench backlog ran dry');
          await t.ack(lease);
          done++;
        }
      } else {
        let held = await t.claim(workerId, VISIBILITY_MS);
        while (held && done < ops) {
          held = await t.ackAndClaim(held, workerId, VISIBILITY_MS);
          done++;
        }
        if (!held) throw new Error('bench backlog ran dry');
        await t.ack(held);
        done++;
      }
    }),
  );
  return { done, start, end: epoch() };
}

/**
 * `consume()` with `concurrency` slots and a handler that does nothing, until `ops` messages were
 * handled; then it stops (acks of the last ones land before it resolves).
 */
export async function consumeBench(db: BrowserDatabase, concurrency: number, ops: number, worker: string): Promise<Timed> {
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => (reached = resolve));
  let seen = 0;
  const start = epoch();
  const consumer = startConsumer(db.transport, () => void (++seen === ops && reached()), { concurrency, workerId: worker, visibilityMs: VISIBILITY_MS, onError: (error: unknown) => console.error(error) });
  await enough;
  await consumer.stop();
  return { done: consumer.handled, start, end: epoch() };
}

/** Puts `count` messages back (untimed), so the backlog stays where it was. */
export async function topUp(db: BrowserDatabase, count: number): Promise<void> {
  const batching = db.transport as unknown as Partial<Batching>;
  for (let from = 0; from < count; from += 500) {
    const items = Array.from({ length: Math.min(500, count - from) }, (_, i) => ({ groupId: `g${(from + i) % GROUPS}`, event: EVENT }));
    if (batching.publishMany) await batching.publishMany(items);
    // Without publishMany, concurrent publishes still share commits (group commit in the owner).
    else await Promise.all(items.map((item) => db.transport.publish(item.groupId, item.event)));
  }
}

/** Publishes one at a time, each awaited. */
export async function publishSerially(db: BrowserDatabase, ops: number): Promise<Timed> {
  const start = epoch();
  for (let i = 0; i < ops; i++) await db.transport.publish(`g${i % GROUPS}`, EVENT);
  return { done: ops, start, end: epoch() };
}

/** Publishes in batches of 32 with publishMany. */
export async function publishBatches(db: BrowserDatabase, ops: number): Promise<Timed> {
  const batching = db.transport as unknown as Batching;
  const start = epoch();
  for (let i = 0; i < ops; i += 32) await batching.publishMany(Array.from({ length: 32 }, (_, j) => ({ groupId: `g${(i + j) % GROUPS}`, event: EVENT })));
  return { done: Math.ceil(ops / 32) * 32, start, end: epoch() };
}

/** A call's latency in ms and when it ended (epoch ms). */
export interface Latency {
  ms: number;
  at: number;
}

/** `loops` loops, each with one publish in flight, until the returned function stops them. */
export function forwardLoops(db: BrowserDatabase, loops: number): () => Promise<Latency[]> {
  let stop = false;
  const latencies: Latency[] = [];
  const running = Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      for (let i = 0; !stop; i++) {
        const start = performance.now();
        await db.transport.publish(`fair-${loop}`, { loop, i });
        latencies.push({ ms: performance.now() - start, at: epoch() });
      }
    }),
  );
  return async () => {
    stop = true;
    await running;
    return latencies;
  };
}

/** `calls` publishes made one at a time. */
export async function ownCalls(db: BrowserDatabase, calls: number): Promise<Latency[]> {
  const latencies = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await db.transport.publish('fair-own', { i });
    latencies.push({ ms: performance.now() - start, at: epoch() });
  }
  return latencies;
}
