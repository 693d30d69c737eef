/**
 * The runtime's control plane and loop on one store + transport pair: suspend/resume, a poison
 * event, and `run()` waking and stopping. Called once per pair from test/runtime.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime/runtime.js';
import type { MakeRuntimeBackends } from './runtime-backends.js';
import type { RuntimeSuiteCaps } from './runtime-backends.js';
import { flush } from './runtime-scheduler.js';
import { drain, kinds, makeHarness, VISIBILITY_MS, type Harness, type OrderLike } from './runtime-workflows.js';

const load = async (h: Harness, id: string): Promise<OrderLike> => (await h.store.load(id)) as OrderLike;

/** Lets a running `run()` get through the work that is ready (no clock moves, no real sleeps). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await flush();
}

export function describeRuntimeControl(name: string, make: MakeRuntimeBackends, caps: RuntimeSuiteCaps = { settlesInProcess: true }): void {
  describe(`Runtime control on ${name}`, () => {
    let h: Harness;
    let worker: Runtime;
    beforeEach(async () => {
      h = await makeHarness(make, { maxAttempts: 3 });
      worker = h.worker('w1');
      await worker.createExecution('order-1', { status: 'new', applied: [] });
    });
    afterEach(() => h.dispose());

    it('holds a suspended execution\'s events until it is resumed, from any worker', async () => {
      const other = h.worker('w2');
      await worker.suspend('order-1');
      await worker.send('order-1', { id: 'e1', type: 'place', items: [] });
      await worker.send('order-1', { id: 'e2', type: 'pay' });
      expect(await worker.step()).toMatchObject({ kind: 'suspended', eventId: 'e1' });
      h.clock.advance(VISIBILITY_MS * 10); // far beyond a lease: the hold is longer
      expect(kinds(await drain([worker, other]))).toEqual([]);
      const [group] = (await h.transport.inspect()).groups;
      expect(group!.messages.map((m) => [m.state, m.holder])).toEqual([['leased', 'w1'], ['ready', null]]);
      await other.resume('order-1');
      expect(kinds(await drain([worker, other]))).toEqual(['handled', 'handled', 'relayed']);
      expect(await load(h, 'order-1')).toMatchObject({ status: 'shipped', applied: ['e1', 'e2'] });
    });

    it('fences off a handler already running when the execution is suspended', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const handlerRunning = new Promise<void>((resolve) => (entered = resolve));
      const slow = h.worker('slow', {
        handler: async (exe, event) => {
          entered();
          await gate;
          (exe as OrderLike).applied.push(event.id);
        },
      });
      await slow.send('order-1', { id: 'e1' });
      const running = slow.step();
      // Suspend once the handler is running (it has loaded the execution), not merely started.
      await handlerRunning;
      await worker.suspend('order-1');
      release();
      expect((await running).kind).toBe('conflict');
      expect((await slow.step()).kind).toBe('suspended');
      await worker.resume('order-1');
      expect(kinds(await drain([slow]))).toEqual(['handled']);
      expect((await load(h, 'order-1')).applied).toEqual(['e1']);
    });

    it('checks a suspension again when a hold runs out, and still loses nothing', async () => {
      const short = h.worker('short', { suspendHoldMs: 1_000 });
      await short.suspend('order-1');
      await short.suspend('order-1'); // idempotent
      await short.send('order-1', { id: 'e1' });
      expect((await short.step()).kind).toBe('suspended');
      h.clock.advance(1_001);
      expect(await short.step()).toMatchObject({ kind: 'suspended', attempt: 2 });
      await short.resume('order-1');
      await short.resume('order-1'); // idempotent
      expect(kinds(await drain([short]))).toEqual(['handled']);
    });

    it('dead-letters a poison event after maxAttempts without blocking other executions', async () => {
      const picky = h.worker('picky', {
        handler: (exe, event) => {
          if (exe.id === 'bad') throw new Error('cannot digest');
          (exe as OrderLike).applied.push(event.id);
        },
      });
      await picky.createExecution('bad', { applied: [] });
      await picky.send('bad', { id: 'poison' });
      await picky.send('order-1', { id: 'g1' });
      await picky.send('order-1', { id: 'g2' });
      const results = await drain([picky]);
      expect(kinds(results)).toEqual(['failed', 'handled', 'handled']);
      for (const ms of [100, 200, 400]) {
        expect(kinds(await drain([picky]))).toEqual([]); // parked: its back-off has not passed
        h.clock.advance(ms + 1); // a park lasts through its last millisecond
        results.push(...(await drain([picky])));
      }
      expect(results.filter((r) => r.kind === 'failed').map((r) => 'retryInMs' in r && r.retryInMs)).toEqual([100, 200, 400]);
      expect((await h.transport.deadLetters()).map((d) => [d.groupId, (d.event as { id: string }).id, d.attempt])).toEqual([['bad', 'poison', 3]]);
      expect((await h.store.readTrace('bad')).map((s) => s.error)).toEqual(Array(3).fill('Error: cannot digest'));
      expect((await load(h, 'order-1')).applied).toEqual(['g1', 'g2']);
    });

    it.skipIf(!caps.settlesInProcess)('run() works through what is ready, waits, and stops on abort', async () => {
      await worker.send('order-1', { id: 'e1', type: 'place', items: ['apple'] });
      const controller = new AbortController();
      const running = worker.run({ signal: controller.signal });
      await settle();
      expect((await load(h, 'order-1')).status).toBe('awaiting-payment');
      expect(h.scheduler.pending).toBe(1); // one idle wait, no spinning
      controller.abort();
      await running;
      expect(h.scheduler.pending).toBe(0);
    });

    it.skipIf(!caps.settlesInProcess)('run() wakes on a change notice without waiting out its idle delay', async () => {
      const patient = h.worker('patient', { idleMinMs: 1e9, idleMaxMs: 1e9 });
      const controller = new AbortController();
      const running = patient.run({ signal: controller.signal });
      await settle();
      await worker.send('order-1', { id: 'e1', type: 'place', items: [] });
      await settle();
      expect((await load(h, 'order-1')).applied).toEqual(['e1']);
      controller.abort();
      await running;
    });

    it.skipIf(!caps.settlesInProcess)('run() polls with back-off for work that appears without a notice (an expired lease)', async () => {
      await worker.send('order-1', { id: 'e1', type: 'place', items: [] });
      await h.transport.claim('crashed', VISIBILITY_MS);
      const controller = new AbortController();
      const running = worker.run({ signal: controller.signal });
      await settle();
      await h.scheduler.advance(VISIBILITY_MS + 1_000);
      await settle();
      expect((await load(h, 'order-1')).applied).toEqual(['e1']);
      controller.abort();
      await running;
    });
  });
}
