/**
 * A consumer outside Workers (Node 22+, or Node 20 with `ws`): claims orders from the Worker's
 * queue over HTTP and acks them. `LEASEHOLD_URL=https://leasehold-queue.<you>.workers.dev
 * LEASEHOLD_TOKEN=… node consumer.ts`
 */
import { connectLeasehold } from 'leasehold/durable-object/client';

const { transport } = connectLeasehold({
  url: `${process.env.LEASEHOLD_URL}/leasehold/orders`,
  headers: { authorization: `Bearer ${process.env.LEASEHOLD_TOKEN}` },
});
for (;;) {
  const lease = await transport.claim('consumer-1', 30_000);
  if (!lease) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    continue;
  }
  console.log('order', lease.event);
  await transport.ack(lease);
}
