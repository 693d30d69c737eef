/**
 * The runtime's behaviour on one store + transport pair: the order workflow, redelivery,
 * timers, crashes and conflicts. Called once per pair from test/runtime.test.ts; a new pair
 * (the browser host) runs it by passing its own factory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RuntimeSuiteCaps } from './runtime-backends.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { StoreConflictError } from '../../src/errors.js';
import { timeoutEventId } from '../../src/runtime/control.js';
import { END_OF_TIME } from '../conformance/store-harness.js';
import type { MakeRuntimeBackends } from './runtime-backends.js';
import { drain, kinds, makeHarness, PAYMENT_WINDOW_MS, VISIBILITY_MS, type Harness, type OrderLike } from './runtime-workflows.js';

/** Asserts the queue, outbox, spawn list and timers are all empty. */
export async function expectQuiet(h: Harness): Promise<void> {
  expect((await h.transport.inspect()).groups).toEqual([]);
  expect(await h.store.pendingOutbox()).toEqual([]);
  expect(await h.store.pendingSpawns()).toEqual([]);
  expect(await h.store.dueTimers(END_OF_TIME)).toEqual([]);
}

const load = async (h: Harness, id: string): Promise<OrderLike> => (await h.store.load(id)) as OrderLike;

export function describeRuntime(name: string, make: MakeRuntimeBackends, caps: RuntimeSuiteCaps = { settlesInProcess: true }): void {
  describe(`Runtime on ${name}`, () => {
    let h: Harness;
    let worker: Runtime;
    beforeEach(async () => {
      h = await makeHarness(make);
      worker = h.worker('w1');
      await worker.createExecution('order-1', { status: 'new', applied: [] });
    });
    afterEach(() => h.dispose());

    it('runs an order through placed → paid → shipped, with a child per item, by repeated step()', async () => {
      const broadcast: unknown[] = [];
      worker = h.worker('w1', { onUntargeted: (event) => void broadcast.push(event) });
      await worker.send('order-1', { type: 'place', items: ['apple', 'pear'] });
      await worker.send('order-1', { type: 'pay' });
      const results = await drain([worker]);
      expect(kinds(results)).toEqual(['handled', 'handled', 'spawned', 'handled', 'handled', 'relayed', 'handled', 'handled', 'relayed']);
      const order = await load(h, 'order-1');
      expect(order).toMatchObject({ status: 'shipped', reserved: ['apple', 'pear'] });
      expect((await load(h, 'order-1/apple')).status).toBe('reserved');
      expect((await load(h, 'order-1/pear')).parentId).toBe('order-1');
      const trace = await h.store.readTrace('order-1');
      expect(trace.map((step) => step.event)).toEqual(order.applied);
      expect(broadcast).toEqual([{ type: 'shipped', orderId: 'order-1', id: expect.any(String) }]);
      await expectQuiet(h);
    });

    it('cancels an unpaid order when the payment timer fires', async () => {
      await worker.send('order-1', { type: 'place', items: ['apple'] });
      await drain([worker]);
      h.clock.advance(PAYMENT_WINDOW_MS - 1);
      expect(kinds(await drain([worker]))).toEqual([]);
      h.clock.advance(1);
      expect(kinds(await drain([worker]))).toEqual(['timers', 'handled']);
      expect((await load(h, 'order-1')).status).toBe('cancelled');
      await expectQuiet(h);
    });

    it('retries an event for an execution that does not exist yet, then handles it once it does', async () => {
      await expect(worker.send('later', { id: 'early', type: 'place', items: [] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await worker.send('later', { id: 'early', type: 'place', items: [] }, { ifMissing: 'queue' });
      expect(await worker.step()).toMatchObject({ kind: 'missing', executionId: 'later', retryInMs: 100 });
      await worker.createExecution('later', { status: 'new', applied: [] });
      h.clock.advance(101);
      expect(kinds(await drain([worker]))).toEqual(['handled']);
      await expect(worker.createExecution('later')).rejects.toThrow(StoreConflictError);
    });

    it('relays between claims when events keep coming, so timers and the outbox never starve', async () => {
      const eager = h.worker('eager', { relayEvery: 2 });
      await eager.send('order-1', { id: 'e1', type: 'place', items: [] });
      await drain([eager]);
      h.clock.advance(PAYMENT_WINDOW_MS + 1);
      for (const id of ['e2', 'e3', 'e4']) await eager.send('order-1', { id });
      expect(kinds(await drain([eager]))).toEqual(['handled', 'handled', 'timers', 'handled', 'handled']);
      expect(await load(h, 'order-1')).toMatchObject({ status: 'cancelled' });
    });

    it('handles an event delivered twice only once', async () => {
      const event = { id: 'place-1', type: 'place', items: [] };
      await worker.send('order-1', event);
      expect((await worker.send('order-1', event)).seq).toBe(1); // still queued: the key holds
      expect(kinds(await drain([worker]))).toEqual(['handled']);
      await worker.send('order-1', event);
      await h.transport.publish('order-1', event);
      expect(kinds(await drain([worker]))).toEqual(['duplicate', 'duplicate']);
      expect((await load(h, 'order-1')).applied).toEqual(['place-1']);
    });

    it('fires a timer re-armed before a stale sweep once, at the new time', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const timerHandler = async (exe: OrderLike, event: { id: string; type?: unknown; at?: unknown }) => {
        exe.applied.push(event.id);
        if (event.type === 'rearm') await gate;
        return typeof event.at === 'number' ? { timers: [{ path: 'nudge', at: event.at }] } : {};
      };
      const a = h.worker('a', { handler: timerHandler as never });
      const b = h.worker('b', { handler: timerHandler as never });
      const t0 = h.clock.now();
      await a.send('order-1', { id: 'arm', type: 'arm', at: t0 + 100 });
      await drain([a]);
      h.clock.advance(100);
      await a.send('order-1', { id: 'rearm', type: 'rearm', at: t0 + 500 });
      const handling = a.step(); // holds the group while its handler waits at the gate
      expect(await b.step()).toEqual({ kind: 'timers', count: 1 }); // the sweep reads the old time
      release();
      expect((await handling).kind).toBe('handled');
      expect(kinds(await drain([a, b]))).toEqual(['stale']);
      h.clock.advance(400);
      expect(kinds(await drain([a, b]))).toEqual(['timers', 'handled']);
      expect((await load(h, 'order-1')).applied).toEqual(['arm', 'rearm', timeoutEventId('order-1', 'nudge', t0 + 500)]);
      await expectQuiet(h);
    });

    it('lets another worker finish after a crashed one, one lease later', async () => {
      await worker.send('order-1', { type: 'place', items: [] });
      expect(await h.transport.claim('crashed', VISIBILITY_MS)).not.toBeNull(); // and never acks
      expect(kinds(await drain([worker]))).toEqual([]);
      h.clock.advance(VISIBILITY_MS);
      expect(kinds(await drain([worker]))).toEqual([]); // the lease is good through its last millisecond
      h.clock.advance(1);
      expect(kinds(await drain([worker]))).toEqual(['handled']);
      expect((await load(h, 'order-1')).status).toBe('awaiting-payment');
    });

    it('retries after a concurrent writer committed first, and keeps both changes', async () => {
      let writes = 0;
      const racing = h.worker('w2', {
        handler: async (exe, event) => {
          if (writes++ === 0) {
            const other = structuredClone(await h.store.load('order-1'))!;
            other.note = 'written meanwhile';
            await h.store.save(other);
          }
          (exe as OrderLike).applied.push(event.id);
        },
      });
      await racing.send('order-1', { id: 'e1' });
      expect(kinds(await drain([racing]))).toEqual(['conflict', 'handled']);
      expect(await load(h, 'order-1')).toMatchObject({ note: 'written meanwhile', applied: ['e1'], version: 3 });
    });

    it('applies an event once when its lease runs out mid-handler and another worker takes over', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let calls = 0;
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const slow = h.worker('slow', {
        handler: async (exe, event) => {
          (exe as OrderLike).applied.push(event.id);
          if (calls++ === 0) {
            entered();
            await gate;
          }
        },
      });
      await slow.send('order-1', { id: 'e1' });
      const stalled = slow.step();
      // Over a connection the step's claim may still be on its way: let the lease run out only once it is held.
      await inHandler;
      h.clock.advance(VISIBILITY_MS + 1); // the clock alone: no renewal fires, the lease runs out
      expect(kinds(await drain([slow]))).toEqual(['handled']);
      release();
      expect((await stalled).kind).toBe('conflict');
      expect((await load(h, 'order-1')).applied).toEqual(['e1']);
      await expectQuiet(h);
    });

    it.skipIf(!caps.settlesInProcess)('keeps a slow handler\'s lease alive by renewing it', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = h.worker('slow', { handler: () => gate });
      await slow.send('order-1', { id: 'e1' });
      const running = slow.step();
      await h.scheduler.advance(VISIBILITY_MS * 4);
      const lease = (await h.transport.inspect()).groups[0]!.messages[0]!;
      expect(lease).toMatchObject({ state: 'leased', holder: 'slow' });
      expect(kinds(await drain([h.worker('other')]))).toEqual([]);
      release();
      expect(await running).toMatchObject({ kind: 'handled', acked: true });
      expect(h.scheduler.pending).toBe(0);
    });
  });
}
