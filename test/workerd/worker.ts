/**
 * The Worker the tests run inside workerd: the ready LeaseholdObject, reached over HTTP at
 * /q/<name>/…, over Workers RPC at /rpc/<name>/call (this Worker calls the object's `call`
 * method, so the suites exercise RPC too), behind a token at /s/<name>/…, and a benchmark loop
 * that runs inside the Worker over raw RPC.
 */
import { LeaseholdObject, routeToObject, type CallBody } from '../../src/durable-object/index.js';

export { LeaseholdObject };

/** The object's stub: its RPC methods (typed by the class) and fetch. */
type Stub = Pick<LeaseholdObject, 'call' | 'publishMany' | 'claim' | 'ack'> & { fetch(request: Request): Promise<Response> };

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
      const body = (await request.json()) as CallBody;
      return Response.json(await stub.call(body.target, body.method, body.args, { client: body.client, queue: body.queue, now: body.now, options: body.options, encoded: true }));
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
