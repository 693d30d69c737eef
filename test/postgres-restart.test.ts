/**
 * A PostgreSQL server that crashes (`pg_ctl stop -m immediate`: no checkpoint, as after a power
 * cut of the server process) and comes back: every acknowledged call survives, calls made while
 * it is down reject with a clear StorageError, and the same objects carry on once it is back;
 * consumers whose acks fail while it is down try them again and deliver nothing twice.
 * Runs on a private throwaway server (never the run's shared one, which other files use).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consume } from '../src/consume/consume.js';
import { StorageError } from '../src/errors.js';
import { fromPg } from '../src/postgres/pg.js';
import { PostgresStore } from '../src/postgres/store.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../scripts/postgres.mjs';

let server: ThrowawayPostgres;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startThrowawayPostgres({ label: 'leasehold-pg-restart' });
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
}, 120_000);

afterAll(async () => {
  await pool?.end().catch(() => {});
  server?.stop();
});

describe('PostgreSQL server crash and restart', () => {
  it('keeps every acknowledged call, rejects calls with StorageError while down, and carries on after', async () => {
    const db = fromPg(pool);
    const transport = new PostgresTransport(db);
    const store = new PostgresStore(db);
    const seqs: number[] = [];
    for (let i = 0; i < 20; i++) seqs.push(await transport.publish(`g${i % 4}`, { i }));
    const held = (await transport.claim('w', 60_000))!;
    await transport.ack(held);
    await store.save({ id: 'order-1', version: 0, status: 'paid' });

    server.crash();
    const down = await transport.publish('g0', { late: true }).then(() => null, (error: unknown) => error);
    expect(down).toBeInstanceOf(StorageError);
    expect(down).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    await expect(store.load('order-1')).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });

    server.start();
    // The pool may still hand out a connection that died with the server: a call may fail once more.
    const retry = async <T>(call: () => Promise<T>): Promise<T> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await call();
        } catch (error) {
          if (!(error instanceof StorageError) || attempt >= 5) throw error;
        }
      }
    };
    const snapshot = await retry(() => transport.inspect());
    const queued = snapshot.groups.flatMap((g) => g.messages.map((m) => m.seq)).sort((a, b) => a - b);
    expect(queued).toEqual(seqs.filter((s) => s !== held.seq));
    expect(await retry(() => store.load('order-1'))).toMatchObject({ version: 1, status: 'paid' });
    // The queue goes on: every remaining message can be claimed and acked.
    let drained = 0;
    for (let lease = await transport.claim('w2', 60_000); lease; lease = await transport.ackAndClaim(lease, 'w2', 60_000)) drained++;
    expect(drained).toBe(19);
  }, 180_000);

  it('consume() tries failed acks again: nothing delivered twice, no group left waiting for its lease', async () => {
    const pools = [0, 1].map(() => new pg.Pool({ connectionString: server.url, max: 4 }));
    const publisher = new PostgresTransport(fromPg(pools[0]!), { queue: 'acks-through-a-restart' });
    const seqs = await publisher.publishMany(Array.from({ length: 40 }, (_, i) => ({ groupId: `g${i % 8}`, event: { i } })));
    const deliveries = new Map<number, number>();
    let crashed = false;
    let release: () => void = () => {};
    const crash = new Promise<void>((resolve) => (release = resolve));
    const acksRefused: (number | undefined)[] = [];
    // Two consumers × 4 slots on their own pools; the first eight handlers finish while the
    // server is down, so their acks fail. The leases (20 s) outlive the outage: an ack that was
    // not tried again would leave its group until the lease ran out and deliver it twice.
    const consumers = pools.map((pool) =>
      consume(
        new PostgresTransport(fromPg(pool), { queue: 'acks-through-a-restart' }),
        async (_event, lease) => {
          deliveries.set(lease.seq, (deliveries.get(lease.seq) ?? 0) + 1);
          if (!crashed) await crash;
        },
        {
          concurrency: 4,
          visibilityMs: 20_000,
          onError: (error, info) => {
            if (!(error instanceof StorageError)) throw error;
            if (info.phase === 'ack') acksRefused.push(info.retryInMs);
          },
        },
      ),
    );
    try {
      while ([...deliveries.values()].length < 8) await new Promise((resolve) => setTimeout(resolve, 20));
      server.crash();
      crashed = true;
      release();
      while (acksRefused.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      server.start();
      while (consumers.reduce((n, c) => n + c.handled, 0) < seqs.length) await new Promise((resolve) => setTimeout(resolve, 50));
      expect([...deliveries.keys()].sort((a, b) => a - b)).toEqual(seqs);
      expect([...deliveries.values()].filter((n) => n > 1)).toEqual([]);
      expect(consumers.reduce((n, c) => n + c.lost, 0)).toBe(0);
      expect(acksRefused.filter((retryInMs) => retryInMs === undefined)).toEqual([]); // every one tried again
    } finally {
      await Promise.all(consumers.map((c) => c.stop({ graceMs: 0 })));
      await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
    }
  }, 120_000);
});
