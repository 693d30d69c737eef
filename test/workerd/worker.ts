/**
 * The Worker the tests run inside workerd: the ready LeaseholdObject, reached over HTTP at
 * /q/<name>/…, over Workers RPC at /rpc/<name>/call (this Worker calls the object's `call`
 * method, so the suites exercise RPC too), behind a token at /s/<name>/…, and what the edge
 * benchmark measures the layers with: `/noop` (answered by this Worker alone), `/probe/<name>/…`
 * (reaches the object's fetch, which answers 404 without SQL) and loops that run inside this
 * Worker over raw RPC at `/bench/<name>/rpc`.
 */
import { LeaseholdObject, routeToObject, type CallBody, type CallAnswer, type ObjectOptions } from '../../src/durable-object/index.js';
import type { WebSocketLike } from '../../src/durable-object/types.js';

/** What a test's call carries besides the call: the manual clock's reading, and the object's options. */
export interface TestCallBody extends CallBody {
  now?: number;
  options?: ObjectOptions;
}

/**
 * The object the tests run: the shipped LeaseholdObject on the test's manual clock (each call
 * carries its reading), with the options the test asks for, and a way to drop the instance so
 * the next call builds a new one from storage (as after an eviction). All of it lives here, in
 * the test Worker: the shipped class has no test hooks.
 */
export class TestObject extends LeaseholdObject {
  /** The test's clock reading, once a call carried one. */
  #now: number | null = null;
  #options: ObjectOptions | undefined;

  override options(): ObjectOptions {
    return this.#options ?? super.options();
  }

  /** A call of the test's, over RPC or HTTP: its clock reading and options first, then the call. */
  async testCall(body: TestCallBody): Promise<CallAnswer> {
    this.#adopt(body);
    return this.call(body.target, body.method, body.args, { client: body.client, queue: body.queue, encoded: true });
  }

  /** A call of the test's over the WebSocket: the same fields, then the shipped handler. */
  override async webSocketMessage(socket: WebSocketLike, message: string | ArrayBuffer): Promise<void> {
    try {
      this.#adopt(JSON.parse(String(message)) as TestCallBody);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
    }
    return super.webSocketMessage(socket, message);
  }

  /** Takes a test call's clock reading and options. */
  #adopt(body: Pick<TestCallBody, 'now' | 'options'>): void {
    if (body.options !== undefined) {
      // The host is built from the options at the first call: a later call cannot change them.
      if (this.#options !== undefined && JSON.stringify(this.#options) !== JSON.stringify(body.options)) throw new Error('a test object keeps the options of its first call');
      this.#options = body.options;
    }
    if (body.now !== undefined) {
      // The first reading puts this object on the test's clock: its clock() is overridden from
      // then on, so (as for any object on a clock of its own) it arms no alarm. An object whose
      // calls carry no reading stays on wall time, alarm included.
      if (this.#now === null) Object.defineProperty(this, 'clock', { value: () => this.#now! });
      this.#now = body.now;
    }
  }

  override async fetch(request: Request): Promise<Response> {
    const action = new URL(request.url).pathname.split('/').pop();
    if (action === 'abort' && request.method === 'POST') {
      (this.ctx as unknown as { abort(reason?: string): void }).abort('reset by a test');
    }
    if (action === 'call' && request.method === 'POST') {
      const body = (await request.clone().json().catch(() => undefined)) as TestCallBody | undefined;
      if (body) return Response.json(await this.testCall(body));
    }
    return super.fetch(request);
  }
}

/** The object's stub: its RPC methods (typed by the class) and fetch. */
type Stub = Pick<TestObject, 'testCall' | 'publishMany' | 'claim' | 'ack' | 'stats' | 'claimMany' | 'ackMany' | 'ackAndClaimMany'> & {
  fetch(request: Request): Promise<Response>;
};

interface Env {
  QUEUE: { idFromName(name: string): unknown; get(id: unknown): Stub };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // The floor of every HTTP call: workerd's request handling and this Worker, no object.
    if (new URL(request.url).pathname === '/noop') return new Response('ok');
    const [, kind, name, action] = new URL(request.url).pathname.split('/');
    // The tests' reset, beside the router (which knows only the shipped actions).
    if (kind === 'q' && name && action === 'abort') return env.QUEUE.get(env.QUEUE.idFromName(decodeURIComponent(name))).fetch(request);
    const routed = (await routeToObject(request, env.QUEUE, { prefix: '/q' })) ?? (await routeToObject(request, env.QUEUE, { prefix: '/s', token: 'test-token' }));
    if (routed) return routed;
    if (!name) return new Response('not found', { status: 404 });
    const stub = env.QUEUE.get(env.QUEUE.idFromName(decodeURIComponent(name)));
    if (kind === 'rpc' && action === 'call') {
      return Response.json(await stub.testCall((await request.json()) as TestCallBody));
    }
    if (kind === 'rpc') return stub.fetch(request);
    // The object's fetch answers an action it does not know with a 404, touching no storage.
    if (kind === 'probe') return stub.fetch(request);
    if (kind === 'bench' && action === 'rpc') {
      const params = new URL(request.url).searchParams;
      return Response.json(await benchRpc(stub, Number(params.get('n') ?? 1000), params.get('op')));
    }
    return new Response('not found', { status: 404 });
  },
};

/**
 * A loop over raw RPC inside this Worker, timed here; answers how many messages (or calls) it
 * took and the milliseconds. No `op`: publishes `n` messages in distinct groups, then claims and
 * acks them one by one (only the second part timed). `publish`: publishes `n` messages and
 * returns (untimed). `claim+ack`, `claimMany+ackMany`, `ackAndClaimMany`: take whatever is
 * queued, one at a time or 32 at a time. `stats`: `n` read-only calls. `fetch`: `n` requests to
 * the object's fetch that it answers without SQL.
 */
async function benchRpc(stub: Stub, n: number, op: string | null): Promise<{ n: number; ms: number }> {
  if (op === null || op === 'publish') await stub.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `g${i}`, event: { i } })));
  if (op === 'publish') return { n, ms: 0 };
  // Date.now() in a Worker advances only across I/O, which every RPC call is.
  const started = Date.now();
  let done = 0;
  if (op === null || op === 'claim+ack') {
    for (let lease = await stub.claim('bench', 30_000); lease; lease = await stub.claim('bench', 30_000)) {
      await stub.ack(lease);
      done++;
    }
  } else if (op === 'claimMany+ackMany') {
    for (let leases = await stub.claimMany('bench', 30_000, { max: 32 }); leases.length > 0; leases = await stub.claimMany('bench', 30_000, { max: 32 })) {
      done += (await stub.ackMany(leases)).acked.length;
    }
  } else if (op === 'ackAndClaimMany') {
    for (let leases = await stub.claimMany('bench', 30_000, { max: 32 }); leases.length > 0; ) {
      const { acked, claimed } = await stub.ackAndClaimMany(leases, 'bench', 30_000, { max: 32 });
      done += acked.length;
      leases = claimed;
    }
  } else if (op === 'stats') {
    for (; done < n; done++) await stub.stats();
  } else if (op === 'fetch') {
    for (; done < n; done++) await (await stub.fetch(new Request('http://object/probe/x'))).text();
  } else {
    throw new TypeError(`unknown op ${op}`);
  }
  return { n: done, ms: Date.now() - started };
}
