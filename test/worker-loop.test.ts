/**
 * The one worker loop: `Runtime.run` and `consume()` take the same shared options with the same
 * checks and defaults, keep leases alike (one timer, measured on the loop's clock, catching up
 * after a stall), wake alike when idle (notices, the transport's next ready time, a poll), and
 * both ack with the next claim in one call. Driven by a manual clock and scheduler.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { consume } from '../src/consume/consume.js';
import { Runtime } from '../src/runtime/runtime.js';
import type { Handler, RuntimeOptions } from '../src/runtime/types.js';
import type { Execution } from '../src/store/contract.js';
import { InMemoryStore } from '../src/store/memory.js';
import type { Transport } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { deferred, spy, until } from './conformance/consume.js';
import { flush, ManualScheduler } from './support/runtime-scheduler.js';

function setup(visibilityMs = 1000) {
  const clock = new ManualClock(10_000);
  const scheduler = new ManualScheduler(clock);
  const memory = new InMemoryTransport({ clock: clock.now });
  const watched = spy(memory as Transport);
  const store = new InMemoryStore();
  const runtime = (handler: Handler, options: Partial<RuntimeOptions> = {}) =>
    new Runtime({ store, transport: watched.transport, handler, workerId: 'w', visibilityMs, clock: clock.now, scheduler, ...options });
  return { clock, scheduler, memory, watched, store, runtime };
}

/** Adds one to a counter execution. */
const bump = (exe: Execution): void => {
  exe.n = ((exe.n as number | undefined) ?? 0) + 1;
};
/** The handler of a counter execution: every event adds one. */
const count: Handler = (exe) => bump(exe);

describe('the worker loops share their options', () => {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const shared = { clock: clock.now, scheduler };
  const bad: [string, Record<string, unknown>][] = [
    ['options.workerId', { workerId: '' }],
    ['options.visibilityMs', { visibilityMs: 0 }],
    ['options.renewEveryMs', { visibilityMs: 1000, renewEveryMs: 1000 }],
    ['options.backoff.baseMs', { backoff: { baseMs: -1 } }],
    ['options.backoff.maxMs', { backoff: { baseMs: 10, maxMs: 5 } }],
    ['options.backoff.factor', { backoff: { factor: Infinity } }],
    ['options.backoff.jitter', { backoff: { jitter: -0.1 } }],
    ['options.random', { random: 1 }],
    ['options.idleMinMs', { idleMinMs: 0 }],
    ['options.idleMaxMs', { idleMinMs: 100, idleMaxMs: 50 }],
    ['options.clock', { clock: 'now' }],
    ['options.scheduler.clearTimeout', { scheduler: { setTimeout() {} } }],
  ];
  it.each(bad)('both refuse a bad %s with the same error', (_name, patch) => {
    const transport = new InMemoryTransport({ clock: clock.now });
    let fromConsume: unknown;
    let fromRuntime: unknown;
    try {
      consume(transport, () => {}, { ...shared, ...patch });
    } catch (error) {
      fromConsume = error;
    }
    try {
      new Runtime({ store: new InMemoryStore(), transport, handler: () => {}, ...shared, ...patch });
    } catch (error) {
      fromRuntime = error;
    }
    expect(fromConsume).toBeInstanceOf(Error);
    expect(fromRuntime).toEqual(fromConsume);
    expect((fromRuntime as Error).constructor).toBe((fromConsume as Error).constructor);
  });

  it('both name a worker after the loop when no workerId is given', () => {
    const transport = new InMemoryTransport({ clock: clock.now });
    const consumer = consume(transport, () => {}, shared);
    expect(consumer.workerId).toMatch(/^consume-./);
    void consumer.stop();
    expect(new Runtime({ store: new InMemoryStore(), transport, handler: () => {}, ...shared }).workerId).toMatch(/^runtime-./);
  });

  it('both retry a failure after the same back-off, jitter included', async () => {
    const delays: number[][] = [[], []];
    for (const [i, loop] of ['consume', 'runtime'].entries()) {
      const s = setup();
      const backoff = { baseMs: 100, factor: 3, jitter: 0.5 };
      const random = () => 0.5;
      for (let attempt = 1; attempt <= 3; attempt++) {
        if (attempt === 1) await s.memory.publish('g', { id: 'e' });
        if (loop === 'consume') {
          const consumer = consume(s.memory, () => Promise.reject(new Error('no')), { clock: s.clock.now, scheduler: s.scheduler, backoff, random, onError: () => {} });
          await until(() => consumer.failed === 1);
          await consumer.stop();
        } else {
          if (attempt === 1) await s.store.save({ id: 'g', version: 0 });
          const result = await s.runtime(() => Promise.reject(new Error('no')), { backoff, random }).step();
          expect(result.kind).toBe('failed');
        }
        const parked = (await s.memory.inspect()).groups[0]!.messages[0]!;
        delays[i]!.push(parked.expiresAt! - s.clock.now());
        s.clock.advance(parked.expiresAt! - s.clock.now() + 1); // a park holds through its last millisecond
      }
    }
    // 100·3^(a−1), of which half is drawn: 0.75 of the full delay at random 0.5.
    expect(delays[0]).toEqual([75, 225, 675]);
    expect(delays[1]).toEqual(delays[0]);
  });
});

describe('Runtime.run, on the shared loop', () => {
  it('acks each event with the next claim in one call', async () => {
    const s = setup();
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      await s.store.save({ id, version: 0 });
      await s.memory.publish(id, { id: `${id}-1` });
    }
    const runtime = s.runtime(count);
    const controller = new AbortController();
    const running = runtime.run({ signal: controller.signal });
    await until(async () => (await s.memory.stats()).ready === 0 && (await s.memory.stats()).leased === 0);
    controller.abort();
    await running;
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect((await s.store.load(id))!.n).toBe(1);
    // One claim to start, then each ack claimed the next: four acks that claimed, one that found nothing.
    expect(s.watched.count('ackAndClaim')).toBe(5);
    expect(s.watched.count('ack')).toBe(0);
    expect(s.watched.count('claim')).toBe(2); // the first, and the one before the idle wait
  });

  it('gives back at once, its attempt unspent, an event its last ack claimed when the signal aborted', async () => {
    const s = setup();
    const controller = new AbortController();
    for (const id of ['a', 'b']) {
      await s.store.save({ id, version: 0 });
      await s.memory.publish(id, { id: `${id}-1` });
    }
    const runtime = s.runtime((exe) => {
      controller.abort(); // the first event's handler stops the loop; its ack still claims 'b'
      bump(exe);
    });
    await runtime.run({ signal: controller.signal });
    expect(s.watched.count('ackAndClaim')).toBe(1);
    expect(s.watched.count('release')).toBe(1);
    const second = await s.memory.claim('other', 1000);
    expect(second).toMatchObject({ groupId: 'b', attempt: 1 });
  });

  it('wakes when a parked event comes due, not at its next poll', async () => {
    const s = setup();
    await s.store.save({ id: 'g', version: 0 });
    await s.memory.publish('g', { id: 'e' });
    let calls = 0;
    const runtime = s.runtime(
      (exe) => {
        calls += 1;
        if (calls === 1) throw new Error('first try fails');
        bump(exe);
      },
      { backoff: { baseMs: 5_000 }, idleMinMs: 50, idleMaxMs: 60_000 },
    );
    const controller = new AbortController();
    const running = runtime.run({ signal: controller.signal });
    await until(() => calls === 1);
    // Polls alone (50, 100, … doubling) would next look at 6 350 ms; the park ends at 5 000.
    await s.scheduler.advance(5_001);
    await until(async () => (await s.store.load('g'))!.n === 1);
    controller.abort();
    await running;
  });

  it('releases an event whose commit lost to another writer, without spending an attempt', async () => {
    const s = setup();
    await s.store.save({ id: 'g', version: 0 });
    await s.memory.publish('g', { id: 'e' });
    const runtime = s.runtime(async (exe) => {
      const stored = await s.store.load('g');
      await s.store.save({ ...stored!, other: true }); // a concurrent writer commits first
      bump(exe);
    });
    expect((await runtime.step()).kind).toBe('conflict');
    expect(await s.memory.claim('other', 1000)).toMatchObject({ attempt: 1 });
  });

  it('extends a slow handler\'s lease every renewEveryMs, and at once after a stall', async () => {
    const s = setup(1000);
    await s.store.save({ id: 'g', version: 0 });
    await s.memory.publish('g', { id: 'e' });
    const gate = deferred();
    const runtime = s.runtime(async () => gate.promise, { renewEveryMs: 400 });
    const step = runtime.step();
    await until(() => s.scheduler.pending === 1);
    await s.scheduler.advance(2_000); // two visibilities: the lease is kept all along
    expect(s.watched.count('extend')).toBeGreaterThanOrEqual(5);
    expect(await s.memory.claim('other', 1000)).toBeNull();
    const extends_ = s.watched.count('extend');
    s.clock.advance(700); // the process stalls for seven ticks; the lease has ~100 ms left
    await s.scheduler.advance(0);
    expect(s.watched.count('extend')).toBe(extends_ + 1);
    expect(await s.memory.claim('other', 1000)).toBeNull();
    gate.resolve();
    expect((await step).kind).toBe('handled');
    await flush();
    expect(s.scheduler.pending).toBe(0); // no lease, no timer
  });
});

describe('consume(), on the shared loop', () => {
  it('extends a slow handler\'s lease every renewEveryMs', async () => {
    const s = setup(1000);
    await s.memory.publish('g', 1);
    const gate = deferred();
    const consumer = consume(s.watched.transport, () => gate.promise, { clock: s.clock.now, scheduler: s.scheduler, visibilityMs: 1000, renewEveryMs: 200 });
    await until(() => consumer.active === 1);
    await s.scheduler.advance(1_000);
    // A tick every 50 ms; a lease is extended once 150 ms have passed since it was: 6 times.
    expect(s.watched.count('extend')).toBe(6);
    expect(await s.memory.claim('other', 1000)).toBeNull();
    gate.resolve();
    await until(() => consumer.handled === 1);
    await consumer.stop();
  });
});
