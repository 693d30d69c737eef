/**
 * leasehold in a Durable Object (a LeaseholdObject in a local workerd, SQLite on local disk),
 * beside the same SQL on better-sqlite3 in this process, measured in turns (see `alternate`):
 * claim+ack of one message at a time, messages/s, from a backlog of one message per group.
 * - better-sqlite3: SqliteTransport on a file (WAL, NORMAL) in this process: no network;
 * - one object over HTTP: the Node client, one POST per call (two per message);
 * - one object over Workers RPC: a loop inside a Worker calling the object's methods;
 * - 1, 2 and 4 objects behind spreadTransport over HTTP (clients with `concurrent: true`), with
 *   4 workers claiming at once;
 * and batches of 32, in process and on one object over HTTP: claimMany + ackMany (two calls a
 * batch) against ackAndClaimMany (one).
 * workerd runs on this machine, so every call pays a local round trip and workerd's own request
 * handling; a deployed object adds the network between caller and object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { connectLeasehold, type LeaseholdClient } from '../src/durable-object/client.js';
import { spreadTransport } from '../src/transport/spread.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { Transport } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { startWorkerd } from '../test/support/workerd.js';
import { alternate, type BenchRow, type Entrant } from './lib.js';

const VISIBILITY_MS = 60_000;
let objects = 0;

/** Publishes `n` messages (one per group, untimed), then claims and acks them all with `workers` loops; messages/s. */
async function claimAck(transport: Transport, n: number, workers = 1): Promise<number> {
  const tag = `r${++objects}`;
  await transport.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `${tag}-${i}`, event: { i } })));
  const started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let lease = await transport.claim(`w${w}`, VISIBILITY_MS); lease; lease = await transport.claim(`w${w}`, VISIBILITY_MS)) {
        await transport.ack(lease);
        done++;
      }
    }),
  );
  if (done !== n) throw new Error(`claimed ${done} of ${n}`);
  return n / ((performance.now() - started) / 1000);
}

/** Publishes `n` messages (one per group, untimed), then takes them 32 at a time: claimMany + ackMany, or one ackAndClaimMany a batch; messages/s. */
async function batches(transport: Transport, n: number, combined: boolean): Promise<number> {
  const tag = `b${++objects}`;
  await transport.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `${tag}-${i}`, event: { i } })));
  const started = performance.now();
  let done = 0;
  if (combined) {
    let leases = await transport.claimMany('w', VISIBILITY_MS, { max: 32 });
    while (leases.length > 0) {
      const { acked, claimed } = await transport.ackAndClaimMany(leases, 'w', VISIBILITY_MS, { max: 32 });
      done += acked.length;
      leases = claimed;
    }
  } else {
    for (let leases = await transport.claimMany('w', VISIBILITY_MS, { max: 32 }); leases.length > 0; leases = await transport.claimMany('w', VISIBILITY_MS, { max: 32 })) {
      done += (await transport.ackMany(leases)).acked.length;
    }
  }
  if (done !== n) throw new Error(`acked ${done} of ${n}`);
  return n / ((performance.now() - started) / 1000);
}

export async function benchEdge({ quick }: { quick: boolean }): Promise<BenchRow[]> {
  const n = quick ? 50 : 300;
  const runs = quick ? 1 : 3;
  const workerd = await startWorkerd();
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-edge-'));
  const clients: LeaseholdClient[] = [];
  const client = (name: string, concurrent = false) => {
    const c = connectLeasehold({ url: `${workerd.url}/q/${name}`, WebSocket, concurrent });
    clients.push(c);
    return c;
  };
  try {
    const db = await openBetterSqliteDatabase(join(dir, 'bench.db'));
    const local = new SqliteTransport(db);
    const one = client('one').transport;
    const spread = (k: number) => spreadTransport(Array.from({ length: k }, (_, i) => client(`spread${k}-${i}`, true).transport));
    const entrants: Entrant[] = [
      { name: 'better-sqlite3 file, in process', measure: () => claimAck(local, n) },
      { name: 'one object, HTTP', measure: () => claimAck(one, n) },
      {
        name: 'one object, Workers RPC',
        async measure() {
          const answer = (await (await fetch(`${workerd.url}/bench/rpc-${++objects}/rpc?n=${n}`)).json()) as { n: number; ms: number };
          return answer.n / (Math.max(answer.ms, 1) / 1000);
        },
      },
      ...[1, 2, 4].map((k): Entrant => {
        const queue = spread(k);
        return { name: `${k} object${k > 1 ? 's' : ''}, spreadTransport over HTTP, 4 workers`, measure: () => claimAck(queue, n, 4) };
      }),
    ];
    const results = await alternate(runs, entrants);
    const batched: Entrant[] = [
      { name: 'better-sqlite3 file, in process: claimMany + ackMany', measure: () => batches(local, n * 10, false) },
      { name: 'better-sqlite3 file, in process: ackAndClaimMany', measure: () => batches(local, n * 10, true) },
      { name: 'one object, HTTP: claimMany + ackMany', measure: () => batches(one, n * 10, false) },
      { name: 'one object, HTTP: ackAndClaimMany', measure: () => batches(one, n * 10, true) },
    ];
    const batchResults = await alternate(runs, batched);
    db.close();
    const rows = (workload: string, list: Entrant[], measured: typeof results) =>
      list.map((e) => {
        const r = measured.get(e.name)!;
        return { workload, backend: e.name, opsPerSec: r.opsPerSec, spread: r.spread, rates: r.rates };
      });
    return [...rows('claim+ack, one at a time', entrants, results), ...rows('claim+ack in batches of 32', batched, batchResults)];
  } finally {
    for (const c of clients) await c.close();
    await workerd.stop();
    workerd.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}
