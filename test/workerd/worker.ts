/**
 * The Worker the tests run inside workerd: the ready LeaseholdObject, reached over HTTP at
 * /q/<name>/…, over Workers RPC at /rpc/<name>/call (this Worker calls the object's `call`
 * method, so the suites exercise RPC too), behind a token at /s/<name>/…, and a benchmark loop
 * that runs inside the Worker over raw RPC.
 */
import { LeaseholdObject, routeToObject, type CallBody, type CallAnswer, type ObjectOptions } from '../../src/durable-object/index.js';

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
    return this.call(body.target, body.method, body.args, { client: body.client, queue: body.queue, encoded: true });
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
type Stub = Pick<TestObject, 'testCall' | 'publishMany' | 'claim' | 'ack'> & { fetch(request: Request): Promise<Response> };

interface Env {
  QUEUE: { idFromName(name: string): unknown; get(id: unknown): Stub };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const routed = (await routeToObject(request, env.QUEUE, { prefix: '/q' })) ?? (await routeToObject(request, env.QUEUE, { prefix: '/s', token: 'test-token' }));
    if (routed) return routed;
    const [, kind, name, action] = new URL(request.url).pathname.split('/');
    if (!name) return new Response('not found', { status: 404 });
    const stub = env.QUEUE.get(env.QUEUE.idFromName(decodeURIComponent(name)));
    if (kind === 'rpc' && action === 'call') {
      return Response.json(await stub.testCall((await request.json()) as TestCallBody));
    }
    if (kind === 'rpc') return stub.fetch(request);
    if (kind === 'bench' && action === 'rpc') return Response.json(await benchRpc(stub, Number(new URL(request.url).searchParams.get('n') ?? 1000)));
    return new Response('not found', { status: 404 });
  },
};

/** Publishes `n` messages in distinct groups, then claims and acks them one by one over RPC; times the second part. */
async function benchRpc(stub: Stub, n: number): Promise<{ n: number; ms: number }> {
  await stub.publishMany(Array.from({ length: n }, (_, i) => ({ groupId: `g${i}`, event: { i } })));
  // Date.now() in a Worker advances only across I/O, which every RPC call is.
  const started = Date.now();
  for (let lease = await stub.claim('bench', 30_000); lease; lease = await stub.claim('bench', 30_000)) await stub.ack(lease);
  return { n, ms: Date.now() - started };
}
