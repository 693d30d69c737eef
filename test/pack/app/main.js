// The scratch page: ?step=publish publishes a message into an OPFS database and closes it;
// ?step=claim (a later page load) claims it back, acks it and reports what it got.
import { openBrowserDatabase } from 'leasehold/browser';

async function run(step) {
  const db = await openBrowserDatabase({ name: 'pack-test' });
  try {
    if (step === 'publish') {
      const seq = await db.transport.publish('order-1', { hello: 'opfs', at: 1 });
      return { step, seq };
    }
    const lease = await db.transport.claim('page', 30_000);
    if (lease) await db.transport.ack(lease);
    const after = await db.transport.claim('page', 30_000);
    return { step, event: lease?.event ?? null, seq: lease?.seq ?? null, emptyAfterAck: after === null };
  } finally {
    await db.close();
  }
}

const step = new URL(location.href).searchParams.get('step');
run(step).then(
  (result) => (globalThis.packResult = { ok: true, ...result }),
  (error) => (globalThis.packResult = { ok: false, name: error.name, code: error.code, message: error.message }),
);
