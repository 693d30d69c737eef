/** What a relay reads: the outbox, the spawn list, the dedupe marks and the timers. */
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { Execution, ExecutionStoreOptions } from '../../src/store/contract.js';
import { END_OF_TIME, type StoreHarness } from './store-harness.js';

type Open = (options?: ExecutionStoreOptions) => Promise<StoreHarness>;

const fresh = (id: string): Execution => ({ id, version: 0 });

/** Registers the outbox, spawn, dedupe and timer tests; called by `describeStore` inside its describe block. */
export function describeStoreRelay(open: Open): void {
  describeOutboxAndSpawns(open);
  describeTimers(open);
}

function describeOutboxAndSpawns(open: Open): void {
  it('numbers outbox entries from 1 in emit order, keeping null targets', async () => {
    const { store } = await open();
    await store.commit(fresh('a'), { emits: [{ targetId: 'b', event: { n: 1 } }, { targetId: null, event: 'broadcast' }] });
    expect(await store.pendingOutbox()).toEqual([
      { seq: 1, targetId: 'b', event: { n: 1 } },
      { seq: 2, targetId: null, event: 'broadcast' },
    ]);
  });

  it('reads the outbox in batches with a limit, and ack removes exactly one entry', async () => {
    const { store } = await open();
    await store.commit(fresh('a'), { emits: [1, 2, 3, 4, 5].map((n) => ({ targetId: 't', event: n })) });
    const first = await store.pendingOutbox(2);
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    for (const entry of first) await store.ackOutbox(entry.seq);
    await store.ackOutbox(2); // twice: a no-op
    await store.ackOutbox(1000); // unknown: a no-op
    expect((await store.pendingOutbox(2)).map((e) => e.seq)).toEqual([3, 4]);
    expect((await store.pendingOutbox(10)).map((e) => e.event)).toEqual([3, 4, 5]);
  });

  it('never reuses an outbox seq after the newest entry is acked', async () => {
    const { store } = await open();
    const exe = fresh('a');
    await store.commit(exe, { emits: [{ targetId: null, event: 'one' }] });
    await store.ackOutbox(1);
    await store.commit(exe, { emits: [{ targetId: null, event: 'two' }] });
    expect(await store.pendingOutbox()).toEqual([{ seq: 2, targetId: null, event: 'two' }]);
  });

  it('returns a copy of the pending lists: changing it does not change the store', async () => {
    const { store } = await open();
    await store.commit(fresh('a'), { emits: [{ targetId: 'b', event: 'x' }], spawns: [{ childId: 'c', rootPath: 'r', context: { k: 1 } }] });
    const outbox = await store.pendingOutbox();
    outbox.pop();
    const spawns = await store.pendingSpawns();
    spawns[0]!.seq = 77;
    spawns[0]!.context.k = 2;
    expect(await store.pendingOutbox()).toHaveLength(1);
    expect(await store.pendingSpawns()).toEqual([{ seq: 1, parentId: 'a', childId: 'c', rootPath: 'r', context: { k: 1 } }]);
  });

  it('records spawns from seq 1 with the parent id and a snapshot of the context', async () => {
    const { store } = await open();
    const context = { order: 'o-1', lines: 3 };
    await store.commit(fresh('parent'), { spawns: [{ childId: 'kid-1', rootPath: 'ship', context }, { childId: 'kid-2', rootPath: 'bill', context: {} }] });
    context.lines = 4;
    (context as Record<string, unknown>).extra = true;
    expect(await store.pendingSpawns()).toEqual([
      { seq: 1, parentId: 'parent', childId: 'kid-1', rootPath: 'ship', context: { order: 'o-1', lines: 3 } },
      { seq: 2, parentId: 'parent', childId: 'kid-2', rootPath: 'bill', context: {} },
    ]);
    expect((await store.pendingSpawns(1)).map((s) => s.seq)).toEqual([1]);
    await store.ackSpawn(1);
    expect((await store.pendingSpawns()).map((s) => s.seq)).toEqual([2]);
  });

  it('marks the processed event of a commit, and only that pair', async () => {
    const { store } = await open();
    expect(await store.isProcessed('a', 'e1')).toBe(false);
    await store.commit(fresh('a'), { processedEventId: 'e1' });
    expect(await store.isProcessed('a', 'e1')).toBe(true);
    expect(await store.isProcessed('a', 'e2')).toBe(false);
    expect(await store.isProcessed('b', 'e1')).toBe(false);
  });
}

function describeTimers(open: Open): void {
  const timerAt = (path: string, fireAt: number) => ({ action: 'schedule' as const, path, fireAt });

  it('returns the timers due by now, inclusive, earliest first, without disarming them', async () => {
    const h = await open();
    const clock = h.clock ?? new ManualClock(1_000);
    const { store } = h;
    await store.commit(fresh('a'), { timers: [timerAt('late', clock.now() + 500), timerAt('soon', clock.now() + 100)] });
    await store.commit(fresh('b'), { timers: [timerAt('now', clock.now())] });
    expect(await store.dueTimers(clock.now())).toEqual([{ executionId: 'b', path: 'now', fireAt: clock.now() }]);
    clock.advance(100);
    expect((await store.dueTimers(clock.now())).map((t) => t.path)).toEqual(['now', 'soon']);
    expect(await store.dueTimers(clock.now())).toHaveLength(2);
    expect(await store.dueTimers(0)).toEqual([]);
  });

  it('replaces a timer scheduled again on the same path, and cancel disarms it', async () => {
    const { store } = await open();
    const exe = fresh('a');
    await store.commit(exe, { timers: [timerAt('wait', 50), timerAt('other', 60)] });
    await store.commit(exe, { timers: [timerAt('wait', 80)] });
    expect(await store.dueTimers(END_OF_TIME)).toEqual([
      { executionId: 'a', path: 'other', fireAt: 60 },
      { executionId: 'a', path: 'wait', fireAt: 80 },
    ]);
    await store.commit(exe, { timers: [{ action: 'cancel', path: 'other' }, { action: 'cancel', path: 'never-armed' }] });
    expect(await store.dueTimers(END_OF_TIME)).toEqual([{ executionId: 'a', path: 'wait', fireAt: 80 }]);
  });

  it('applies the timer ops of one commit in order', async () => {
    const { store } = await open();
    await store.commit(fresh('a'), { timers: [timerAt('p', 1), { action: 'cancel', path: 'p' }, timerAt('q', 2), timerAt('q', 3)] });
    expect(await store.dueTimers(END_OF_TIME)).toEqual([{ executionId: 'a', path: 'q', fireAt: 3 }]);
  });

  it('lets a re-armed timer survive a stale sweep', async () => {
    const { store } = await open();
    const exe = fresh('a');
    await store.commit(exe, { timers: [timerAt('wait', 100)] });
    const [due] = await store.dueTimers(100);
    await store.commit(exe, { timers: [timerAt('wait', 300)] }); // re-armed between the read and the delete
    expect(await store.deleteTimer(due!.executionId, due!.path, due!.fireAt)).toBe(false);
    expect(await store.dueTimers(END_OF_TIME)).toEqual([{ executionId: 'a', path: 'wait', fireAt: 300 }]);
    expect(await store.deleteTimer('a', 'wait', 300)).toBe(true);
    expect(await store.deleteTimer('a', 'wait', 300)).toBe(false);
    expect(await store.dueTimers(END_OF_TIME)).toEqual([]);
  });

  it('keeps fractional and negative fire times exactly', async () => {
    const { store } = await open();
    await store.commit(fresh('a'), { timers: [timerAt('frac', 10.25), timerAt('neg', -5)] });
    expect(await store.dueTimers(10.25)).toEqual([
      { executionId: 'a', path: 'neg', fireAt: -5 },
      { executionId: 'a', path: 'frac', fireAt: 10.25 },
    ]);
    expect(await store.deleteTimer('a', 'frac', 10.25)).toBe(true);
  });
}
