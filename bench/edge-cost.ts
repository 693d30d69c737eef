/**
 * `npx tsx bench/edge-cost.ts`: what one message costs in a LeaseholdObject, in the two units
 * Cloudflare bills Durable Objects by: requests (one per call) and SQLite rows written (read
 * from the object's cursors: index entries and trigger writes count). Runs a local workerd and
 * prints a Markdown table; the counts do not depend on the machine.
 */
import { startWorkerd } from '../test/support/workerd.js';
import { encodeValue } from '../src/remote/codec.js';

const workerd = await startWorkerd();
let object = 0;
try {
  const name = `cost-${++object}`;
  const call = async (method: string, args: unknown[], target = 'transport') => {
    const response = await fetch(`${workerd.url}/q/${name}/call`, { method: 'POST', body: JSON.stringify({ target, method, args: encodeValue(args) }) });
    const answer = (await response.json()) as { ok: boolean; value: unknown; rowsWritten: number; error?: unknown };
    if (!answer.ok) throw new Error(JSON.stringify(answer.error));
    return answer;
  };
  // Warm up: the schema and the default queue's counters row are written by the first call.
  await call('stats', []);
  const rows: [string, number, string][] = [];
  const event = { order: 'o-1', total: 42 };
  // A backlog in other groups, so the measured messages are not alone.
  await call('publishMany', [Array.from({ length: 100 }, (_, i) => ({ groupId: `bg${i}`, event }))]);
  rows.push(['publish (new group)', (await call('publish', ['g1', event])).rowsWritten, '1 request']);
  rows.push(['publish (group exists)', (await call('publish', ['g1', event])).rowsWritten, '1 request']);
  rows.push(['publish with a key', (await call('publish', ['g2', event, { key: 'k-1' }])).rowsWritten, '1 request']);
  const claimed = await call('claim', ['w', 30_000]);
  rows.push(['claim', claimed.rowsWritten, '1 request']);
  rows.push(['ack (more in the group)', (await call('ack', [claimed.value])).rowsWritten, '1 request']);
  const next = await call('claim', ['w', 30_000]);
  rows.push(['ackAndClaim', (await call('ackAndClaim', [next.value, 'w', 30_000])).rowsWritten, '1 request']);
  const batch = await call('publishMany', [Array.from({ length: 32 }, (_, i) => ({ groupId: `m${i}`, event }))]);
  rows.push(['publishMany of 32, per message', batch.rowsWritten / 32, '1/32 request']);
  const many = await call('claimMany', ['w', 30_000, { max: 32 }]);
  rows.push(['claimMany of 32, per message', many.rowsWritten / 32, '1/32 request']);
  const acked = await call('ackMany', [many.value]);
  rows.push(['ackMany of 32, per message', acked.rowsWritten / 32, '1/32 request']);
  // Two messages in each of 32 groups: the call acks the first of each and claims the second.
  await call('publishMany', [Array.from({ length: 64 }, (_, i) => ({ groupId: `n${i % 32}`, event }))]);
  const firsts = await call('claimMany', ['w', 30_000, { max: 32 }]);
  rows.push(['ackAndClaimMany of 32 (acks 32, claims the next 32), per message', (await call('ackAndClaimMany', [firsts.value, 'w', 30_000, { max: 32 }])).rowsWritten / 32, '1/32 request']);
  const exe = { id: 'order-1', version: 0, status: 'paid' };
  rows.push(['store commit (execution + 1 outbox entry + dedupe mark)', (await call('commit', [exe, { emits: [{ targetId: 'x', event }], processedEventId: 'e1' }], 'store')).rowsWritten, '1 request']);
  console.log('| call | rows written | requests |\n| --- | ---: | --- |');
  for (const [label, written, requests] of rows) console.log(`| ${label} | ${Number.isInteger(written) ? written : written.toFixed(1)} | ${requests} |`);
} finally {
  await workerd.stop();
  workerd.remove();
}
