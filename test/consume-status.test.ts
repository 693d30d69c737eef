import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { consume } from '../src/consume/consume.js';
import { RejectError, RetryLaterError } from '../src/consume/outcomes.js';
import type { ConsumerStatus } from '../src/consume/types.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { deferred, until } from './conformance/consume.js';
import { flush, ManualScheduler } from './support/runtime-scheduler.js';

type Outcome = 'ok' | 'offline' | 'later' | 'reject' | 'fail';

/**
 * A consumer whose handler ends as the test says for each delivery (a queue of outcomes, 'ok'
 * once it is empty), or waits on `gate` while one is set.
 */
function setup(options: { onDeadLetter?: 'hold' | 'continue' } = {}) {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const transport = new InMemoryTransport<string>({ clock: clock.now, ...options });
  const outcomes: Outcome[] = [];
  let gate: Promise<void> | null = null;
  const consumer = consume(
    transport,
    async () => {
      if (gate) await gate;
      const outcome = outcomes.shift() ?? 'ok';
      if (outcome === 'offline') throw new RetryLaterError({ afterMs: 2_000, offline: true }, 'server unreachable');
      if (outcome === 'later') throw new RetryLaterError({ afterMs: 5_000 }, 'HTTP 503');
      if (outcome === 'reject') throw new RejectError('HTTP 422: title is required');
      if (outcome === 'fail') throw new Error('boom');
    },
    { clock: clock.now, scheduler, onError: () => {}, idleMinMs: 60_000, idleMaxMs: 60_000, backoff: { baseMs: 1_000, jitter: 0 } },
  );
  const seen: ConsumerStatus[] = [];
  consumer.subscribe(() => seen.push(consumer.status));
  return {
    clock,
    scheduler,
    transport,
    consumer,
    outcomes,
    seen,
    hold: () => {
      const d = deferred();
      gate = d.promise;
      return () => {
        gate = null;
        d.resolve();
      };
    },
  };
}

describe('consumer.status', () => {
  it('starts idle, shows delivering while a handler runs, then idle with the time of the ack', async () => {
    const { transport, consumer, clock, hold } = setup();
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: null });
    const open = hold();
    await transport.publish('note', 'create');
    await until(() => consumer.active === 1, 'a claim');
    await flush();
    expect(consumer.status.state).toBe('delivering');
    clock.advance(40);
    open();
    await until(() => consumer.handled === 1, 'the ack');
    await flush();
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: 1_040 });
    await consumer.stop();
  });

  it('is one object until something in it changes', async () => {
    const { consumer, transport } = setup();
    const first = consumer.status;
    expect(consumer.status).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    await transport.publish('g', 'a');
    await until(() => consumer.handled === 1, 'the ack');
    const second = consumer.status;
    expect(second).not.toBe(first);
    expect(consumer.status).toBe(second);
    await consumer.stop();
  });

  it("shows offline with the next try and the error's message, and the message keeps that reason for every tab", async () => {
    const { transport, consumer, outcomes } = setup();
    outcomes.push('offline');
    const seq = await transport.publish('note', 'create');
    await until(() => consumer.retried === 1, 'the retry');
    await flush();
    expect(consumer.status).toEqual({ state: 'offline', nextTryAt: 1_000 + 2_000 + 1, lastError: 'server unreachable', lastDeliveredAt: null });
    const [message] = (await transport.inspect()).groups[0]!.messages;
    // A release of a first delivery spent no attempt: it reads as a delay, with its reason.
    expect(message).toMatchObject({ seq, state: 'delayed', attempt: 0, lastError: 'server unreachable' });
    await consumer.stop();
  });

  it('goes offline → retrying → idle: the later error replaces the earlier, and the next ack clears both', async () => {
    const { transport, consumer, outcomes, scheduler, seen } = setup();
    outcomes.push('offline', 'later');
    await transport.publish('note', 'create');
    await until(() => consumer.retried === 1, 'the first retry');
    await scheduler.advance(2_001);
    await until(() => consumer.retried === 2, 'the second retry');
    await flush();
    expect(consumer.status).toMatchObject({ state: 'retrying', nextTryAt: 3_001 + 5_000 + 1, lastError: 'HTTP 503' });
    // Through the try itself the state stays retrying: the outage is over only when an answer comes.
    await scheduler.advance(5_001);
    await until(() => consumer.handled === 1, 'the delivery');
    await flush();
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: 8_002 });
    // Never "delivering" in the middle of an outage: a try under way is still part of it.
    const words = seen.map((s) => s.state).filter((state, i, all) => state !== all[i - 1]);
    expect(words.slice(words.indexOf('offline'))).toEqual(['offline', 'retrying', 'idle']);
    await consumer.stop();
  });

  it('a refusal is an answer: RejectError ends an outage, without a delivery time', async () => {
    const { transport, consumer, outcomes, scheduler } = setup({ onDeadLetter: 'hold' });
    outcomes.push('offline', 'reject');
    await transport.publish('note', 'create');
    await until(() => consumer.retried === 1, 'the retry');
    await scheduler.advance(2_001);
    await until(() => consumer.rejected === 1, 'the refusal');
    await flush();
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: null });
    await consumer.stop();
  });

  it('a failed handler is not an outage: the state stays as it was', async () => {
    const { transport, consumer, outcomes } = setup();
    outcomes.push('fail');
    await transport.publish('note', 'create');
    await until(() => consumer.failed === 1, 'the failure');
    await flush();
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: null });
    await consumer.stop();
  });

  it('clears a retry when, past its time, nothing is left for the consumer (the message was cancelled)', async () => {
    const { transport, consumer, outcomes, scheduler } = setup();
    outcomes.push('later');
    const seq = await transport.publish('note', 'create');
    await until(() => consumer.retried === 1, 'the retry');
    expect(await transport.cancel(seq)).toBe(true);
    await scheduler.advance(4_000);
    expect(consumer.status.state).toBe('retrying'); // not yet due
    await scheduler.advance(1_001);
    await until(() => consumer.status.state === 'idle', 'idle again');
    expect(consumer.status).toEqual({ state: 'idle', nextTryAt: null, lastError: null, lastDeliveredAt: null });
    await consumer.stop();
  });

  it('is stopped once stop() is called, with no next try', async () => {
    const { transport, consumer, outcomes } = setup();
    outcomes.push('later');
    await transport.publish('note', 'create');
    await until(() => consumer.retried === 1, 'the retry');
    const stopped = consumer.stop();
    expect(consumer.status).toMatchObject({ state: 'stopped', nextTryAt: null, lastError: 'HTTP 503' });
    await stopped;
    expect(consumer.status.state).toBe('stopped');
  });

  it('tells listeners once per change, on a microtask; unsubscribe and a throwing listener change nothing', async () => {
    const { transport, consumer } = setup();
    const calls: string[] = [];
    const off = consumer.subscribe(() => calls.push(consumer.status.state));
    const detached = consumer.subscribe;
    const offDetached = detached(() => calls.push('detached'));
    offDetached();
    await transport.publishMany([1, 2, 3].map((n) => ({ groupId: 'g', event: String(n) })));
    await until(() => consumer.handled === 3, 'three acks');
    await flush();
    // Each ack took the next message in the same call: delivering throughout, then idle.
    expect(calls.at(-1)).toBe('idle');
    expect(calls.length).toBeLessThanOrEqual(4);
    off();
    const before = calls.length;
    await transport.publish('g', '4');
    await until(() => consumer.handled === 4, 'the fourth ack');
    await flush();
    expect(calls.length).toBe(before);
    expect(() => consumer.subscribe(5 as never)).toThrow(TypeError);
    await consumer.stop();
  });
});
