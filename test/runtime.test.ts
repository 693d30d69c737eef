import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { ClosedError, StorageError } from '../src/errors.js';
import { Runtime } from '../src/runtime/runtime.js';
import type { RuntimeErrorInfo, RuntimeOptions } from '../src/runtime/types.js';
import { InMemoryStore } from '../src/store/memory.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { runtimeBackendPairs } from './support/runtime-backends.js';
import { describeRuntimeControl } from './support/runtime-suite-control.js';
import { describeRuntime } from './support/runtime-suite.js';
import { ManualScheduler } from './support/runtime-scheduler.js';

for (const pair of runtimeBackendPairs) {
  describeRuntime(pair.name, pair.make, pair.caps);
  describeRuntimeControl(pair.name, pair.make, pair.caps);
}

describe('Runtime options', () => {
  const clock = new ManualClock();
  const valid = (): RuntimeOptions => ({
    store: new InMemoryStore(),
    transport: new InMemoryTransport({ clock: clock.now }),
    handler: () => {},
    workerId: 'w',
    visibilityMs: 1000,
    clock: clock.now,
    scheduler: new ManualScheduler(clock),
  });

  it('accepts valid options and fills in the defaults', () => {
    expect(new Runtime(valid()).workerId).toBe('w');
  });

  it('holds a claim for 30 s when visibilityMs is not given, as consume() does', async () => {
    const transport = new InMemoryTransport({ clock: clock.now });
    const { visibilityMs: _left, ...options } = valid();
    const runtime = new Runtime({ ...options, transport, handler: async () => {
      const [lease] = (await transport.inspect()).groups.flatMap((g) => g.messages);
      expect(lease?.expiresAt).toBe(clock.now() + 30_000);
    } });
    await runtime.createExecution('e');
    await runtime.send('e', { type: 'go' });
    expect((await runtime.step()).kind).toBe('handled');
  });

  it.each([
    ['options', null, TypeError],
    ['options.store', { store: {} }, TypeError],
    ['options.transport', { transport: { publish() {} } }, TypeError],
    ['options.handler', { handler: 'nope' }, TypeError],
    ['options.workerId', { workerId: '' }, RangeError],
    ['options.workerId', { workerId: 7 }, TypeError],
    ['options.visibilityMs', { visibilityMs: 0 }, RangeError],
    ['options.visibilityMs', { visibilityMs: Number.NaN }, RangeError],
    ['options.clock', { clock: 5 }, TypeError],
    ['options.scheduler', { scheduler: { setTimeout() {} } }, TypeError],
    ['options.renewEveryMs', { renewEveryMs: 1000 }, RangeError],
    ['options.backoff.baseMs', { backoff: { baseMs: -1 } }, RangeError],
    ['options.backoff.maxMs', { backoff: { baseMs: 500, maxMs: 100 } }, RangeError],
    ['options.backoff.factor', { backoff: { factor: 0.5 } }, RangeError],
    ['options.backoff.jitter', { backoff: { jitter: 2 } }, RangeError],
    ['options.backoff has no option "base"', { backoff: { base: 5 } }, TypeError],
    ['options.random', { random: 0.5 }, TypeError],
    // Renamed when the Runtime took consume()'s back-off: the error says where the value goes.
    ['options.retryBaseMs is now options.backoff.baseMs', { retryBaseMs: 100 }, TypeError],
    ['options.retryMaxMs is now options.backoff.maxMs', { retryMaxMs: 100 }, TypeError],
    ['options.suspendHoldMs', { suspendHoldMs: Infinity }, RangeError],
    ['options.idleMaxMs', { idleMinMs: 100, idleMaxMs: 10 }, RangeError],
    ['options.relayBatch', { relayBatch: 1.5 }, RangeError],
    ['options.relayEvery', { relayEvery: '3' }, TypeError],
    ['options.newId', { newId: 'x' }, TypeError],
  ])('rejects a bad %s', (name, patch, kind) => {
    const options = patch === null ? null : { ...valid(), ...patch };
    expect(() => new Runtime(options as never)).toThrow(kind);
    expect(() => new Runtime(options as never)).toThrow(name);
  });

  it('rejects bad arguments to send, createExecution, suspend and resume before touching anything', async () => {
    const options = valid();
    const runtime = new Runtime(options);
    await expect(runtime.send('', {})).rejects.toThrow(RangeError);
    await expect(runtime.send('x', null as never)).rejects.toThrow(TypeError);
    await expect(runtime.send('x', { id: 3 as never })).rejects.toThrow('event.id');
    await expect(runtime.send('x', { id: 'e\uD800' })).rejects.toThrow(/event\.id must be well-formed Unicode/);
    await expect(runtime.send('x', {}, { priority: 9 })).rejects.toThrow('options.priority');
    await expect(runtime.createExecution('x', [] as never)).rejects.toThrow('fields');
    await expect(runtime.suspend(1 as never)).rejects.toThrow('executionId');
    await expect(runtime.resume('nobody')).rejects.toThrow('does not exist');
    expect((await options.transport.inspect()).groups).toEqual([]);
  });

  it('fails an event published around send() whose id has a lone surrogate, and keeps it queued for its retries', async () => {
    const options = valid();
    const runtime = new Runtime(options);
    await runtime.createExecution('x');
    await options.transport.publish('x', { id: 'e\uDC00' });
    const result = await runtime.step();
    expect(result).toMatchObject({ kind: 'failed', executionId: 'x', eventId: 'seq:1' });
    expect(String((result as { error: unknown }).error)).toMatch(/well-formed Unicode/);
    expect((await options.transport.inspect()).groups.map((g) => [g.groupId, g.messages.length])).toEqual([['x', 1]]);
  });

  it('gives an event without an id a fresh one, and never changes the caller\'s object', async () => {
    const runtime = new Runtime(valid());
    const event = { type: 'hello' };
    await expect(runtime.send('x', event, { ifMissing: 'later' as never })).rejects.toThrow(RangeError);
    const { id } = await runtime.send('x', event, { ifMissing: 'queue' });
    expect(typeof id).toBe('string');
    expect(event).toEqual({ type: 'hello' });
  });
});

describe('Runtime run() with onError', () => {
  function setup(flaky: { failClaims: number; error?: Error }, handler: RuntimeOptions['handler'] = () => {}, reporting = true) {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const inner = new InMemoryTransport({ clock: clock.now });
    // claim() fails as a restarting database's does, `failClaims` times.
    const transport = new Proxy(inner, {
      get(target, key, receiver) {
        if (key === 'claim') {
          return (...args: Parameters<InMemoryTransport['claim']>) =>
            flaky.failClaims-- > 0 ? Promise.reject(flaky.error ?? new StorageError('STORAGE_UNAVAILABLE', 'the database is restarting')) : target.claim(...args);
        }
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const reports: { error: unknown; phase: string; kind?: string }[] = [];
    const runtime = new Runtime({
      store: new InMemoryStore(),
      transport,
      handler,
      workerId: 'w',
      clock: clock.now,
      scheduler,
      idleMinMs: 50,
      backoff: { baseMs: 1_000, jitter: 0 },
      ...(reporting ? { onError: (error: unknown, info: RuntimeErrorInfo) => void reports.push({ error, phase: info.phase, kind: info.result?.kind }) } : {}),
    });
    return { clock, scheduler, inner, runtime, reports };
  }

  it('reports a step that throws and carries on once the backend is back', async () => {
    const flaky = { failClaims: 3 };
    const handled: string[] = [];
    const { scheduler, runtime, reports } = setup(flaky, (_x, event) => void handled.push(String(event.type)));
    await runtime.createExecution('e');
    await runtime.send('e', { type: 'go' });
    const controller = new AbortController();
    const running = runtime.run({ signal: controller.signal });
    for (let i = 0; i < 40 && handled.length === 0; i++) await scheduler.advance(50);
    expect(handled).toEqual(['go']);
    expect(reports.map((r) => [r.phase, (r.error as StorageError).code])).toEqual([
      ['step', 'STORAGE_UNAVAILABLE'],
      ['step', 'STORAGE_UNAVAILABLE'],
      ['step', 'STORAGE_UNAVAILABLE'],
    ]);
    controller.abort();
    await running;
  });

  it('reports each failed delivery and each event for an execution that does not exist', async () => {
    const { scheduler, inner, runtime, reports } = setup({ failClaims: 0 }, () => {
      throw new TypeError('cannot store a BigInt');
    });
    await runtime.createExecution('e');
    await runtime.send('e', { type: 'go' });
    await inner.publish('ghost', { id: 'evt-1', type: 'ping' });
    const controller = new AbortController();
    const running = runtime.run({ signal: controller.signal });
    for (let i = 0; i < 20 && reports.length < 2; i++) await scheduler.advance(50);
    expect(reports.map((r) => [r.phase, r.kind])).toEqual(expect.arrayContaining([['handler', 'failed'], ['handler', 'missing']]));
    expect(String(reports.find((r) => r.kind === 'failed')!.error)).toContain('BigInt');
    expect(reports.find((r) => r.kind === 'missing')!.error).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('"ghost" does not exist') });
    // Once per attempt: the next report of the failed event comes with its next delivery.
    for (let i = 0; i < 30; i++) await scheduler.advance(50);
    expect(reports.filter((r) => r.kind === 'failed').length).toBeGreaterThanOrEqual(2);
    controller.abort();
    await running;
  });

  it('rejects with the first throw without onError, and with a ClosedError either way', async () => {
    const bare = setup({ failClaims: 1 }, () => {}, false).runtime;
    await expect(bare.run({ signal: new AbortController().signal })).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    const closing = setup({ failClaims: 1, error: new ClosedError('transport') }).runtime;
    await expect(closing.run({ signal: new AbortController().signal })).rejects.toBeInstanceOf(ClosedError);
    expect(() => new Runtime({ store: new InMemoryStore(), transport: new InMemoryTransport(), handler: () => {}, onError: 'log' as never })).toThrow(TypeError);
  });
});

describe('Runtime run() with reclaimOwnLeases', () => {
  it("ends the leases a crashed run under its workerId left, and handles their events at once", async () => {
    const clock = new ManualClock(1000);
    const scheduler = new ManualScheduler(clock);
    const transport = new InMemoryTransport({ clock: clock.now });
    const handled: number[] = [];
    const options = { store: new InMemoryStore(), transport, workerId: 'host-1', clock: clock.now, scheduler, handler: (_x: unknown, _e: unknown, info: { attempt: number }) => void handled.push(info.attempt) };
    const runtime = new Runtime({ ...options, reclaimOwnLeases: true } as RuntimeOptions);
    await runtime.createExecution('e');
    await runtime.send('e', { type: 'go' });
    await transport.claim('host-1', 30_000); // the run that was killed held it for 30 s
    const controller = new AbortController();
    const running = runtime.run({ signal: controller.signal });
    for (let i = 0; i < 20 && handled.length === 0; i++) await scheduler.advance(10);
    expect(handled).toEqual([2]);
    expect(clock.now()).toBeLessThan(1000 + 30_000);
    controller.abort();
    await running;
    expect(() => new Runtime({ ...options, workerId: undefined, reclaimOwnLeases: true } as never)).toThrow(/needs options.workerId/);
  });
});

describe('Runtime onEvent', () => {
  it('receives each step that did something with its start and duration, never an idle one, and cannot break a step', async () => {
    const clock = new ManualClock(1000);
    const events: { kind: string; startedAt: number; durationMs: number }[] = [];
    const runtime = new Runtime({
      store: new InMemoryStore(),
      transport: new InMemoryTransport({ clock: clock.now }),
      clock: clock.now,
      handler: () => void clock.advance(7), // a handler that takes 7 ms
      onEvent: ({ result, startedAt, durationMs }) => {
        events.push({ kind: result.kind, startedAt, durationMs });
        throw new Error('an observer that fails');
      },
    });
    await runtime.createExecution('e');
    await runtime.send('e', { type: 'go' });
    expect((await runtime.step()).kind).toBe('handled');
    expect((await runtime.step()).kind).toBe('idle');
    expect(events).toEqual([{ kind: 'handled', startedAt: 1000, durationMs: 7 }]);
    expect(() => new Runtime({ store: new InMemoryStore(), transport: new InMemoryTransport(), handler: () => {}, onEvent: 5 as never })).toThrow(TypeError);
  });
});
