/**
 * The queue API part of the transport conformance suite: batches, delayed publish, stats, cancel
 * and named queues. Called by `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import { LeaseholdError, LeaseLostError } from '../../src/errors.js';
import { isChangeNotifier, type Lease, type Transport, type TransportSnapshot } from '../../src/transport/contract.js';
import type { TransportCaps, TransportHarness } from './transport.js';

export interface QueueSuiteContext {
  h(): TransportHarness;
  t(): Transport<any>;
  open(options?: { maxAttempts?: number }): Promise<void>;
  tick(ms?: number): unknown;
  unchangedBy(action: () => Promise<unknown>): Promise<void>;
  expectLost(promise: Promise<unknown>, lease: Lease): Promise<void>;
}

const states = (snapshot: TransportSnapshot) => snapshot.groups.map((g) => [g.groupId, g.messages.map((m) => m.state)]);
const events = (leases: Lease[]) => leases.map((l) => l.event);

export function describeQueueApi(caps: TransportCaps, c: QueueSuiteContext): void {
  const t = () => c.t();
  const now = () => c.h().clock.now();

  describe('publishMany: many publishes, one transaction', () => {
    it('returns the seqs in the order given and queues exactly what the publishes would', async () => {
      const seqs = await t().publishMany([
        { groupId: 'a', event: { n: 1 } },
        { groupId: 'b', event: { n: 2 }, options: { priority: 3 } },
        { groupId: 'a', event: { n: 3 } },
      ]);
      expect(seqs).toHaveLength(3);
      expect(seqs[1]).toBeGreaterThan(seqs[0]!);
      expect(seqs[2]).toBeGreaterThan(seqs[1]!);
      const snapshot = await t().inspect();
      expect(snapshot.groups.map((g) => [g.groupId, g.priority, g.messages.map((m) => [m.seq, m.event])])).toEqual([
        ['a', 0, [[seqs[0], { n: 1 }], [seqs[2], { n: 3 }]]],
        ['b', 3, [[seqs[1], { n: 2 }]]],
      ]);
    });

    it('takes an empty batch and returns []', async () => {
      expect(await t().publishMany([])).toEqual([]);
      expect((await t().inspect()).groups).toEqual([]);
    });

    it('dedupes a key against queued messages and against earlier items of the batch', async () => {
      const first = await t().publish('g', 'queued', { key: 'k1' });
      const seqs = await t().publishMany([
        { groupId: 'g', event: 'again', options: { key: 'k1' } },
        { groupId: 'g', event: 'new', options: { key: 'k2' } },
        { groupId: 'g', event: 'twice', options: { key: 'k2' } },
      ]);
      expect(seqs[0]).toBe(first);
      expect(seqs[2]).toBe(seqs[1]);
      expect((await t().inspect()).groups[0]!.messages.map((m) => m.event)).toEqual(['queued', 'new']);
    });

    it('refuses the whole batch, writing nothing, when any item is bad, and names the item', async () => {
      await t().publish('g', 'before');
      const bad: [unknown, ErrorConstructor, RegExp][] = [
        [[{ groupId: 'g', event: 1 }, { groupId: '', event: 2 }], RangeError, /items\[1\]\.groupId/],
        [[{ groupId: 'g', event: 1 }, { groupId: 'h', event: 2, options: { priority: 9 } }], RangeError, /items\[1\]\.options\.priority/],
        [[{ groupId: 'g', event: 1, options: { delayMs: -1 } }], RangeError, /items\[0\]\.options\.delayMs/],
        [[{ groupId: 'g', event: 1 }, null], TypeError, /items\[1\]/],
        [{ groupId: 'g', event: 1 }, TypeError, /items/],
      ];
      for (const [items, kind, message] of bad) {
        await c.unchangedBy(async () => {
          const error = await t().publishMany(items as never).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(kind);
          expect((error as Error).message).toMatch(message);
        });
      }
    });

    it('refuses the whole batch when one event cannot be stored as JSON', async () => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await c.unchangedBy(async () => {
        const error = await t().publishMany([{ groupId: 'g', event: 1 }, { groupId: 'g', event: cyclic }]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(/items\[1\]\.event/);
      });
    });
  });

  describe('claimMany: what max successive claims would return, at one instant', () => {
    it.skipIf(caps.limits?.roundRobinPerPart)('leases the heads of up to max groups in round-robin order, one per group', async () => {
      await t().publishMany(['a', 'b', 'a', 'c', 'd'].map((groupId, n) => ({ groupId, event: n })));
      const leases = await t().claimMany('w', 1000, { max: 3 });
      expect(leases.map((l) => [l.groupId, l.event, l.attempt, l.workerId])).toEqual([
        ['a', 0, 1, 'w'],
        ['b', 1, 1, 'w'],
        ['c', 3, 1, 'w'],
      ]);
      expect(new Set(leases.map((l) => l.expiresAt))).toEqual(new Set([now() + 1000]));
      const rest = await t().claimMany('w', 1000, { max: 10 });
      expect(rest.map((l) => l.groupId)).toEqual(['d']);
      expect(await t().claimMany('w', 1000, { max: 10 })).toEqual([]);
    });

    it('honours the priority floor', async () => {
      await t().publishMany([
        { groupId: 'low', event: 1, options: { priority: 0 } },
        { groupId: 'high', event: 2, options: { priority: 4 } },
      ]);
      expect((await t().claimMany('w', 1000, { max: 5, minPriority: 2 })).map((l) => l.groupId)).toEqual(['high']);
    });

    it('dead-letters a poison head on the way and carries on, as claim does', async () => {
      await c.open({ maxAttempts: 1 });
      await t().publishMany([{ groupId: 'poison', event: 'p' }, { groupId: 'ok', event: 'o' }, { groupId: 'poison', event: 'next' }]);
      await t().nack((await t().claim('w', 1000))!);
      await c.tick();
      const leases = await t().claimMany('w', 1000, { max: 5 });
      expect(events(leases)).toEqual(['o', 'next']);
      expect((await t().deadLetters()).map((d) => d.event)).toEqual(['p']);
    });

    it('refuses a bad max or options before anything changes', async () => {
      await t().publish('g', 1);
      for (const [options, kind] of [
        [undefined, TypeError],
        [{}, TypeError],
        [{ max: 0 }, RangeError],
        [{ max: 1001 }, RangeError],
        [{ max: 1.5 }, RangeError],
        [{ max: 2, minPriority: 7 }, RangeError],
      ] as const) {
        await c.unchangedBy(() => expect(t().claimMany('w', 1000, options as never)).rejects.toBeInstanceOf(kind));
      }
      await c.unchangedBy(() => expect(t().claimMany('w', 0, { max: 1 })).rejects.toBeInstanceOf(RangeError));
    });
  });

  describe('ackMany: many acks, one transaction, stale leases reported', () => {
    it('acks the leases that hold and reports the others as lost, the same objects in input order', async () => {
      await t().publishMany(['a', 'b', 'c'].map((groupId) => ({ groupId, event: groupId })));
      const [a, b, cLease] = await t().claimMany('w', 10, { max: 3 });
      await t().nack(b!);
      const result = await t().ackMany([a!, b!, cLease!, a!]);
      expect(result.acked).toEqual([a, cLease]);
      expect(result.acked[0]).toBe(a);
      expect(result.lost).toEqual([b, a]);
      expect((await t().inspect()).groups.map((g) => g.groupId)).toEqual(['b']);
    });

    it('takes an empty batch', async () => {
      expect(await t().ackMany([])).toEqual({ acked: [], lost: [] });
    });

    it('refuses a malformed lease anywhere in the batch before acking any', async () => {
      await t().publish('g', 1);
      const lease = (await t().claim('w', 1000))!;
      await c.unchangedBy(async () => {
        const error = await t().ackMany([lease, { ...lease, attempt: 0 }]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RangeError);
        expect((error as Error).message).toMatch(/leases\[1\]\.attempt/);
      });
      await c.unchangedBy(() => expect(t().ackMany('nope' as never)).rejects.toBeInstanceOf(TypeError));
    });
  });

  describe('ackAndClaimMany: the acks and the next claims as one step', () => {
    it.skipIf(caps.limits?.roundRobinPerPart)('acks, then claims what claimMany would return right after, groups just acked included', async () => {
      await t().publishMany(['a1', 'b1', 'a2', 'c1'].map((event) => ({ groupId: event[0]!, event })));
      const [a1, b1] = await t().claimMany('w', 1000, { max: 2 });
      await c.tick();
      const result = await t().ackAndClaimMany([a1!, b1!], 'w2', 500, { max: 5 });
      expect(result.acked).toEqual([a1, b1]);
      expect(result.acked[0]).toBe(a1);
      expect(result.lost).toEqual([]);
      // c was never claimed, so it goes first; then a, whose next message is free at once.
      expect(result.claimed.map((l) => [l.groupId, l.event, l.workerId, l.attempt, l.expiresAt])).toEqual([
        ['c', 'c1', 'w2', 1, now() + 500],
        ['a', 'a2', 'w2', 1, now() + 500],
      ]);
      expect(states(await t().inspect())).toEqual([
        ['c', ['leased']],
        ['a', ['leased']],
      ]);
      const last = await t().ackAndClaimMany(result.claimed, 'w2', 500, { max: 5 });
      expect(last).toEqual({ acked: result.claimed, lost: [], claimed: [] });
      expect((await t().inspect()).groups).toEqual([]);
    });

    it('reports a lease that no longer holds its message as lost and claims all the same', async () => {
      await t().publish('g', 'job');
      const stale = (await t().claim('w', 1000))!;
      await t().nack(stale);
      const result = await t().ackAndClaimMany([stale], 'w', 1000, { max: 3 });
      expect(result.acked).toEqual([]);
      expect(result.lost[0]).toBe(stale);
      expect(result.claimed.map((l) => [l.event, l.attempt])).toEqual([['job', 2]]);
    });

    it('sorts a lease given twice, a copy and a stale lease in input order, as the same objects, and claims all the same', async () => {
      await t().publishMany(['a1', 'b1', 'c1', 'a2'].map((event) => ({ groupId: event[0]!, event })));
      const [a, b, cLease] = await t().claimMany('w', 1000, { max: 3 });
      await t().nack(b!);
      const copy = { ...cLease! };
      // Only the first of two leases that fence alike can ack; the other is lost.
      const result = await t().ackAndClaimMany([cLease!, b!, a!, a!, copy], 'w2', 500, { max: 1000 });
      expect(result.acked).toEqual([cLease, a]);
      expect(result.acked[0]).toBe(cLease);
      expect(result.acked[1]).toBe(a);
      expect(result.lost).toHaveLength(3);
      expect(result.lost[0]).toBe(b);
      expect(result.lost[1]).toBe(a);
      expect(result.lost[2]).toBe(copy);
      // a's next message, then the nacked b1 once more: in round-robin order, by the new worker.
      expect(result.claimed.map((l) => [l.groupId, l.event, l.workerId, l.attempt])).toEqual([
        ['a', 'a2', 'w2', 1],
        ['b', 'b1', 'w2', 2],
      ]);
      expect(states(await t().inspect())).toEqual([
        ['a', ['leased']],
        ['b', ['leased']],
      ]);
    });

    it('is claimMany when given no leases, and applies the priority floor', async () => {
      await t().publish('low', 'x');
      await t().publish('high', 'y', { priority: 3 });
      expect(events((await t().ackAndClaimMany([], 'w', 1000, { max: 4, minPriority: 3 })).claimed)).toEqual(['y']);
      expect(await t().ackAndClaimMany([], 'w', 1000, { max: 4, minPriority: 3 })).toEqual({ acked: [], lost: [], claimed: [] });
    });

    it('checks every argument before acking anything', async () => {
      await t().publish('g', 1);
      await t().publish('h', 2);
      const lease = (await t().claim('w', 1000))!;
      for (const [call, kind] of [
        [() => t().ackAndClaimMany([lease], 'w', 1000, { max: 0 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 1000, { max: 1001 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 1000, { max: 1.5 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 1000, { max: 1, minPriority: -1 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 0, { max: 1 }), RangeError],
        [() => t().ackAndClaimMany([lease], '', 1000, { max: 1 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 1000, { max: 1, minPriority: 9 }), RangeError],
        [() => t().ackAndClaimMany([lease], 'w', 1000, undefined as never), TypeError],
        [() => t().ackAndClaimMany([lease, { ...lease, seq: -1 }], 'w', 1000, { max: 1 }), RangeError],
        [() => t().ackAndClaimMany('nope' as never, 'w', 1000, { max: 1 }), TypeError],
      ] as const) {
        await c.unchangedBy(() => expect(call()).rejects.toBeInstanceOf(kind));
      }
      const error = await t().ackAndClaimMany([lease, { ...lease, attempt: 0 }], 'w', 1000, { max: 1 }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/leases\[1\]\.attempt/);
      expect((await t().ackAndClaimMany([lease], 'w', 1000, { max: 1 })).acked).toEqual([lease]);
    });
  });

  describe('delayed publish', () => {
    it('holds a delayed message through publish time + delayMs, then delivers it', async () => {
      const start = now();
      await t().publish('g', 'later', { delayMs: 100 });
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(100);
      expect(now()).toBe(start + 100);
      expect(await t().claim('w', 1000)).toBeNull(); // inclusive, as a park
      await c.tick(1);
      expect((await t().claim('w', 1000))?.event).toBe('later');
    });

    it('treats delayMs 0 as no delay', async () => {
      await t().publish('g', 'now', { delayMs: 0 });
      expect((await t().claim('w', 1000))?.event).toBe('now');
    });

    it('keeps FIFO: a delayed head holds its group, and other groups go on', async () => {
      await t().publishMany([
        { groupId: 'g', event: 'delayed head', options: { delayMs: 50 } },
        { groupId: 'g', event: 'behind it' },
        { groupId: 'other', event: 'free' },
      ]);
      expect(events(await t().claimMany('w', 1000, { max: 5 }))).toEqual(['free']);
      await c.tick(51);
      const head = (await t().claim('w', 1000))!;
      expect(head.event).toBe('delayed head');
      await t().ack(head);
      expect((await t().claim('w', 1000))?.event).toBe('behind it');
    });

    it('makes a delayed message behind the head wait for its own time once it is the head', async () => {
      await t().publish('g', 'first');
      await t().publish('g', 'second', { delayMs: 100 });
      await t().ack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(101);
      expect((await t().claim('w', 1000))?.event).toBe('second');
    });

    it('delivers a message behind the head at once if its delay passed while it waited', async () => {
      await t().publish('g', 'first');
      await t().publish('g', 'second', { delayMs: 10 });
      const first = (await t().claim('w', 1000))!;
      await c.tick(50);
      await t().ack(first);
      expect((await t().claim('w', 1000))?.event).toBe('second');
    });

    it("shows a delayed message as 'delayed' until its time, at the head or further back", async () => {
      await t().publish('g', 'head', { delayMs: 20 });
      await t().publish('g', 'back', { delayMs: 40 });
      const start = now();
      let snapshot = await t().inspect();
      expect(snapshot.groups[0]!.inFlight).toBe(true);
      expect(snapshot.groups[0]!.messages.map((m) => [m.state, m.expiresAt, m.attempt, m.holder])).toEqual([
        ['delayed', start + 20, 0, null],
        ['delayed', start + 40, 0, null],
      ]);
      await c.tick(30);
      snapshot = await t().inspect();
      expect(states(snapshot)).toEqual([['g', ['ready', 'delayed']]]);
      expect(snapshot.groups[0]!.messages[0]!.expiresAt).toBeNull();
    });

    it('lets a keyed duplicate of a delayed message return the queued seq without a new delay', async () => {
      const seq = await t().publish('g', 'x', { key: 'k', delayMs: 10 });
      expect(await t().publish('g', 'y', { key: 'k' })).toBe(seq);
      await c.tick(11);
      expect((await t().claim('w', 1000))?.event).toBe('x');
    });
  });

  describe('stats', () => {
    it('counts nothing in an empty queue', async () => {
      expect(await t().stats()).toEqual({ queued: 0, groups: 0, ready: 0, leased: 0, waiting: 0, dead: 0, held: 0, blocked: 0, paused: false, pausedGroups: 0, nextReadyAt: null });
    });

    it('counts messages and groups by what a claim could do with them now', async () => {
      await c.open({ maxAttempts: 1 });
      await t().publishMany([
        { groupId: 'leased', event: 1 },
        { groupId: 'leased', event: 2 },
        { groupId: 'parked', event: 3 },
        { groupId: 'poison', event: 5 },
      ]);
      const start = now();
      const claimed = await t().claimMany('w', 1000, { max: 3 });
      // The three heads in round-robin order; where that order holds only within each part, found by group.
      const [parked, poison] = caps.limits?.roundRobinPerPart ? ['parked', 'poison'].map((g) => claimed.find((l) => l.groupId === g)) : claimed.slice(1);
      await t().nack(parked!, 300);
      await t().nack(poison!); // free, but delivered maxAttempts times: the next claim that reaches it dead-letters it
      await t().publish('ready', 4);
      await t().publish('delayed', 6, { delayMs: 200 });
      await t().publish('poison', 7);
      await c.tick();
      expect(await t().stats()).toEqual({ queued: 7, groups: 5, ready: 2, leased: 1, waiting: 2, dead: 0, held: 0, blocked: 0, paused: false, pausedGroups: 0, nextReadyAt: start + 201 });
      const next = events(await t().claimMany('w', 1000, { max: 5 }));
      expect(caps.limits?.roundRobinPerPart ? next.sort() : next).toEqual([4, 7]);
      expect(await t().stats()).toMatchObject({ queued: 6, groups: 5, ready: 0, leased: 3, waiting: 2, dead: 1 });
    });

    it('counts a head whose lease ran out as ready, and says when the next hold ends', async () => {
      await t().publish('g', 1);
      const lease = (await t().claim('w', 100))!;
      await t().publish('later', 2, { delayMs: 500 });
      expect((await t().stats()).nextReadyAt).toBe(lease.expiresAt + 1);
      await c.tick(101);
      expect(await t().stats()).toMatchObject({ ready: 1, leased: 0, waiting: 1, nextReadyAt: now() - 101 + 500 + 1 });
    });
  });

  describe('cancel', () => {
    it('removes a ready head; its group serves the next message, and a second cancel finds nothing', async () => {
      const [first] = await t().publishMany([{ groupId: 'g', event: 'a' }, { groupId: 'g', event: 'b' }]);
      expect(await t().cancel(first!)).toBe(true);
      expect(await t().cancel(first!)).toBe(false);
      expect((await t().claim('w', 1000))?.event).toBe('b');
    });

    it('removes a message from behind the head and leaves the rest in order', async () => {
      const seqs = await t().publishMany(['a', 'b', 'c'].map((event) => ({ groupId: 'g', event })));
      const head = (await t().claim('w', 1000))!;
      expect(await t().cancel(seqs[1]!)).toBe(true);
      expect((await t().inspect()).groups[0]!.messages.map((m) => [m.event, m.state])).toEqual([
        ['a', 'leased'],
        ['c', 'ready'],
      ]);
      await t().ack(head); // the head's lease was not disturbed
      expect((await t().claim('w', 1000))?.event).toBe('c');
    });

    it('refuses to cancel a message under a live lease, changing nothing', async () => {
      const seq = await t().publish('g', 'busy');
      await t().claim('w', 1000);
      await c.unchangedBy(async () => {
        const error = await t().cancel(seq).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LeaseholdError);
        expect(error).toMatchObject({ code: 'MESSAGE_LEASED' });
      });
    });

    it('cancels a head whose lease ran out; the late holder then loses it', async () => {
      const seq = await t().publish('g', 'slow');
      const lease = (await t().claim('w', 10))!;
      await c.tick(11);
      expect(await t().cancel(seq)).toBe(true);
      await c.expectLost(t().ack(lease), lease);
      expect(await t().stats()).toMatchObject({ queued: 0, groups: 0 });
    });

    it('cancels a parked or delayed head, freeing the group for its next message', async () => {
      const [parkedSeq] = await t().publishMany([{ groupId: 'p', event: 'parked' }, { groupId: 'p', event: 'after park' }]);
      await t().nack((await t().claim('w', 1000))!, 10_000);
      const delayedSeq = await t().publish('d', 'delayed', { delayMs: 10_000 });
      await t().publish('d', 'after delay');
      expect(await t().cancel(parkedSeq!)).toBe(true);
      expect(await t().cancel(delayedSeq)).toBe(true);
      expect(events(await t().claimMany('w', 1000, { max: 5 })).sort()).toEqual(['after delay', 'after park']);
    });

    it('makes the next head wait out its own delay after the head is cancelled', async () => {
      const first = await t().publish('g', 'a');
      await t().publish('g', 'b', { delayMs: 100 });
      expect(await t().cancel(first)).toBe(true);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(101);
      expect((await t().claim('w', 1000))?.event).toBe('b');
    });

    it('finds nothing for an unknown seq or a dead letter, and frees a cancelled key', async () => {
      await c.open({ maxAttempts: 1 });
      const seq = await t().publish('g', 'x', { key: 'k' });
      expect(await t().cancel(seq + 100)).toBe(false);
      expect(await t().cancel(seq)).toBe(true);
      expect(await t().publish('g', 'y', { key: 'k' })).not.toBe(seq);
      await t().nack((await t().claim('w', 1000))!);
      await c.tick();
      expect(await t().claim('w', 1000)).toBeNull();
      const [dead] = await t().deadLetters();
      expect(await t().cancel(dead!.seq)).toBe(false);
      expect(await t().deadLetters()).toHaveLength(1);
    });

    it('refuses a seq that is not a positive integer', async () => {
      await expect(t().cancel(0)).rejects.toBeInstanceOf(RangeError);
      await expect(t().cancel('1' as never)).rejects.toBeInstanceOf(TypeError);
    });
  });

  describe('named queues', () => {
    it.skipIf(!caps.namedQueues)('keeps queues in one database independent: groups, keys, round-robin, dead letters, stats', async () => {
      const emails = await c.h().queue!('emails');
      await t().publishMany([{ groupId: 'g', event: 'default-1', options: { key: 'k' } }, { groupId: 'h', event: 'default-2' }]);
      await emails.publish('g', 'email-1', { key: 'k' });
      expect((await emails.inspect()).groups.map((g) => g.messages.map((m) => m.event))).toEqual([['email-1']]);
      expect(await emails.stats()).toMatchObject({ queued: 1, groups: 1 });
      expect(await t().stats()).toMatchObject({ queued: 2, groups: 2 });
      const lease = (await emails.claim('w', 1000))!;
      expect(lease.event).toBe('email-1');
      await expect(t().ack(lease)).rejects.toBeInstanceOf(RangeError); // another queue's lease
      expect((await t().claim('w', 1000))?.event).toBe('default-1'); // the default queue's own round-robin
      await emails.ack(lease);
      expect(await emails.stats()).toMatchObject({ queued: 0, groups: 0 });
      expect(await t().stats()).toMatchObject({ queued: 2 });
    });

    it.skipIf(!caps.namedQueues)('refuses a lease of another queue, even one whose group, seq and attempt match a lease here, and changes nothing', async () => {
      const other = await c.h().queue!('other');
      // Both queues number from 1: the same group, seq, attempt and worker in each.
      await t().publish('g', 'mine');
      await other.publish('g', 'theirs');
      const mine = (await t().claim('w', 1000))!;
      const theirs = (await other.claim('w', 1000))!;
      expect([theirs.seq, theirs.attempt, theirs.groupId]).toEqual([mine.seq, mine.attempt, mine.groupId]);
      expect(theirs.queue).not.toBe(mine.queue);
      for (const wrong of [
        () => t().ack(theirs),
        () => t().nack(theirs, 10),
        () => t().extend(theirs, 5000),
        () => t().ackAndClaim(theirs, 'w', 1000),
        () => t().ackMany([mine, theirs]),
        () => t().ackAndClaimMany([theirs], 'w', 1000, { max: 1 }),
      ]) {
        await c.unchangedBy(async () => {
          await expect(wrong()).rejects.toThrow(RangeError);
          await expect(wrong()).rejects.toThrow(/issued by queue "other/);
        });
      }
      await t().ack(mine);
      await other.ack(theirs);
    });

    it.skipIf(!caps.namedQueues)('sends change notices only to the queue that changed', async () => {
      const other = await c.h().queue!('other');
      const mine = t();
      if (!isChangeNotifier(other) || !isChangeNotifier(mine)) throw new Error('a backend with named queues must send change notices');
      let heard = 0;
      let heardOther = 0;
      const stopA = mine.onChange(() => heard++);
      const stopB = other.onChange(() => heardOther++);
      for (let i = 0; i < 3; i++) await other.publish('g', i);
      await expect.poll(() => heardOther).toBeGreaterThan(0);
      await t().publish('mine', 1); // notices arrive in order: once this one is heard, the other's would have been
      await expect.poll(() => heard).toBeGreaterThan(0);
      // A notice is a hint and may come twice (a LISTEN set up while the publish ran: the backend
      // tells its listeners itself and LISTEN may deliver it too); the other queue's three would
      // make it four or more.
      expect(heard).toBeLessThanOrEqual(2);
      stopA();
      stopB();
    });
  });
}
