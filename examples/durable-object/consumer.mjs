/**
 * A consumer outside Workers: takes orders from the Worker's queue and prints them. Plain
 * JavaScript, so it runs on Node 20 as it is (`npm run consume`, see README.md).
 *
 *   LEASEHOLD_URL=https://leasehold-queue.<you>.workers.dev LEASEHOLD_TOKEN=<token> npm run consume
 */
import { WebSocket } from 'ws';
import { consume } from 'leasehold';
import { connectLeasehold } from 'leasehold/durable-object/client';

const { LEASEHOLD_URL, LEASEHOLD_TOKEN } = process.env;
if (!LEASEHOLD_URL || !LEASEHOLD_TOKEN) {
  console.error('Set LEASEHOLD_URL (the Worker, e.g. https://leasehold-queue.<you>.workers.dev) and LEASEHOLD_TOKEN.');
  process.exit(2);
}

const client = connectLeasehold({
  url: `${LEASEHOLD_URL}/leasehold/orders`,
  headers: { authorization: `Bearer ${LEASEHOLD_TOKEN}` },
  // Change notices come over a WebSocket, so an idle consumer wakes at once on a publish. Node 20
  // has no global WebSocket: the `ws` package's (which Node 22 can use as well).
  WebSocket,
});

const orders = consume(client.transport, async (order) => {
  console.log('order', JSON.stringify(order)); // your work here; resolving acks the order
}, {
  onError: (error, { phase }) => console.error(phase, error),
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await orders.stop({ graceMs: 5_000 }); // running handlers finish; the rest is given back
    await client.close();
  });
}
