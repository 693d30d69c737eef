import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { consume } from '../src/consume/consume.js';
import type { ConsumeEvent } from '../src/consume/events.js';
import { RejectError, RetryLaterError } from '../src/consume/outcomes.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { until } from './conformance/consume.js';
import { ManualScheduler } from './support/runtime-scheduler.js';

type Job = { work: number; outcome: 'ok' | 'fail' | 'later' | 'reject' };

/** A consumer whose handlers take `work` ms of the manual clock, then end as their event says. */
function setup(concurrency = 1) {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const transport = new InMemoryTransport<Job>({ clock: clock.now });
  const events: ConsumeEvent<Job>[] = [];
  const consumer = consume(
    transport,
    async (event) => {
      clock.advance(event.work);
      if (event.outcome === 'fail') throw new Error('boom');
      if (event.outcome === 'later') throw new RetryLaterError({ afterMs: 5_000 });
      if (event.outcome === 'reject') throw new RejectError('422 unprocessable');
    },
    { clock: clock.now, scheduler, concurrency, onEvent: (event) => events.push(event), onError: () => {}, backoff: { baseMs: 1_000, jitter: 0 } },
  );
  return { clock, scheduler, transport, events, consumer };
}

describe('consume() onEvent', () => {
  it('reports a claim and an ack with the handler time and the time since the claim', async () => {
    const { transport, events, consumer } = setup();
    const seq = await transport.publish('g', { work: 250, outcome: 'ok' });
    await until(() => events.length === 2);
    expect(events.map((e) => e.type)).toEqual(['claimed', 'acked']);
    expect(events[0]).toMatchObject({ type: 'claimed', at: 1_000, lease: { seq, attempt: 1 } });
    expect(events[1]).toMatchObject({ type: 'acked', at: 1_250, handlerMs: 250, totalMs: 250, lease: { seq } });
    await consumer.stop();
  });

  it('reports a failure with its error and back-off, a RetryLaterError as retried, a RejectError as dead', async () => {
    const { transport, events, consumer } = setup(3);
    await transport.publishMany([
      { groupId: 'a', event: { work: 10, outcome: 'fail' } },
      { groupId: 'b', event: { work: 10, outcome: 'later' } },
      { groupId: 'c', event: { work: 10, outcome: 'reject' } },
    ]);
    await until(() => events.filter((e) => e.type !== 'claimed').length === 3);
    const byGroup = Object.fromEntries(events.filter((e) => e.type !== 'claimed').map((e) => [e.lease.groupId, e]));
    expect(byGroup.a).toMatchObject({ type: 'failed', retryInMs: 1_000 });
    expect((byGroup.a as { error: Error }).error.message).toBe('boom');
    expect(byGroup.b).toMatchObject({ type: 'retried', retryInMs: 5_000 });
    expect(byGroup.c).toMatchObject({ type: 'dead', reason: '422 unprocessable' });
    expect(consumer.failed + consumer.retried + consumer.rejected).toBe(3);
    await consumer.stop({ graceMs: 0 });
  });

  it('reports every ack of a batch, each once', async () => {
    const { transport, events, consumer } = setup(4);
    await transport.publishMany(['a', 'b', 'c', 'd'].map((groupId) => ({ groupId, event: { work: 0, outcome: 'ok' as const } })));
    await until(() => consumer.handled === 4);
    const acked = events.filter((e) => e.type === 'acked').map((e) => e.lease.groupId).sort();
    expect(acked).toEqual(['a', 'b', 'c', 'd']);
    await consumer.stop();
  });

  it('cannot be broken by a listener that throws, and is checked up front', async () => {
    const clock = new ManualClock();
    const transport = new InMemoryTransport<number>({ clock: clock.now });
    expect(() => consume(transport, () => {}, { onEvent: 'x' as never })).toThrow(/options\.onEvent/);
    const rejections: unknown[] = [];
    const onRejection = (error: unknown) => rejections.push(error);
    process.on('unhandledRejection', onRejection);
    try {
      const consumer = consume(transport, () => {}, { clock: clock.now, scheduler: new ManualScheduler(clock), onEvent: () => { throw new Error('listener bug'); } });
      await transport.publish('g', 1);
      await until(() => consumer.handled === 1);
      await consumer.stop();
      await until(() => rejections.length >= 2);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
