import { describe, expect, it } from 'vitest';
import { InMemoryTransport, ManualClock, type ConsumerStatus, type TransportOptions } from '../src/index.js';
import { groupStatus, groupStatusOf, queueStatus, syncState, watchGroup, watchQueue } from '../src/watch/watch.js';
import { flush, ManualScheduler } from './support/runtime-scheduler.js';

function setup(options: Omit<TransportOptions, 'clock'> = {}) {
  const clock = new ManualClock(1_000);
  const transport = new InMemoryTransport<string>({ clock: clock.now, ...options });
  return { clock, transport, snapshot: () => transport.inspect() };
}

const consumerIn = (state: ConsumerStatus['state']): ConsumerStatus => ({ state, nextTryAt: null, lastError: null, lastDeliveredAt: null });

describe('groupStatus', () => {
  it('follows a record from pending to sending, retrying with its next try and error, and delivered', async () => {
    const { transport, snapshot, clock } = setup();
    expect(groupStatus(await snapshot(), 'note-1')).toEqual({ groupId: 'note-1', state: 'delivered', queued: 0, deadLetters: 0, nextTryAt: null, lastError: null, heldBy: null, blockedBy: [], window: null });
    await transport.publish('note-1', 'create');
    await transport.publish('note-1', 'update');
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'pending', queued: 2, nextTryAt: null, lastError: null });
    const lease = (await transport.claim('w', 10_000))!;
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'sending', queued: 2 });
    await transport.release(lease, 2_000, 'server unreachable');
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'retrying', nextTryAt: 3_001, lastError: 'server unreachable' });
    // Due again: waiting its turn, and still saying why the last try failed.
    clock.advance(2_001);
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'pending', nextTryAt: null, lastError: 'server unreachable' });
    const again = (await transport.claim('w', 10_000))!;
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'sending', lastError: 'server unreachable' });
    await transport.ack(again);
    await transport.ack((await transport.claim('w', 10_000))!);
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'delivered', queued: 0 });
  });

  it('a failed nack with a reason is retrying too; a park without one is only pending (a hold, not a retry)', async () => {
    const { transport, snapshot } = setup();
    await transport.publish('a', 'x');
    await transport.publish('b', 'y');
    await transport.nack((await transport.claim('w', 10_000))!, 500, 'HTTP 500');
    await transport.nack((await transport.claim('w', 10_000))!, 500);
    const s = await snapshot();
    expect(groupStatus(s, 'a')).toMatchObject({ state: 'retrying', nextTryAt: 1_501, lastError: 'HTTP 500' });
    expect(groupStatus(s, 'b')).toMatchObject({ state: 'pending', nextTryAt: 1_501, lastError: null });
  });

  it('is held at a refused message, with its seq and reason, and never delivered while it stays', async () => {
    const { transport, snapshot } = setup({ onDeadLetter: 'hold' });
    const create = await transport.publish('note-1', 'create');
    await transport.reject((await transport.claim('w', 10_000))!, 'HTTP 422: title is required');
    const held = { state: 'held', queued: 0, deadLetters: 1, heldBy: { groupId: 'note-1', seq: create, reason: 'HTTP 422: title is required' } };
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject(held);
    await transport.publish('note-1', 'update');
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ ...held, queued: 1 });
    await transport.discard(create);
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'pending', queued: 1, deadLetters: 0, heldBy: null });
  });

  it("is dead, not delivered, when a queue that goes on past dead letters has nothing left of the group but them", async () => {
    const { transport, snapshot } = setup({ onDeadLetter: 'continue' });
    await transport.publish('note-1', 'create');
    await transport.publish('note-1', 'update');
    await transport.reject((await transport.claim('w', 10_000))!, 'HTTP 422');
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'pending', queued: 1, deadLetters: 1 });
    await transport.ack((await transport.claim('w', 10_000))!);
    expect(groupStatus(await snapshot(), 'note-1')).toMatchObject({ state: 'dead', queued: 0, deadLetters: 1, heldBy: null });
  });

  it('is blocked while its head waits for `after`, paused while its group or the queue is paused', async () => {
    const { transport, snapshot } = setup();
    const note = await transport.publish('note-1', 'create');
    await transport.publish('task-1', 'create', { after: note });
    await transport.publish('note-2', 'create');
    await transport.pause('note-2');
    let s = await snapshot();
    expect([groupStatus(s, 'note-1').state, groupStatus(s, 'task-1').state, groupStatus(s, 'note-2').state]).toEqual(['pending', 'blocked', 'paused']);
    await transport.pause();
    s = await snapshot();
    expect(queueStatus(s).state).toBe('paused');
    expect(queueStatus(s).counts).toMatchObject({ paused: 3, pending: 0, blocked: 0 });
  });

  it('names what a blocked record waits for, and the window of a record still being edited', async () => {
    const { clock, transport, snapshot } = setup({ onDeadLetter: 'hold' });
    const create = await transport.publish('note-1', 'create');
    const task = await transport.publish('task-1', 'create', { after: { group: 'note-1' } });
    await transport.publish('note-2', 'H', { key: 'edit', onDuplicate: 'replace', debounceMs: 500, maxWaitMs: 2_000 });
    clock.advance(300);
    await transport.publish('note-2', 'He', { key: 'edit', onDuplicate: 'replace', debounceMs: 500, maxWaitMs: 2_000 });
    let s = await snapshot();
    expect(groupStatus(s, 'task-1')).toMatchObject({ state: 'blocked', blockedBy: [create], window: null });
    expect(groupStatus(s, 'note-2')).toMatchObject({ state: 'pending', nextTryAt: 1_801, window: { endsAt: 1_800, latestEndAt: 3_000 } });
    // Refused: the record it waits for is now a dead letter, which blocks until discarded or redriven.
    await transport.reject((await transport.claim('w', 10_000))!, 'HTTP 422');
    s = await snapshot();
    expect(groupStatus(s, 'task-1')).toMatchObject({ state: 'blocked', blockedBy: [create] });
    expect(groupStatus(s, 'note-1')).toMatchObject({ state: 'held', queued: 0, heldBy: { seq: create, reason: 'HTTP 422' } });
    clock.advance(501);
    expect(groupStatus(await snapshot(), 'note-2')).toMatchObject({ state: 'pending', window: null });
    await transport.discard(create, { dependents: true });
    expect(groupStatus(await snapshot(), 'task-1')).toMatchObject({ state: 'delivered', blockedBy: [] });
    expect(task).toBeGreaterThan(create);
  });

  it("reads the same from one group's inspection as from the whole snapshot", async () => {
    const { clock, transport, snapshot } = setup({ onDeadLetter: 'hold' });
    const same = async () => {
      for (const id of ['a', 'b', 'c', 'gone']) {
        const inspection = await transport.inspectGroup(id);
        expect(groupStatusOf(inspection)).toEqual(groupStatus(await snapshot(), id));
        expect(groupStatusOf(inspection)).toBe(groupStatusOf(inspection));
      }
    };
    const a = await transport.publish('a', 'a1');
    await transport.publish('b', 'b1', { after: a });
    await transport.publish('c', 'c1', { key: 'k', debounceMs: 100 });
    await same();
    await transport.reject((await transport.claim('w', 10_000))!, 'no');
    await same();
    clock.advance(101);
    await transport.release((await transport.claim('w', 10_000))!, 1_000, 'HTTP 503');
    await same();
    await transport.pause();
    await same();
    expect(() => groupStatusOf({} as never)).toThrow(TypeError);
  });

  it('gives the same object for the same snapshot and group, and reads nothing', async () => {
    const { transport, snapshot } = setup();
    await transport.publish('a', 'x');
    const s = await snapshot();
    expect(groupStatus(s, 'a')).toBe(groupStatus(s, 'a'));
    expect(groupStatus(s, 'gone')).toBe(groupStatus(s, 'gone'));
    expect(queueStatus(s)).toBe(queueStatus(s));
    expect(Object.isFrozen(groupStatus(s, 'a'))).toBe(true);
    expect(() => groupStatus(s, 5 as never)).toThrow(TypeError);
    expect(() => queueStatus({} as never)).toThrow(TypeError);
  });
});

describe('queueStatus', () => {
  it('counts groups per word, lists the held ones with reasons, and names the earliest next try', async () => {
    const { transport, snapshot } = setup({ onDeadLetter: 'hold' });
    expect(queueStatus(await snapshot())).toMatchObject({ state: 'delivered', queued: 0, deadLetters: 0, held: [], nextTryAt: null, groups: [] });
    for (const g of ['a', 'b', 'c', 'd']) await transport.publish(g, `${g}1`);
    await transport.publish('a', 'a2');
    expect(queueStatus(await snapshot())).toMatchObject({ state: 'pending', queued: 5 });
    const a = (await transport.claim('w', 10_000))!;
    const b = (await transport.claim('w', 10_000))!;
    const c = (await transport.claim('w', 10_000))!;
    await transport.claim('w', 10_000); // d: sending
    expect(queueStatus(await snapshot()).state).toBe('sending');
    await transport.release(a, 5_000, 'HTTP 503');
    await transport.release(b, 2_000, 'server unreachable');
    await transport.reject(c, 'HTTP 422');
    const status = queueStatus(await snapshot());
    expect(status).toMatchObject({
      state: 'retrying',
      counts: { pending: 0, sending: 1, retrying: 2, held: 1, blocked: 0, paused: 0, dead: 0 },
      queued: 4,
      deadLetters: 1,
      held: [{ groupId: 'c', seq: c.seq, reason: 'HTTP 422' }],
      nextTryAt: 3_001,
      lastError: 'server unreachable',
    });
    expect(status.groups.map((g) => [g.groupId, g.state])).toEqual([
      ['a', 'retrying'],
      ['b', 'retrying'],
      ['c', 'held'],
      ['d', 'sending'],
    ]);
  });

  it('is held, then dead, never delivered while a refused message remains', async () => {
    const hold = setup({ onDeadLetter: 'hold' });
    await hold.transport.publish('note-1', 'create');
    await hold.transport.reject((await hold.transport.claim('w', 10_000))!, 'HTTP 422');
    expect(queueStatus(await hold.snapshot()).state).toBe('held');
    const go = setup({ onDeadLetter: 'continue' });
    await go.transport.publish('note-1', 'create');
    await go.transport.reject((await go.transport.claim('w', 10_000))!, 'HTTP 422');
    expect(queueStatus(await go.snapshot())).toMatchObject({ state: 'dead', queued: 0, deadLetters: 1, counts: { dead: 1 } });
  });

  it('is read from a watch made with inspect: true, with no read of its own', async () => {
    const clock = new ManualClock(1_000);
    const transport = new InMemoryTransport<string>({ clock: clock.now });
    let reads = 0;
    const inspect = transport.inspect.bind(transport);
    transport.inspect = () => (reads++, inspect());
    const watch = watchQueue(transport, { inspect: true, clock: clock.now, scheduler: new ManualScheduler(clock) });
    watch.subscribe(() => {});
    await transport.publish('g', 'x');
    await flush();
    const before = reads;
    const snapshot = watch.getSnapshot()!.snapshot!;
    expect(queueStatus(snapshot)).toMatchObject({ state: 'pending', queued: 1 });
    expect(groupStatus(snapshot, 'g').state).toBe('pending');
    expect(reads).toBe(before);
    watch.close();
  });
});

describe('syncState', () => {
  it("puts the consumer's offline or retrying first, then the queue's word; null before the first read", async () => {
    const { transport, snapshot } = setup();
    await transport.publish('g', 'x');
    const queue = queueStatus(await snapshot());
    expect(syncState(null)).toBeNull();
    expect(syncState(null, consumerIn('offline'))).toBe('offline');
    expect(syncState(queue)).toBe('pending');
    expect(syncState(queue, consumerIn('offline'))).toBe('offline');
    expect(syncState(queue, consumerIn('retrying'))).toBe('retrying');
    expect(syncState(queue, consumerIn('delivering'))).toBe('pending');
    expect(syncState(queue, consumerIn('stopped'))).toBe('pending');
  });
});

describe('watchGroup', () => {
  it("keeps one record's status current: on notices, when its window ends, and never as delivered before a read", async () => {
    const clock = new ManualClock(1_000);
    const scheduler = new ManualScheduler(clock);
    const transport = new InMemoryTransport<string>({ clock: clock.now, onDeadLetter: 'hold' });
    const watch = watchGroup(transport, 'note-1', { clock: clock.now, scheduler });
    expect(watch.getSnapshot()).toBeUndefined();
    const states: (string | undefined)[] = [];
    const stop = watch.subscribe(() => states.push(watch.getSnapshot()?.status?.state));
    await flush();
    expect(watch.getSnapshot()).toMatchObject({ status: { state: 'delivered' }, inspection: { groupId: 'note-1', group: null }, error: null });
    await transport.publish('note-1', 'H', { key: 'edit', onDuplicate: 'replace', debounceMs: 500 });
    await transport.publish('other', 'x'); // another record's change: read, but no news here
    await flush();
    expect(watch.getSnapshot()?.status).toMatchObject({ state: 'pending', window: { endsAt: 1_500, latestEndAt: null } });
    // Time alone ends the window: no notice, a timer at its end.
    await scheduler.advance(501);
    await flush();
    expect(watch.getSnapshot()?.status).toMatchObject({ state: 'pending', window: null });
    await transport.reject((await transport.claim('w', 10_000, { minPriority: 0 }))!, 'refused');
    await flush();
    expect(watch.getSnapshot()?.status).toMatchObject({ state: 'held', heldBy: { reason: 'refused' } });
    expect(states).toEqual(['delivered', 'pending', 'pending', 'held']);
    stop();
    watch.close();
  });

  it('keeps the last good read beside a failed one, and checks what it is given', async () => {
    const transport = new InMemoryTransport<string>();
    await transport.publish('a', 'x');
    let fail = false;
    const flaky = new Proxy(transport, {
      get(target, key, receiver) {
        if (key === 'inspectGroup') return (id: string) => (fail ? Promise.reject(new Error('offline')) : target.inspectGroup(id));
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const watch = watchGroup(flaky, 'a');
    watch.subscribe(() => {});
    await flush();
    fail = true;
    watch.refresh();
    await flush();
    expect(watch.getSnapshot()).toMatchObject({ status: { state: 'pending', queued: 1 }, error: new Error('offline') });
    watch.close();
    expect(() => watchGroup(transport, '')).toThrow(RangeError);
    expect(() => watchGroup({} as never, 'a')).toThrow(TypeError);
    expect(() => watchGroup(transport, 'a', { inspect: true } as never)).toThrow(/inspect/);
  });
});
