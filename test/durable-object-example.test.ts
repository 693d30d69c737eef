/**
 * The example Worker in examples/durable-object runs as written in workerd: a publish over RPC
 * from inside the Worker, then a client outside Workers claims it over HTTP with the token, and
 * is refused without it.
 */
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectLeasehold } from '../src/durable-object/client.js';
import { startWorkerd, type Workerd } from './support/workerd.js';

describe('the example Worker (examples/durable-object)', () => {
  let workerd: Workerd;
  beforeAll(async () => {
    workerd = await startWorkerd(undefined, { entry: 'examples/durable-object/worker.ts', className: 'Queue', bindings: { LEASEHOLD_TOKEN: 'example-token' } });
  });
  afterAll(async () => {
    await workerd.stop();
    workerd.remove();
  });

  it('publishes over RPC in the Worker and is consumed over HTTP with the token', async () => {
    const order = { id: 'o-1', customer: 'ada' };
    const post = () => fetch(`${workerd.url}/orders`, { method: 'POST', body: JSON.stringify(order) }).then((r) => r.json());
    const { seq } = (await post()) as { seq: number };
    expect(await post()).toEqual({ seq }); // the order id is the publish key
    const url = `${workerd.url}/leasehold/orders`;
    const outsider = connectLeasehold({ url, WebSocket });
    await expect(outsider.transport.claim('c', 1000)).rejects.toMatchObject({ code: 'ACCESS_DENIED', message: expect.stringContaining('401') });
    const consumer = connectLeasehold({ url, WebSocket, headers: { authorization: 'Bearer example-token' } });
    const lease = (await consumer.transport.claim('c', 30_000))!;
    expect(lease).toMatchObject({ seq, groupId: 'ada', event: order });
    await consumer.transport.ack(lease);
    expect(await consumer.transport.stats()).toMatchObject({ queued: 0 });
    await consumer.close();
  });

  it('has no test hooks: a caller cannot set its clock, its options or reset it', async () => {
    const url = `${workerd.url}/leasehold/hooks`;
    const headers = { authorization: 'Bearer example-token', 'content-type': 'application/json' };
    const call = (body: object) => fetch(`${url}/call`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ ok: boolean; value?: { expiresAt: number } }>);
    expect((await call({ target: 'transport', method: 'publish', args: ['g', 1] })).ok).toBe(true);
    // A clock reading in the body is not the object's: the lease runs on the object's wall clock.
    const before = Date.now();
    const claimed = await call({ target: 'transport', method: 'claim', args: ['w', 60_000], now: 5, options: { maxAttempts: 1 } });
    expect(claimed.value!.expiresAt).toBeGreaterThanOrEqual(before + 60_000 - 5_000);
    expect((await fetch(`${url}/abort`, { method: 'POST', headers })).status).toBe(404);
  });
});
