// Run in the scratch app by the pack test: leasehold/postgres on PGlite (PostgreSQL in WASM, in
// process), through the installed package's public entries only. Prints one JSON line.
import { PGlite } from '@electric-sql/pglite';
import { consume } from 'leasehold';
import { fromPglite, PostgresTransport } from 'leasehold/postgres';

const pglite = await PGlite.create();
const transport = new PostgresTransport(fromPglite(pglite), { schema: 'jobs', queue: 'orders' });
const seq = await transport.publish('order-1', { n: 1 });
const lease = await transport.claim('w1', 30_000);
await transport.ack(lease);
const emptyAfterAck = (await transport.claim('w1', 30_000)) === null;

await transport.publish('order-2', { n: 2 });
const consumed = [];
await new Promise((resolve, reject) => {
  const consumer = consume(transport, async (event) => {
    consumed.push(event);
    // Stopping from inside the handler: stop() lets this handler finish and acks it.
    void consumer.stop().then(resolve, reject);
  }, { onError: reject });
});
const { queued, leased } = await transport.stats();
await transport.close();
await pglite.close();
console.log(JSON.stringify({ seq, event: lease.event, emptyAfterAck, consumed, stats: { queued, leased } }));
