import { describe, expect, it } from 'vitest';
import { InMemoryTransport, ManualClock, type Transport, type TransportStats } from '../src/index.js';
import { watchQueue } from '../src/watch/watch.js';
import { flush, ManualScheduler } from './support/runtime-scheduler.js';

/** A transport whose stats/inspect calls are counted and can be held open, to see coalescing. */
function counted<E>(inner: Transport<E>) {
  let reads = 0;
  let gate: Promise<void> | null = null;
  let open = (): void => {};
  const transport = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'stats' || key === 'inspect') {
        return async () => {
          if (key === 'stats') reads++;
          if (gate) await gate;
          return (target[key] as () => Promise<unknown>).call(target);
        };
      }
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    transport,
    reads: () => reads,
    hold: () => void (gate = new Promise<void>((resolve) => (open = resolve))),
    release: () => {
      gate = null;
      open();
    },
  };
}

function setup(options: { inspect?: boolean; pollMs?: number } = {}) {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const inner = new InMemoryTransport<{ n: number }>({ clock: clock.now, maxAttempts: 1 });
  const c = counted(inner);
  const watch = watchQueue(c.transport, { ...options, clock: clock.now, scheduler });
  return { clock, scheduler, inner, watch, ...c };
}

const queued = (stats: TransportStats | null | undefined) => stats?.queued;

describe('watchQueue', () => {
  it('reads nothing until someone subscribes, then delivers the counts', async () => {
    const { inner, watch, reads } = setup();
    await inner.publish('g', { n: 1 });
    await flush();
    expect(reads()).toBe(0);
    expect(watch.getSnapshot()).toBeUndefined();
    let calls = 0;
    watch.subscribe(() => calls++);
    await flush();
    expect(queued(watch.getSnapshot()?.stats)).toBe(1);
    expect(calls).toBe(1);
    expect(watch.getSnapshot()?.snapshot).toBeNull();
  });

  it('follows publishes and acks through change notices', async () => {
    const { inner, watch } = setup();
    watch.subscribe(() => {});
    await flush();
    await inner.publish('g', { n: 1 });
    await inner.publish('g', { n: 2 });
    await flush();
    expect(queued(watch.getSnapshot()?.stats)).toBe(2);
    const lease = await inner.claim('w', 10_000);
    await inner.ack(lease!);
    await flush();
    expect(queued(watch.getSnapshot()?.stats)).toBe(1);
  });

  it('keeps at most one read in flight and reads once more for notices that came meanwhile', async () => {
    const { inner, watch, reads, hold, release } = setup();
    watch.subscribe(() => {});
    await flush();
    expect(reads()).toBe(1);
    hold();
    await inner.publish('a', { n: 1 });
    await flush();
    expect(reads()).toBe(2); // this read is held open
    for (let i = 0; i < 5; i++) await inner.publish(`b${i}`, { n: i });
    await flush();
    expect(reads()).toBe(2);
    release();
    await flush();
    expect(reads()).toBe(3); // five notices, one more read
    await flush();
    expect(reads()).toBe(3); // and none while nothing changes
    expect(queued(watch.getSnapshot()?.stats)).toBe(6);
  });

  it('returns the same state object until a read finds something different', async () => {
    const { inner, watch } = setup({ inspect: true });
    let calls = 0;
    watch.subscribe(() => calls++);
    await flush();
    const first = watch.getSnapshot();
    watch.refresh();
    await flush();
    expect(watch.getSnapshot()).toBe(first);
    expect(calls).toBe(1);
    await inner.publish('g', { n: 1 });
    await flush();
    expect(watch.getSnapshot()).not.toBe(first);
    expect(watch.getSnapshot()?.snapshot?.groups.map((g) => g.groupId)).toEqual(['g']);
    expect(calls).toBe(2);
  });

  it('reads again when a lease runs out, though no notice announces it', async () => {
    const { inner, watch, scheduler } = setup({ inspect: true });
    await inner.publish('g', { n: 1 });
    await inner.claim('w', 5_000);
    watch.subscribe(() => {});
    await flush();
    expect(watch.getSnapshot()?.snapshot?.groups[0]?.messages[0]?.state).toBe('leased');
    await scheduler.advance(5_001);
    expect(watch.getSnapshot()?.snapshot?.groups[0]?.messages[0]?.state).toBe('expired');
  });

  it('polls when asked, for changes no notice announces (claims)', async () => {
    const { inner, watch, scheduler } = setup({ pollMs: 1_000 });
    await inner.publish('g', { n: 1 });
    watch.subscribe(() => {});
    await flush();
    await inner.claim('w', 60_000);
    await flush();
    expect(watch.getSnapshot()?.stats?.leased).toBe(0);
    await scheduler.advance(1_000);
    expect(watch.getSnapshot()?.stats?.leased).toBe(1);
  });

  it('stops reading when the last subscriber leaves, and after close', async () => {
    const { inner, watch, reads, scheduler } = setup({ pollMs: 1_000 });
    const stop = watch.subscribe(() => {});
    await flush();
    stop();
    await inner.publish('g', { n: 1 });
    await scheduler.advance(5_000);
    expect(reads()).toBe(1);
    expect(scheduler.pending).toBe(0);
    watch.close();
    watch.subscribe(() => {});
    await flush();
    expect(reads()).toBe(1);
  });

  it('reports a failed read as an error beside the last good counts', async () => {
    const { inner, watch } = setup();
    watch.subscribe(() => {});
    await flush();
    await inner.publish('g', { n: 1 });
    await flush();
    await inner.close();
    watch.refresh();
    await flush();
    expect(watch.getSnapshot()?.error).toBeInstanceOf(Error);
    expect(queued(watch.getSnapshot()?.stats)).toBe(1);
  });

  it('refuses bad arguments, naming them', () => {
    const transport = new InMemoryTransport();
    expect(() => watchQueue({} as Transport)).toThrow(TypeError);
    expect(() => watchQueue(transport, { inspect: 'yes' as unknown as boolean })).toThrow(/options\.inspect/);
    expect(() => watchQueue(transport, { pollMs: 0 })).toThrow(RangeError);
    expect(() => watchQueue(transport, { pollMs: 0 })).toThrow(/options\.pollMs/);
    expect(() => watchQueue(transport, { clock: 5 as unknown as () => number })).toThrow(/options\.clock/);
    expect(() => watchQueue(transport).subscribe(null as unknown as () => void)).toThrow(TypeError);
  });
});
