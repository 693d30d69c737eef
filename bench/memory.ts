/**
 * Heap bytes per queued message in InMemoryTransport: the growth of `heapUsed` (after forced
 * garbage collections) from an empty transport to one holding 1M messages, divided by 1M. Needs
 * `node --expose-gc` (`npm run bench` passes it).
 *
 * What is counted is the transport's own bookkeeping: every message publishes the same event
 * object and the group ids are made once, because an application's events and ids are its own
 * and the in-memory transport keeps them by reference, without copying.
 */
import { InMemoryTransport } from '../src/transport/memory.js';
import type { BenchRow } from './lib.js';

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap growth per message for one fill. A function of its own, so the transport is unreachable
 * once it returns: an async function's locals live on until the function ends, and a transport
 * left over from a previous fill would be collected during the next one, understating it.
 */
async function bytesPerMessage(messages: number, groups: number): Promise<number> {
  const ids = Array.from({ length: groups }, (_, i) => `g${i}`);
  const event = { type: 'order.paid', amount: 4200 };
  const before = heapAfterGc();
  const transport = new InMemoryTransport();
  for (let i = 0; i < messages; i++) await transport.publish(ids[i % groups]!, event);
  const after = heapAfterGc();
  await transport.close();
  return (after - before) / messages;
}

export async function benchMemory(_options: { quick: boolean }): Promise<BenchRow[]> {
  if (!gc) {
    process.stderr.write('(memory skipped: run with node --expose-gc) ');
    return [];
  }
  const messages = 1_000_000;
  const rows: BenchRow[] = [];
  for (const groups of [100, 10_000]) {
    rows.push({
      workload: `InMemoryTransport heap bytes per queued message (${messages.toLocaleString('en-US')} queued)`,
      backend: `${groups.toLocaleString('en-US')} groups`,
      opsPerSec: await bytesPerMessage(messages, groups),
      spread: '',
      note: 'one measurement; events and group ids shared, not counted',
    });
  }
  return rows;
}
