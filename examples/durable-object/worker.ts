/**
 * A Worker with a leasehold queue in a Durable Object (see README.md beside this file):
 * - `POST /orders` (from inside Workers, over RPC) publishes an order to the `orders` queue;
 * - clients outside Workers reach the same queue at `/leasehold/orders/call` (and subscribe to
 *   changes at `/leasehold/orders/changes`) with `connectLeasehold` from
 *   `leasehold/durable-object/client`, carrying `authorization: Bearer <LEASEHOLD_TOKEN>`.
 */
import { LeaseholdObject, objectTransport, routeToObject, type LeaseholdStub } from 'leasehold/durable-object';

/** The Durable Object class, declared in wrangler.toml with SQLite storage. */
export class Queue extends LeaseholdObject {
  // Five deliveries, then the message goes to the dead letters.
  override options() {
    return { maxAttempts: 5 };
  }
}

interface Env {
  QUEUE: { idFromName(name: string): unknown; get(id: unknown): LeaseholdStub & { fetch(request: Request): Promise<Response> } };
  /** `wrangler secret put LEASEHOLD_TOKEN`: the bearer token outside clients must send. */
  LEASEHOLD_TOKEN: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const routed = await routeToObject(request, env.QUEUE, { token: env.LEASEHOLD_TOKEN });
    if (routed) return routed;
    const url = new URL(request.url);
    if (url.pathname === '/orders' && request.method === 'POST') {
      const order = (await request.json()) as { id: string; customer: string };
      // One object per queue name; the group keeps one customer's orders in order.
      const orders = objectTransport(env.QUEUE.get(env.QUEUE.idFromName('orders')));
      const seq = await orders.publish(order.customer, order, { key: order.id });
      return Response.json({ seq });
    }
    return new Response('not found', { status: 404 });
  },
};
