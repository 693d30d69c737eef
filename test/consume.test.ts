import { describe, expect, expectTypeOf, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { consume } from '../src/consume/consume.js';
import { retryDelay } from '../src/worker/options.js';
import type { ConsumeOptions, HandlerContext } from '../src/consume/types.js';
import { LeaseLostError, StorageError } from '../src/errors.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { describeConsume, until } from './conformance/consume.js';
import { transportBackends } from './support/backends.js';
import { ManualScheduler } from './support/runtime-scheduler.js';
import { MAX_REASON, reasonFrom } from '../src/validate.js';

// The suite settles work in a few event-loop turns under a manual scheduler: backends in another
// process (workerd) answer on the network's time, so they are left out (see settlesInProcess).
for (const backend of transportBackends.filter((b) => b.settlesInProcess !== false)) describeConsume(backend.name, backend.make);

describe('consume() options', () => {
  const clock = new ManualClock();
  const transport = new InMemoryTransport({ clock: clock.now });
  const valid = (): ConsumeOptions => ({ clock: clock.now, scheduler: new ManualScheduler(clock) });

  it.each([
    ['options', null, TypeError],
    ['options.workerId', { workerId: '' }, RangeError],
    ['options.workerId', { workerId: 3 }, TypeError],
    ['options.visibilityMs', { visibilityMs: 0 }, RangeError],
    ['options.visibilityMs', { visibilityMs: '5' }, TypeError],
    ['options.concurrency', { concurrency: 0 }, RangeError],
    ['options.concurrency', { concurrency: 1001 }, RangeError],
    ['options.concurrency', { concurrency: 2.5 }, RangeError],
    ['options.minPriority', { minPriority: 5 }, RangeError],
    ['options.signal', { signal: {} }, TypeError],
    ['options.graceMs', { graceMs: -1 }, RangeError],
    ['options.graceMs', { graceMs: Number.NaN }, RangeError],
    ['options.backoff', { backoff: 7 }, TypeError],
    ['options.backoff.baseMs', { backoff: { baseMs: -1 } }, RangeError],
    ['options.backoff.maxMs', { backoff: { baseMs: 500, maxMs: 100 } }, RangeError],
    ['options.backoff.factor', { backoff: { factor: 0.5 } }, RangeError],
    ['options.backoff.factor', { backoff: { factor: Infinity } }, RangeError],
    ['options.backoff.jitter', { backoff: { jitter: 1.5 } }, RangeError],
    ['options.backoff.jitter', { backoff: { jitter: '0' } }, TypeError],
    ['options.onError', { onError: 'log' }, TypeError],
    ['options.idleMinMs', { idleMinMs: 0 }, RangeError],
    ['options.idleMaxMs', { idleMinMs: 100, idleMaxMs: 10 }, RangeError],
    ['options.clock', { clock: 5 }, TypeError],
    ['options.scheduler.clearTimeout', { scheduler: { setTimeout() {} } }, TypeError],
    ['options.random', { random: 0.5 }, TypeError],
    ['options.reclaimOwnLeases', { reclaimOwnLeases: 'yes' }, TypeError],
    ['options.reclaimOwnLeases needs options.workerId', { reclaimOwnLeases: true }, RangeError],
    ['options has no option "visibilty"; did you mean "visibilityMs"?', { visibilty: 1000 }, TypeError],
    ['options.backoff has no option "base"; did you mean "baseMs"?', { backoff: { base: 10 } }, TypeError],
    ['options.rate has no option "perSecond"', { rate: { max: 1, perSecond: 1 } }, TypeError],
  ])('rejects a bad %s before it claims anything', (name, patch, kind) => {
    const options = patch === null ? null : { ...valid(), ...patch };
    const claims: unknown[] = [];
    const spied = new Proxy(transport, { get: (target, p) => (p === 'claim' ? (...a: unknown[]) => void claims.push(a) : (Reflect.get(target, p) as () => unknown).bind(target)) });
    expect(() => consume(spied, () => {}, options as never)).toThrow(kind);
    expect(() => consume(spied, () => {}, options as never)).toThrow(name);
    expect(claims).toEqual([]);
  });

  it('rejects a transport or handler that is not one', () => {
    expect(() => consume({ claim() {} } as never, () => {})).toThrow(/transport must implement claimMany\(\)/);
    expect(() => consume(null as never, () => {})).toThrow(TypeError);
    expect(() => consume(transport, 'handler' as never)).toThrow(/handler must be a function/);
  });

  it('rejects a bad graceMs in stop()', async () => {
    const consumer = consume(transport, () => {}, valid());
    expect(() => consumer.stop({ graceMs: -5 })).toThrow(RangeError);
    expect(() => consumer.stop(3 as never)).toThrow(TypeError);
    await consumer.stop({ graceMs: 0 });
  });

  it('gives the handler a real AbortSignal, typed as the host declares it', async () => {
    let context: HandlerContext | undefined;
    await transport.publish('g', 1);
    const consumer = consume(transport, (_e, _l, c) => void (context = c), valid());
    await until(() => context !== undefined);
    expect(context!.signal).toBeInstanceOf(AbortSignal);
    expectTypeOf(context!.signal).toEqualTypeOf<AbortSignal>();
    await consumer.stop();
  });
});

describe('the handler signal', () => {
  it('is made on first read, and a signal first read after the lease was lost is already aborted', async () => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const t = new InMemoryTransport({ clock: clock.now });
    await t.publish('g', 1);
    let context: HandlerContext | undefined;
    const consumer = consume(t, (_e, _l, c) => ((context = c), new Promise(() => {})), { clock: clock.now, scheduler, visibilityMs: 1000, onError: () => {} });
    await until(() => context !== undefined);
    clock.advance(1001);
    await t.claim('other', 1000);
    await scheduler.advance(0); // the renewal finds the lease gone
    await until(() => consumer.lost === 0 && consumer.active === 1);
    expect(context!.signal.aborted).toBe(true);
    expect(context!.signal.reason).toBeInstanceOf(LeaseLostError);
    await consumer.stop({ graceMs: 0 });
  });
});

describe('the retry back-off', () => {
  const backoff = { baseMs: 1000, maxMs: 60_000, factor: 2, jitter: 0 };

  it('waits min(maxMs, baseMs × factor^(attempt − 1)) after delivery attempt', () => {
    expect([1, 2, 3, 4, 6, 7, 8, 100, 5000].map((a) => retryDelay(backoff, a, Math.random))).toEqual([1000, 2000, 4000, 8000, 32_000, 60_000, 60_000, 60_000, 60_000]);
    expect(retryDelay({ ...backoff, factor: 1 }, 9, Math.random)).toBe(1000);
    expect(retryDelay({ ...backoff, baseMs: 0 }, 5000, Math.random)).toBe(0);
  });

  it('draws the jitter share at random: full delay at 1, (1 − jitter) × delay at 0', () => {
    const jittery = { ...backoff, jitter: 0.4 };
    expect(retryDelay(jittery, 2, () => 0)).toBe(1200);
    expect(retryDelay(jittery, 2, () => 0.5)).toBe(1600);
    expect(retryDelay(jittery, 2, () => 0.999999)).toBe(2000);
    expect(retryDelay({ ...backoff, jitter: 1 }, 3, () => 0)).toBe(0);
    expect(retryDelay(jittery, 2, () => Number.NaN)).toBe(1200); // a broken source cannot break the delay
  });

  it('parks a failed message for the jittered delay', async () => {
    const clock = new ManualClock(1000);
    const t = new InMemoryTransport({ clock: clock.now });
    await t.publish('g', 1);
    const consumer = consume(t, () => Promise.reject(new Error('no')), {
      clock: clock.now,
      scheduler: new ManualScheduler(clock),
      backoff: { baseMs: 400, jitter: 0.5 },
      random: () => 0.5,
      onError: () => {},
    });
    await until(() => consumer.failed === 1);
    expect((await t.inspect()).groups[0]!.messages[0]).toMatchObject({ state: 'parked', expiresAt: 1000 + 300 });
    await consumer.stop();
  });
});

describe('the reason a failure leaves', () => {
  it('is the thrown message as a transport takes it: whole characters, at most MAX_REASON', () => {
    expect(reasonFrom(new Error('HTTP 503'))).toBe('HTTP 503');
    expect(reasonFrom('offline')).toBe('offline');
    expect(reasonFrom(new Error(''))).toBeUndefined();
    expect(reasonFrom(Object.create(null))).toBeUndefined(); // no text at all
    expect(reasonFrom(new Error('bad \uD800 half'))).toBe('bad \uFFFD half');
    const long = reasonFrom(new Error('x'.repeat(5000)))!;
    expect(long).toHaveLength(MAX_REASON);
    expect(long.endsWith('…')).toBe(true);
    expect(reasonFrom(new Error('😀'.repeat(600)))).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // a pair cut in two is replaced
  });

  it('reaches the dead letter from whatever the handler threw', async () => {
    const clock = new ManualClock(1000);
    const t = new InMemoryTransport({ clock: clock.now, maxAttempts: 1 });
    await t.publish('g', 1);
    const consumer = consume(t, () => Promise.reject(new Error('bad \uDC00 text')), { clock: clock.now, scheduler: new ManualScheduler(clock), onError: () => {} });
    await until(() => consumer.failed === 1);
    await consumer.stop();
    clock.advance(3_600_000); // past its park
    expect(await t.claim('w', 1000)).toBeNull();
    expect(await t.deadLetters()).toMatchObject([{ attempt: 1, reason: 'bad \uFFFD text' }]);
  });
});

describe('a settle that fails on a fault that may pass', () => {
  /** `inner` whose settling calls fail with STORAGE_UNAVAILABLE while `down` (a database restarting). */
  function outage<E>(inner: InMemoryTransport<E>) {
    const state = { down: false, refused: 0 };
    const settling = new Set(['ack', 'ackAndClaim', 'ackMany', 'ackAndClaimMany', 'nack', 'release', 'reject']);
    const transport = new Proxy(inner, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        if (!settling.has(key as string)) return (value as (...a: unknown[]) => unknown).bind(target);
        return (...args: unknown[]) => {
          if (!state.down) return (value as (...a: unknown[]) => unknown).apply(target, args);
          state.refused += 1;
          return Promise.reject(new StorageError('STORAGE_UNAVAILABLE', 'the database is restarting'));
        };
      },
    });
    return { transport, state };
  }

  it.each([1, 4])('is tried again until the database is back: acked once, the group goes on at once (concurrency %i)', async (concurrency) => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const inner = new InMemoryTransport<number>({ clock: clock.now });
    const { transport, state } = outage(inner);
    for (let n = 1; n <= 4; n++) await inner.publish(`g${n % 2}`, n);
    const seen: number[] = [];
    const reports: { phase: string; retryInMs?: number }[] = [];
    state.down = true;
    const consumer = consume(transport, (n) => void seen.push(n), { clock: clock.now, scheduler, concurrency, visibilityMs: 30_000, onError: (_e, info) => void reports.push(info) });
    await until(() => state.refused >= 1, 'a refused ack');
    // Tried again with back-off, keeping the lease: nothing delivered twice, nothing else claimed.
    for (let ms = 0; ms < 1_000; ms += 50) await scheduler.advance(50);
    expect(reports.every((r) => r.phase === 'ack' && r.retryInMs! > 0)).toBe(true);
    expect(reports.length).toBeGreaterThan(2);
    expect(consumer.handled).toBe(0);
    state.down = false;
    // Back well within the lease (30 s): every message handled once, none waiting for a lease to run out.
    for (let ms = 0; ms < 5_000 && consumer.handled < 4; ms += 50) await scheduler.advance(50);
    await until(() => consumer.handled === 4, 'every message acked');
    expect(seen.sort()).toEqual([1, 2, 3, 4]);
    expect(clock.now()).toBeLessThan(1000 + 30_000);
    expect(await inner.stats()).toMatchObject({ queued: 0, leased: 0 });
    await consumer.stop();
  });

  it('gives up once the lease may have run out, and the message comes again after it', async () => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const inner = new InMemoryTransport<number>({ clock: clock.now });
    const { transport, state } = outage(inner);
    await inner.publish('g', 1);
    let calls = 0;
    const reports: { retryInMs?: number }[] = [];
    state.down = true;
    const consumer = consume(transport, () => void (calls += 1), { clock: clock.now, scheduler, visibilityMs: 1_000, onError: (_e, info) => void reports.push(info) });
    await until(() => state.refused >= 1, 'a refused ack');
    for (let ms = 0; ms < 1_000; ms += 50) await scheduler.advance(50);
    // Tried for the lease's length, back-off doubling and cut to what is left; then given up.
    expect(reports.map((r) => r.retryInMs)).toEqual([50, 100, 200, 400, 250, undefined]);
    expect(calls).toBe(1);
    // Not acked: once its lease runs out the message is delivered again (at least once).
    for (let ms = 0; ms < 2_000 && calls < 2; ms += 50) await scheduler.advance(50);
    expect(calls).toBe(2);
    state.down = false;
    for (let ms = 0; ms < 2_000 && consumer.handled < 1; ms += 50) await scheduler.advance(50);
    expect(consumer.handled).toBe(1);
    await consumer.stop();
  });

  it('retries a nack too', async () => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const inner = new InMemoryTransport<number>({ clock: clock.now });
    const { transport, state } = outage(inner);
    await inner.publish('g', 1);
    state.down = true;
    const reports: { phase: string; retryInMs?: number }[] = [];
    const consumer = consume(transport, () => Promise.reject(new Error('handler failed')), { clock: clock.now, scheduler, backoff: { baseMs: 60_000 }, onError: (_e, info) => void reports.push(info) });
    await until(() => state.refused >= 1, 'a refused nack');
    await scheduler.advance(100);
    state.down = false;
    for (let ms = 0; ms < 2_000 && consumer.failed === 1 && (await inner.inspect()).groups[0]?.messages[0]?.state !== 'parked'; ms += 50) await scheduler.advance(50);
    expect((await inner.inspect()).groups[0]!.messages[0]).toMatchObject({ state: 'parked', attempt: 1, lastError: 'handler failed' });
    expect(reports.filter((r) => r.phase === 'nack').every((r) => r.retryInMs! > 0)).toBe(true);
    await consumer.stop({ graceMs: 0 });
  });

  it('never tries again an error that will not pass: reported once, the lease left to run out', async () => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const inner = new InMemoryTransport<number>({ clock: clock.now });
    await inner.publish('g', 1);
    let acks = 0;
    const broken = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'ackAndClaim' || key === 'ack') return () => ((acks += 1), Promise.reject(new StorageError('STORAGE_CORRUPT', 'the file is damaged')));
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const reports: { phase: string; retryInMs?: number }[] = [];
    const consumer = consume(broken, () => {}, { clock: clock.now, scheduler, visibilityMs: 10_000, onError: (_e, info) => void reports.push(info) });
    await until(() => acks === 1, 'the ack');
    for (let ms = 0; ms < 1_000; ms += 50) await scheduler.advance(50);
    expect(acks).toBe(1);
    expect(reports).toEqual([expect.objectContaining({ phase: 'ack' })]);
    expect(reports[0]).not.toHaveProperty('retryInMs');
    expect(consumer.active).toBe(0);
    await consumer.stop();
  });
});

describe('a consumer restarted under the same workerId (reclaimOwnLeases)', () => {
  async function crashedRun() {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const transport = new InMemoryTransport<number>({ clock: clock.now });
    for (let n = 1; n <= 3; n++) await transport.publish(`g${n}`, n);
    // The run that was killed -9: it held two leases for 30 s.
    await transport.claimMany('host-1', 30_000, { max: 2 });
    return { clock, scheduler, transport };
  }

  it('takes its groups back at once, each delivery counted as an attempt', async () => {
    const { clock, scheduler, transport } = await crashedRun();
    const seen: [number, number][] = [];
    const consumer = consume(transport, (n, lease) => void seen.push([n, lease.attempt]), { workerId: 'host-1', reclaimOwnLeases: true, clock: clock.now, scheduler });
    await until(() => consumer.handled === 3, 'all three handled');
    expect(seen.sort()).toEqual([[1, 2], [2, 2], [3, 1]]);
    expect(clock.now()).toBe(1000); // no lease had to run out
    await consumer.stop();
  });

  it('without it, waits for the old leases to run out', async () => {
    const { clock, scheduler, transport } = await crashedRun();
    const consumer = consume(transport, () => {}, { workerId: 'host-1', clock: clock.now, scheduler });
    await until(() => consumer.handled === 1, 'the free one handled');
    for (let ms = 0; ms < 1_000; ms += 100) await scheduler.advance(100);
    expect(consumer.handled).toBe(1);
    await consumer.stop();
  });
});
