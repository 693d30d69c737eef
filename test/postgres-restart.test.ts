/**
 * A PostgreSQL server that crashes (`pg_ctl stop -m immediate`: no checkpoint, as after a power
 * cut of the server process) and comes back: every acknowledged call survives, calls made while
 * it is down reject with a clear StorageError, and the same objects carry on once it is back.
 * Runs on a private throwaway server (never the run's shared one, which other files use).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
