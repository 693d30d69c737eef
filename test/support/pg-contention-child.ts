/**
 * One consumer process of the PostgreSQL contention runs: `connections` workers, each on its own
 * pool connection, claiming from one queue on the server as fast as they can, with ackAndClaim,
 * plain acks, nacks (some with a delay), renewals, and now and then a stall longer than the
 * lease (so others take the message over and the stalled worker's late ack is refused). Every
 * call goes through `recorded` (pg-history.ts): the server keeps the history in commit order.
 *
 * Once stdin closes (the publisher is done) a worker stops when the queue is empty. While the
 * server is down a call rejects with StorageError: the worker reports it, drops its lease (it
 * runs out) and tries again shortly. Lines (each written before the worker goes on, so a SIGKILL
 * loses none): `READY`; `A <seq> <attempt>` an ack (or ackAndClaim) resolved;
 * `E <code> <cause code> <cause message>` a StorageError; `X <message>` anything else (then exit 1); `DONE`.
 * Args: url schema name connections visibilityMs seed stallRate [batch]. With `batch`, each
 * worker is a batch worker instead (see batchWorker).
 */
import pg from 'pg';
import { LeaseLostError, StorageError } from '../../src/errors.js';
import { fromPg } from '../../src/postgres/pg.js';
import { PostgresTransport } from '../../src/postgres/transport.js';
import type { Lease } from '../../src/transport/contract.js';
import { recorded } from './pg-history.js';
import { seeded } from './torture.js';

const [url, schema, name, connections, visibility, seed, stall, batch] = process.argv.slice(2);
const visibilityMs = Number(visibility);
const stallRate = Number(stall);
const random = seeded(Number(seed));
const pool = new pg.Pool({ connectionString: url, max: Number(connections) });
const transport = new PostgresTransport<{ n: number }>(recorded(fromPg(pool), schema!), { schema });
const say = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line}\n`, () => resolve()));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let publishing = true;
process.stdin.on('end', () => (publishing = false));
process.stdin.resume();

async function worker(id: string): Promise<void> {
  let lease: Lease<{ n: number }> | null = null;
  for (;;) {
    try {
      lease ??= await transport.claim(id, visibilityMs);
      if (!lease) {
        if (!publishing && (await transport.stats()).queued === 0) return;
        await pause(2 + random() * 8); // idle: poll again soon (the queue refills or a lease runs out)
        continue;
      }
      // A stalled handler: the lease runs out, another worker takes the message over.
      if (random() < stallRate) await pause(visibilityMs * (1.2 + random()));
      const roll = random();
      if (roll < 0.55) {
        const done: Lease<{ n: number }> = lease;
        lease = null;
        lease = await transport.ackAndClaim(done, id, visibilityMs);
        await say(`A ${done.seq} ${done.attempt}`);
      } else if (roll < 0.8) {
        const done: Lease<{ n: number }> = lease;
        lease = null;
        await transport.ack(done);
        await say(`A ${done.seq} ${done.attempt}`);
      } else if (roll < 0.9) {
        const back: Lease<{ n: number }> = lease;
        lease = null;
        await transport.nack(back, random() < 0.5 ? 0 : Math.floor(random() * 20));
      } else {
        lease = await transport.extend(lease, visibilityMs);
      }
    } catch (error) {
      lease = null;
      if (!(error instanceof LeaseLostError)) await survive(error);
    }
  }
}

/** A StorageError (the server is down, or broke a conflict): reported, then a short pause. Anything else is thrown. */
async function survive(error: unknown): Promise<void> {
  if (!(error instanceof StorageError)) throw error;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  await say(`E ${error.code} ${String(cause?.code ?? '')} ${String(cause?.message ?? error.message).replaceAll('\n', ' ')}`);
  await pause(20 + random() * 80);
}

/**
 * A batch worker: each step is one ackAndClaimMany of up to `max`, acking most of what it holds;
 * of the rest it nacks some and keeps some for a later step (by then the lease may have run out
 * and its ack be refused), and now and then it stalls past the lease before the step.
 */
async function batchWorker(id: string, max: number): Promise<void> {
  let held: Lease<{ n: number }>[] = [];
  for (;;) {
    try {
      if (held.length > 0 && random() < stallRate) await pause(visibilityMs * (1.2 + random()));
      const acking: Lease<{ n: number }>[] = [];
      const kept: Lease<{ n: number }>[] = [];
      for (const lease of held) {
        const roll = random();
        if (roll < 0.8) acking.push(lease);
        else if (roll < 0.9) await transport.nack(lease, random() < 0.5 ? 0 : Math.floor(random() * 20)).catch((error: unknown) => {
          if (!(error instanceof LeaseLostError)) throw error;
        });
        else kept.push(lease);
      }
      held = []; // if the call fails, what it held runs out
      const { acked, claimed } = await transport.ackAndClaimMany(acking, id, visibilityMs, { max });
      for (const lease of acked) await say(`A ${lease.seq} ${lease.attempt}`);
      held = kept.concat(claimed);
      if (held.length === 0) {
        if (!publishing && (await transport.stats()).queued === 0) return;
        await pause(2 + random() * 8);
      }
    } catch (error) {
      held = [];
      await survive(error);
    }
  }
}

try {
  await say('READY');
  const max = Number(batch ?? 0);
  await Promise.all(Array.from({ length: Number(connections) }, (_, i) => (max > 0 ? batchWorker(`${name}-w${i}`, max) : worker(`${name}-w${i}`))));
  await pool.end();
  await say('DONE');
  process.exit(0);
} catch (error) {
  await say(`X ${String(error instanceof Error ? error.stack : error).replaceAll('\n', ' | ')}`);
  process.exit(1);
}
