/**
 * leasehold in a Durable Object (a LeaseholdObject in a local workerd, SQLite on local disk),
 * beside the same SQL on better-sqlite3 in this process, measured in turns (see `alternate`):
 * claim+ack of one message at a time, messages/s, from a backlog of one message per group.
 * - better-sqlite3: SqliteTransport on a file (WAL, NORMAL) in this process: no network;
 * - one object over HTTP: the Node client, one POST per call (two per message), with Node's
 *   fetch (the client's default) and with a node:http keep-alive connection (`options.fetch`);
 * - one object with calls on its WebSocket (`calls: 'websocket'`): one message a call, each way;
 * - one object over Workers RPC: a loop inside a Worker calling the object's methods;
 * - 1, 2 and 4 objects behind spreadTransport over HTTP (clients with `concurrent: true`), with
 *   4 workers claiming at once;
 * - the layers under an HTTP call, each as two requests a "message" so its rate reads against
 *   claim+ack's: the floor (a POST the Worker answers without touching an object), a POST that
 *   reaches the object's fetch and is answered without SQL, and the same hop from inside the
 *   Worker over RPC;
 * and batches of 32, in process, on one object over HTTP, WebSocket calls and RPC: claimMany + ackMany (two
 * calls a batch) against ackAndClaimMany (one).
 * Where /proc allows, each row also reads the CPU time workerd and this process spent a message
 * (from /proc/<pid>/task/<tid>/schedstat and process.cpuUsage()): on a shared machine that
 * figure moves much less than wall time does.
 * workerd runs on this machine, so every call pays a local round trip and workerd's own request
 * handling; a deployed object adds the network between caller and object.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { connectLeasehold, type LeaseholdClient, type LeaseholdClientOptions } from '../src/durable-object/client.js';
import { spreadTransport } from '../src/transport/spread.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { Transport } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { startWorkerd } from '../test/support/workerd.js';
import { alternate, median, times, type BenchRow, type Entrant } from './lib.js';

const VISIBILITY_MS = 60_000;
let objects = 0;

/** Publishes `n` messages (one per group, untimed), then claims and acks them all with `workers` loops; messages/s. */
async function claimAck(transport: Transport, n: number, workers = 1, timed: (run: () => Promise<void>) => Promise<number> = wallRate(n)): Promise<number> {
  const tag = `r${++objects}`;
  await transport.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `${tag}-${i}`, event: { i } })));
  let done = 0;
  const rate = await timed(async () => {
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        for (let lease = await transport.claim(`w${w}`, VISIBILITY_MS); lease; lease = await transport.claim(`w${w}`, VISIBILITY_MS)) {
          await transport.ack(lease);
          done++;
        }
      }),
    );
  });
  if (done !== n) throw new Error(`claimed ${done} of ${n}`);
  return rate;
}

/** Publishes `n` messages (one per group, untimed), then takes them 32 at a time: claimMany + ackMany, or one ackAndClaimMany a batch; messages/s. */
async function batches(transport: Transport, n: number, combined: boolean, timed: (run: () => Promise<void>) => Promise<number> = wallRate(n)): Promise<number> {
  const tag = `b${++objects}`;
  await transport.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `${tag}-${i}`, event: { i } })));
  let done = 0;
  const rate = await timed(async () => {
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
  });
  if (done !== n) throw new Error(`acked ${done} of ${n}`);
  return rate;
}

/** Times `run` on the wall clock: `n` per second. */
const wallRate = (n: number) => async (run: () => Promise<void>) => {
  const started = performance.now();
  await run();
  return n / ((performance.now() - started) / 1000);
};

/** CPU time (µs) that process `pid` has spent so far, all threads; null where /proc cannot tell. */
function cpuMicros(pid: number): number | null {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1000;
  } catch {
    return null;
  }
}

/**
 * A `fetch` for the client on node:http with one keep-alive connection: what a Node caller can
 * pass as `options.fetch`. On this machine Node's own fetch costs about 0.3 ms more CPU a call.
 */
function nodeHttpFetch(): { fetch: NonNullable<LeaseholdClientOptions['fetch']>; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const fetch: NonNullable<LeaseholdClientOptions['fetch']> = (input, init) =>
    new Promise((resolve, reject) => {
      const request = http.request(input, { method: init.method, agent, headers: { ...init.headers, 'content-length': Buffer.byteLength(init.body) } }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ ok: response.statusCode! >= 200 && response.statusCode! < 300, status: response.statusCode!, text: async () => text }));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(init.body);
    });
  return { fetch, close: () => agent.destroy() };
}

export async function benchEdge({ quick }: { quick: boolean }): Promise<BenchRow[]> {
  const n = quick ? 100 : 300;
  const runs = quick ? 1 : 3;
  const workerd = await startWorkerd();
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-edge-'));
  const clients: LeaseholdClient[] = [];
  const nodeHttp = nodeHttpFetch();
  const client = (name: string, concurrent = false, fetch?: LeaseholdClientOptions['fetch'], calls: LeaseholdClientOptions['calls'] = 'http') => {
    const c = connectLeasehold({ url: `${workerd.url}/q/${name}`, WebSocket, concurrent, calls, ...(fetch ? { fetch } : {}) });
    clients.push(c);
    return c;
  };
  /** CPU µs a message of each timed run, by contender. */
  const cpu = new Map<string, { workerd: number[]; client: number[] }>();
  /** Times `run` (which handles `count` messages) on the wall clock and records the CPU it took. */
  const measured = (name: string, count: number) => async (run: () => Promise<void>) => {
    const w0 = cpuMicros(workerd.pid);
    const c0 = process.cpuUsage();
    const rate = await wallRate(count)(run);
    const w1 = cpuMicros(workerd.pid);
    const c1 = process.cpuUsage(c0);
    if (w0 !== null && w1 !== null) {
      if (!cpu.has(name)) cpu.set(name, { workerd: [], client: [] });
      cpu.get(name)!.workerd.push((w1 - w0) / count);
      cpu.get(name)!.client.push((c1.user + c1.system) / count);
    }
    return rate;
  };
  /** A loop inside the Worker over raw RPC (see test/workerd/worker.ts): its own timing, this side's CPU reading. */
  const inWorker = async (name: string, op: string, count: number, { messages = count, setup }: { messages?: number; setup?: string } = {}) => {
    const object = `rpc-${++objects}`;
    if (setup) await (await fetch(`${workerd.url}/bench/${object}/rpc?n=${count}&op=${setup}`)).text();
    let answer: { n: number; ms: number } | undefined;
    await measured(name, messages)(async () => {
      answer = (await (await fetch(`${workerd.url}/bench/${object}/rpc?n=${count}&op=${encodeURIComponent(op)}`)).json()) as { n: number; ms: number };
    });
    if (answer!.n !== count) throw new Error(`${name}: ${answer!.n} of ${count}`);
    return messages / (Math.max(answer!.ms, 1) / 1000);
  };
  /** `2 × count` requests to `path`, one at a time, with `post`: the layers under a message's two calls. */
  const requests = (name: string, path: string, post: (url: string) => Promise<unknown>) => () =>
    measured(name, n)(async () => {
      for (let i = 0; i < 2 * n; i++) await post(`${workerd.url}${path}`);
    });
  // The same body size and headers as a claim's call, so the floor differs from it only by the object.
  const body = JSON.stringify({ target: 'transport', method: 'claim', args: ['w', VISIBILITY_MS], client: '0123456789abcdef' });
  const headers = { 'content-type': 'application/json' };
  const viaFetch = (url: string) => fetch(url, { method: 'POST', headers, body }).then((r) => r.text());
  const viaNodeHttp = (url: string) => nodeHttp.fetch(url, { method: 'POST', headers, body }).then((r) => r.text());
  try {
    const db = await openBetterSqliteDatabase(join(dir, 'bench.db'));
    const local = new SqliteTransport(db);
    const one = client('one').transport;
    const oneNodeHttp = client('one-node-http', false, nodeHttp.fetch).transport;
    const oneSocket = client('one-socket', false, undefined, 'websocket').transport;
    const spread = (k: number) => spreadTransport(Array.from({ length: k }, (_, i) => client(`spread${k}-${i}`, true).transport));
    const HTTP = 'one object, HTTP (Node fetch)';
    const HTTP_NODE = 'one object, HTTP (node:http keep-alive, options.fetch)';
    const SOCKET = 'one object, WebSocket calls';
    const RPC = 'one object, Workers RPC';
    const FLOOR = 'floor: 2 no-op POSTs to the same workerd (Node fetch)';
    const FLOOR_NODE = 'floor: 2 no-op POSTs (node:http keep-alive)';
    const HOP = '2 POSTs reaching the object, no SQL (Node fetch)';
    const HOP_RPC = '2 RPC fetches reaching the object, no SQL (in the Worker)';
    const entrants: Entrant[] = [
      { name: 'better-sqlite3 file, in process', measure: () => claimAck(local, n) },
      { name: FLOOR, measure: requests(FLOOR, '/noop', viaFetch) },
      { name: FLOOR_NODE, measure: requests(FLOOR_NODE, '/noop', viaNodeHttp) },
      { name: HOP, measure: requests(HOP, '/probe/hop/x', viaFetch) },
      { name: HOP_RPC, measure: () => inWorker(HOP_RPC, 'fetch', 2 * n, { messages: n }) },
      { name: HTTP, measure: () => claimAck(one, n, 1, measured(HTTP, n)) },
      { name: HTTP_NODE, measure: () => claimAck(oneNodeHttp, n, 1, measured(HTTP_NODE, n)) },
      { name: SOCKET, measure: () => claimAck(oneSocket, n, 1, measured(SOCKET, n)) },
      { name: RPC, measure: () => inWorker(RPC, 'claim+ack', n, { setup: 'publish' }) },
      ...[1, 2, 4].map((k): Entrant => {
        const queue = spread(k);
        return { name: `${k} object${k > 1 ? 's' : ''}, spreadTransport over HTTP, 4 workers`, measure: () => claimAck(queue, n, 4) };
      }),
    ];
    const results = await alternate(runs, entrants);
    const HTTP_BATCHES = 'one object, HTTP (Node fetch): claimMany + ackMany';
    const HTTP_COMBINED = 'one object, HTTP (Node fetch): ackAndClaimMany';
    const SOCKET_BATCHES = 'one object, WebSocket calls: claimMany + ackMany';
    const SOCKET_COMBINED = 'one object, WebSocket calls: ackAndClaimMany';
    const RPC_BATCHES = 'one object, Workers RPC: claimMany + ackMany';
    const RPC_COMBINED = 'one object, Workers RPC: ackAndClaimMany';
    const batched: Entrant[] = [
      { name: 'better-sqlite3 file, in process: claimMany + ackMany', measure: () => batches(local, n * 10, false) },
      { name: 'better-sqlite3 file, in process: ackAndClaimMany', measure: () => batches(local, n * 10, true) },
      { name: HTTP_BATCHES, measure: () => batches(one, n * 10, false, measured(HTTP_BATCHES, n * 10)) },
      { name: HTTP_COMBINED, measure: () => batches(one, n * 10, true, measured(HTTP_COMBINED, n * 10)) },
      { name: SOCKET_BATCHES, measure: () => batches(oneSocket, n * 10, false, measured(SOCKET_BATCHES, n * 10)) },
      { name: SOCKET_COMBINED, measure: () => batches(oneSocket, n * 10, true, measured(SOCKET_COMBINED, n * 10)) },
      { name: RPC_BATCHES, measure: () => inWorker(RPC_BATCHES, 'claimMany+ackMany', n * 10, { setup: 'publish' }) },
      { name: RPC_COMBINED, measure: () => inWorker(RPC_COMBINED, 'ackAndClaimMany', n * 10, { setup: 'publish' }) },
    ];
    const batchResults = await alternate(runs, batched);
    db.close();
    const rate = (name: string) => results.get(name)?.opsPerSec ?? batchResults.get(name)!.opsPerSec;
    const notes: Record<string, string> = {
      [HTTP]: `${times(rate(RPC), rate(HTTP))} RPC's time`,
      [HTTP_NODE]: `${times(rate(RPC), rate(HTTP_NODE))} RPC's time`,
      [SOCKET]: `${times(rate(RPC), rate(SOCKET))} RPC's time`,
      [HTTP_BATCHES]: `${times(rate(RPC_BATCHES), rate(HTTP_BATCHES))} RPC's time`,
      [SOCKET_BATCHES]: `${times(rate(RPC_BATCHES), rate(SOCKET_BATCHES))} RPC's time`,
      [SOCKET_COMBINED]: `${times(rate(RPC_COMBINED), rate(SOCKET_COMBINED))} RPC's time`,
      [HTTP_COMBINED]: `${times(rate(RPC_COMBINED), rate(HTTP_COMBINED))} RPC's time`,
    };
    const note = (name: string, perCall: boolean) => {
      const parts = notes[name] ? [notes[name]] : [];
      if (perCall) parts.push(`${Math.round(1e6 / rate(name) / 2)} µs a call`);
      const c = cpu.get(name);
      if (c) parts.push(`CPU a message: workerd ${Math.round(median(c.workerd))} µs, Node ${Math.round(median(c.client))} µs`);
      return parts.join('; ');
    };
    const rows = (workload: string, list: Entrant[], measured: typeof results, perCall: boolean) =>
      list.map((e) => {
        const r = measured.get(e.name)!;
        return { workload, backend: e.name, opsPerSec: r.opsPerSec, spread: r.spread, rates: r.rates, note: note(e.name, perCall && !e.name.startsWith('better') && !e.name.includes('spread')) };
      });
    return [...rows('claim+ack, one at a time', entrants, results, true), ...rows('claim+ack in batches of 32', batched, batchResults, false)];
  } finally {
    for (const c of clients) await c.close();
    nodeHttp.close();
    await workerd.stop();
    workerd.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}
