/**
 * leasehold/receiver in a Durable Object, in the real workerd: receipts kept in the object's
 * SQLite storage through `fromDurableObjectStorage` (transactions through `transactionSync`, a
 * refusal undone by a nested one), the app's write in the receipt's transaction, repeats and
 * stale content answered from the receipt, gaps, pruning, and bad input that writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerd, type Workerd } from './support/workerd.js';

let workerd: Workerd;
let objects = 0;

beforeAll(async () => {
  workerd = await startWorkerd(undefined, { entry: 'test/workerd/receiver-object.ts', className: 'ReceiverObject', bindings: {} });
});
afterAll(async () => {
  await workerd?.stop();
  workerd?.remove();
});

const origin = randomUUID().replaceAll('-', '');

function object() {
  const base = `${workerd.url}/object-${++objects}`;
  const send = async (counter: number, { revision = 0, lowWater = 1, event = { note: `n${counter}`, text: `t${counter}.${revision}` } as Record<string, unknown>, key }: { revision?: number; lowWater?: number; event?: Record<string, unknown>; key?: string } = {}) => {
    const response = await fetch(`${base}/outbox`, {
      method: 'POST',
      headers: { 'idempotency-key': key ?? `"${origin}/default/${counter}/${revision}"`, 'leasehold-low-water': String(lowWater) },
      body: JSON.stringify(event),
    });
    return { status: response.status, repeat: response.headers.get('leasehold-repeat'), body: (await response.json()) as unknown };
  };
  const rows = async () => (await (await fetch(`${base}/rows`)).json()) as { receipts: Record<string, unknown>[]; notes: Record<string, unknown>[]; versions: unknown[] };
  return { base, send, rows };
}

describe('leasehold/receiver in a Durable Object (workerd)', () => {
  it('applies once, answers repeats and stale content from the receipt, and undoes a refusal', async () => {
    const o = object();
    expect(await o.send(1)).toEqual({ status: 201, repeat: null, body: { saved: 'n1', text: 't1.0' } });
    expect(await o.send(1)).toEqual({ status: 201, repeat: '1', body: { saved: 'n1', text: 't1.0' } });
    expect(await o.send(1, { revision: 2 })).toMatchObject({ status: 201, repeat: null, body: { text: 't1.2' } });
    expect(await o.send(1, { revision: 1 })).toEqual({ status: 201, repeat: 'stale', body: { saved: 'n1', text: 't1.2' } });
    expect(await o.send(2, { event: { note: 'n2', text: 'bad', refuse: 'too long' } })).toEqual({ status: 422, repeat: null, body: { error: 'too long' } });
    const held = await o.rows();
    expect(held.notes).toEqual([{ id: 'n1', text: 't1.2' }]); // the refused apply's write was undone
    expect(held.receipts.map((r) => [r.counter, r.revision, r.refused])).toEqual([[1, 2, 0], [2, 0, 1]]);
    expect(held.versions).toEqual([{ component: 'receiver', version: 1 }]);
    expect(await o.send(2, { event: { note: 'n2', text: 'fixed' } })).toMatchObject({ status: 201, repeat: null });
    expect((await o.rows()).notes).toEqual([{ id: 'n1', text: 't1.2' }, { id: 'n2', text: 'fixed' }]);
  });

  it('reports gaps, prunes below the mark, and writes nothing for bad input', async () => {
    const o = object();
    await o.send(1);
    await o.send(4, { lowWater: 3 });
    const report = (await (await fetch(`${o.base}/outbox?origin=${origin}`)).json()) as unknown;
    expect(report).toEqual({ origin, lost: false, queues: [{ queue: 'default', received: 2, highest: 4, lowWater: 3, removed: [[2, 2]], stillToCome: [[3, 3]], lost: [] }] });
    expect(await (await fetch(`${o.base}/prune`)).json()).toBe(1);
    expect(await o.send(1)).toEqual({ status: 200, repeat: '1', body: { duplicate: true } });
    const before = await o.rows();
    expect((await o.send(5, { key: `"${origin}/default/05/0"` })).status).toBe(400);
    expect((await o.send(5, { lowWater: 6 })).status).toBe(400);
    expect((await fetch(`${o.base}/outbox`, { method: 'POST', headers: { 'leasehold-lost': randomUUID().replaceAll('-', '') } })).status).toBe(404);
    expect(await o.rows()).toEqual(before);
    const lost = (await (await fetch(`${o.base}/outbox`, { method: 'POST', headers: { 'leasehold-lost': origin } })).json()) as { lost: boolean; queues: { lost: unknown }[] };
    expect(lost).toMatchObject({ lost: true, queues: [{ lost: [[3, 3]] }] });
  });
});
