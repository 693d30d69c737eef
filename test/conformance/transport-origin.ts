/**
 * The loss-detection and delivery-id part of the transport conformance suite: every lease carries
 * its database's origin, its message's gap-free counter, the queue's low-water mark, its content's
 * revision and the delivery id built from them (contract.ts, `Lease`).
 * Called by `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import type { Lease, Transport, TransportOptions } from '../../src/transport/contract.js';
import type { TransportCaps, TransportHarness } from './transport.js';

export interface OriginSuiteContext {
  h(): TransportHarness;
  t(): Transport<any>;
  open(options?: Omit<TransportOptions, 'clock'>): Promise<void>;
  tick(ms?: number): unknown;
}

/** The counters of `leases` per origin and queue, each list sorted: what a server would record. */
const counters = (leases: readonly Lease[]) => {
  const seen = new Map<string, number[]>();
  for (const { origin, queue, counter } of leases) {
    const key = `${origin}/${queue}`;
    seen.set(key, [...(seen.get(key) ?? []), counter!].sort((a, b) => a - b));
  }
  return [...seen.values()];
};
const oneToN = (list: readonly number[]) => list.map((_, i) => i + 1);

export function describeOrigin(caps: TransportCaps, c: OriginSuiteContext): void {
  const t = () => c.t();
  /** Claims and acks everything claimable now, returning the leases in claim order. */
  const drain = async () => {
    const leases: Lease[] = [];
    for (let lease = await t().claim('w', 1000); lease; lease = await t().claim('w', 1000)) {
      leases.push(lease);
      await t().ack(lease);
    }
    return leases;
  };
  // Each part of a spreadTransport numbers its own messages: the exact figures below assume one.
  const onePart = !caps.limits?.partQueues && !caps.limits?.roundRobinPerPart;

  describe('loss detection: origin, a gap-free counter and the low-water mark', () => {
    it('gives every lease its database origin, 32 hex digits, the same for every message', async () => {
      await t().publish('a', 1);
      await t().publish('b', 2);
      const leases = await drain();
      expect(leases.map((l) => l.origin)).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), leases[0]!.origin]);
      if (onePart) expect(leases.map((l) => [l.counter, l.lowWater])).toEqual([[1, 1], [2, 2]]);
    });

    it('gives a new database a new origin', async () => {
      await t().publish('a', 1);
      const [first] = await drain();
      await c.open();
      await t().publish('a', 1);
      const [second] = await drain();
      expect(second!.origin).not.toBe(first!.origin);
      expect(second!.counter).toBe(1);
    });

    it.skipIf(!caps.persistent)('keeps the origin and goes on counting when the database is opened again', async () => {
      await t().publish('a', 1);
      const [first] = await drain();
      await t().publish('a', 2);
      const again = await c.h().reopen!();
      const lease = (await again.claim('w', 1000))!;
      expect([lease.origin, lease.counter]).toEqual([first!.origin, 2]);
    });

    it.skipIf(!caps.namedQueues)('shares the origin between the queues of one database, each counting its own', async () => {
      const other = await c.h().queue!('other');
      await t().publish('a', 1);
      await other.publish('a', 1);
      await other.publish('b', 2);
      const mine = (await t().claim('w', 1000))!;
      const theirs = [(await other.claim('w', 1000))!, (await other.claim('w', 1000))!];
      expect(theirs.map((l) => l.origin)).toEqual([mine.origin, mine.origin]);
      expect([mine.counter, ...theirs.map((l) => l.counter)]).toEqual([1, 1, 2]);
    });

    it('numbers a publishMany without a gap, in the order of its items, and goes on after it', async () => {
      const groups = ['a', 'b', 'a', 'c', 'b', 'd', 'a'];
      await t().publishMany(groups.map((groupId, i) => ({ groupId, event: i })));
      await t().publish('e', 'after');
      const leases = await drain();
      for (const list of counters(leases)) expect(list).toEqual(oneToN(list));
      if (onePart) expect(leases.map((l) => [l.event, l.counter])).toEqual(expect.arrayContaining([...groups.map((_, i) => [i, i + 1]), ['after', 8]]));
    });

    it('spends no number on a skipped duplicate, keeps it on a replace or merge in place, takes the next when a leased one is followed', async () => {
      await t().publish('note', { text: 'a' }, { key: 'k' });
      await t().publish('note', { text: 'b' }, { key: 'k' }); // skip
      await t().publish('note', { text: 'c' }, { key: 'k', onDuplicate: 'replace' });
      await t().publish('note', { tag: 1 }, { key: 'k', onDuplicate: 'merge' });
      const leased = (await t().claim('w', 1000))!;
      expect([leased.event, leased.counter]).toEqual([{ text: 'c', tag: 1 }, 1]);
      await t().publish('note', { text: 'd' }, { key: 'k', onDuplicate: 'replace' }); // behind the live lease
      await t().publish('other', 'o');
      await t().ack(leased);
      const rest = (await drain()).sort((a, b) => a.counter! - b.counter!);
      if (onePart) expect(rest.map((l) => [l.event, l.counter])).toEqual([[{ text: 'd' }, 2], ['o', 3]]);
      for (const list of counters([leased, ...rest])) expect(list).toEqual(oneToN(list));
    });

    it('spends no number on a publish that fails and is rolled back', async () => {
      await t().publish('a', 'first');
      await expect(t().publishMany([{ groupId: 'b', event: 'kept?' }, { groupId: 'c', event: 'bad', options: { after: [999] } }])).rejects.toThrow(RangeError);
      await expect(t().publish('d', 'bad', { after: [999] })).rejects.toThrow(RangeError);
      await t().publish('e', 'second');
      const leases = await drain();
      expect(leases.map((l) => l.event)).toEqual(['first', 'second']);
      for (const list of counters(leases)) expect(list).toEqual(oneToN(list));
    });

    it('numbers concurrent publishes without a gap or a repeat', async () => {
      await Promise.all(Array.from({ length: 24 }, (_, i) => t().publish(`g${i % 5}`, i)));
      await t().publishMany(Array.from({ length: 6 }, (_, i) => ({ groupId: `h${i}`, event: 100 + i })));
      const leases = await drain();
      expect(leases).toHaveLength(30);
      for (const list of counters(leases)) expect(list).toEqual(oneToN(list));
    });

    it.skipIf(!onePart)('marks the lowest number still queued: cancelled, acked and dead-lettered numbers fall below it, a redriven one comes back', async () => {
      await c.open({ maxAttempts: 1 });
      await t().publish('a', 1); // counter 1
      await t().publish('b', 2); // 2
      const cancelled = await t().publish('c', 3); // 3
      await t().publish('a', 4); // 4
      await t().publish('d', 5); // 5
      const one = (await t().claim('w', 1000))!;
      const two = (await t().claim('w', 1000))!;
      expect([one.counter, one.lowWater, two.counter, two.lowWater]).toEqual([1, 1, 2, 1]);
      await t().ack(two);
      expect(await t().cancel(cancelled)).toBe(true);
      await t().ack(one);
      const five = (await t().claim('w', 1000))!; // d, never claimed, comes before a
      expect([five.counter, five.lowWater]).toEqual([5, 4]);
      await t().ack(five);
      const four = (await t().claim('w', 1000))!;
      expect([four.counter, four.lowWater]).toEqual([4, 4]);
      await t().reject(four, 'refused'); // a dead letter: out of the queue
      await t().publish('e', 6);
      const six = (await t().claim('w', 1000))!;
      expect([six.counter, six.lowWater]).toEqual([6, 6]);
      await t().ack(six);
      await t().redrive(four.seq);
      const again = (await t().claim('w', 1000))!;
      expect([again.event, again.counter, again.lowWater]).toEqual([4, 4, 4]);
      expect(again.origin).toBe(four.origin);
    });

    it.skipIf(!onePart)('counts a held dead letter out of the queue and its redrive back to the head under its number', async () => {
      await c.open({ maxAttempts: 1, onDeadLetter: 'hold' });
      await t().publish('note', 'create'); // 1
      await t().publish('note', 'edit'); // 2
      await t().publish('other', 'x'); // 3
      const create = (await t().claim('w', 1000))!;
      await t().reject(create);
      const x = (await t().claim('w', 1000))!;
      expect([x.counter, x.lowWater]).toEqual([3, 2]); // the held edit is still queued
      await t().ack(x);
      await t().redrive(create.seq);
      const back = (await t().claim('w', 1000))!;
      expect([back.event, back.counter, back.lowWater]).toEqual(['create', 1, 1]);
    });

    it.skipIf(!onePart)('gives every lease of a batch the mark after its last claim, past the heads it dead-lettered', async () => {
      await c.open({ maxAttempts: 1 });
      await t().publish('a', 1); // 1: delivered once, then dead-lettered by the batch
      await t().publish('b', 2); // 2
      await t().publish('c', 3); // 3
      await t().nack((await t().claim('w', 1000))!);
      const batch = await t().claimMany('w', 1000, { max: 5 });
      expect(batch.map((l) => [l.counter, l.lowWater])).toEqual([[2, 2], [3, 2]]);
      expect((await t().deadLetters()).map((d) => d.event)).toEqual([1]);
    });

    it('keeps origin, counter and low-water mark on every delivery of a message and through extend', async () => {
      await t().publish('a', 1);
      await t().publish('b', 2);
      const first = (await t().claim('w', 1000))!;
      const extended = await t().extend(first, 5000);
      expect([extended.origin, extended.counter, extended.lowWater]).toEqual([first.origin, first.counter, first.lowWater]);
      await t().nack(first);
      const leases = [(await t().claim('w', 1000))!, (await t().claim('w', 1000))!];
      const again = leases.find((l) => l.seq === first.seq)!;
      expect([again.origin, again.counter, again.attempt]).toEqual([first.origin, first.counter, 2]);
    });
  });

  describe('the delivery id: the same for the same content, new when a replace or merge changed it', () => {
    const idOf = (l: Lease) => `${l.origin}/${encodeURIComponent(l.queue!)}/${l.counter}/${l.revision}`;

    it('is origin/queue/counter/revision, revision 0 as published, on every delivery and through extend', async () => {
      await t().publish('a', { text: 'v' });
      const first = (await t().claim('w', 1000))!;
      expect(first.revision).toBe(0);
      expect(first.deliveryId).toBe(idOf(first));
      expect((await t().extend(first, 5000)).deliveryId).toBe(first.deliveryId);
      await t().nack(first);
      const second = (await t().claim('w', 1000))!;
      await t().release(second);
      const third = (await t().claim('w', 1000))!;
      c.tick(1001);
      const [fourth] = await t().claimMany('w', 1000, { max: 2 });
      expect([second, third, fourth].map((l) => l!.deliveryId)).toEqual([first.deliveryId, first.deliveryId, first.deliveryId]);
      expect([second.attempt, third.attempt, fourth!.attempt]).toEqual([2, 2, 3]);
    });

    it('changes when a merge changes a message whose answer was lost, though seq, counter and attempt stay', async () => {
      // The server applied "v" and its answer was lost (RetryLater: a release); the user typed on.
      await t().publish('note', { text: 'v' }, { key: 'note' });
      const sent = (await t().claim('w', 1000))!;
      await t().release(sent);
      await t().publish('note', { text: 'v then v2' }, { key: 'note', onDuplicate: 'merge' });
      const again = (await t().claim('w', 1000))!;
      expect([again.seq, again.counter, again.attempt]).toEqual([sent.seq, sent.counter, sent.attempt]);
      expect(again.event).toEqual({ text: 'v then v2' });
      expect(again.revision).toBe(1);
      expect(again.deliveryId).not.toBe(sent.deliveryId);
      expect(again.deliveryId).toBe(idOf(again));
    });

    it('keeps the revision when a replace or merge leaves the content as it was, member for member', async () => {
      await t().publish('note', { text: 'v', tags: ['a'] }, { key: 'note' });
      await t().publish('note', { tags: ['a'], text: 'v' }, { key: 'note', onDuplicate: 'replace' });
      await t().publish('note', { text: 'v' }, { key: 'note', onDuplicate: 'merge' });
      await t().publish('note', { gone: null }, { key: 'note', onDuplicate: 'merge' });
      expect((await t().claim('w', 1000))!.revision).toBe(0);
    });

    it('counts each change: two merges and a replace are revision 3, and a skip changes nothing', async () => {
      await t().publish('note', { text: 'a' }, { key: 'k' });
      await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'merge' });
      await t().publish('note', { text: 'c' }, { key: 'k' }); // skip
      await t().publish('note', { tag: 1 }, { key: 'k', onDuplicate: 'merge' });
      await t().publish('note', { text: 'd' }, { key: 'k', onDuplicate: 'replace' });
      const lease = (await t().claim('w', 1000))!;
      expect([lease.event, lease.revision]).toEqual([{ text: 'd' }, 3]);
    });

    it('gives a message appended behind a live lease its own number at revision 0', async () => {
      await t().publish('note', { text: 'a' }, { key: 'k' });
      const leased = (await t().claim('w', 1000))!;
      await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'merge' });
      await t().ack(leased);
      const next = (await t().claim('w', 1000))!;
      expect([next.event, next.revision]).toEqual([{ text: 'b' }, 0]);
      expect(next.deliveryId).not.toBe(leased.deliveryId);
    });

    it('changes when a merge lands on a head whose lease ran out: the late holder worked on the old content', async () => {
      await t().publish('note', { text: 'a' }, { key: 'k' });
      const late = (await t().claim('w', 1000))!;
      c.tick(1001);
      await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'merge' });
      const next = (await t().claim('w2', 1000))!;
      expect([next.seq, next.event, next.revision]).toEqual([late.seq, { text: 'b' }, 1]);
      expect(next.deliveryId).not.toBe(late.deliveryId);
    });

    it.skipIf(!onePart)('is kept by a dead letter and its redrive, to the head of a held group or to the tail', async () => {
      await c.open({ maxAttempts: 1, onDeadLetter: 'hold' });
      await t().publish('note', { text: 'a' }, { key: 'k' });
      await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'merge' });
      const refused = (await t().claim('w', 1000))!;
      await t().reject(refused, 'no');
      await t().redrive(refused.seq);
      const back = (await t().claim('w', 1000))!;
      expect([back.seq, back.revision, back.deliveryId]).toEqual([refused.seq, 1, refused.deliveryId]);

      await c.open({ maxAttempts: 1 });
      await t().publish('note', { text: 'a' }, { key: 'k' });
      await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'replace' });
      await t().publish('note', 'behind');
      const dead = (await t().claim('w', 1000))!;
      await t().reject(dead, 'no');
      const newSeq = await t().redrive(dead.seq);
      await t().ack((await t().claim('w', 1000))!); // 'behind'
      const tail = (await t().claim('w', 1000))!;
      expect([tail.seq, tail.revision, tail.deliveryId]).toEqual([newSeq, 1, dead.deliveryId]);
    });

    it('is carried by every lease of a batch and of an ack-and-claim', async () => {
      await t().publishMany([{ groupId: 'a', event: 1 }, { groupId: 'b', event: 2 }, { groupId: 'c', event: 3 }]);
      const [one] = await t().claimMany('w', 1000, { max: 1 });
      const two = (await t().ackAndClaim(one!, 'w', 1000))!;
      const { claimed } = await t().ackAndClaimMany([two], 'w', 1000, { max: 5 });
      for (const lease of [one!, two, ...claimed]) expect(lease.deliveryId).toBe(idOf(lease));
      expect(new Set([one!, two, ...claimed].map((l) => l.deliveryId)).size).toBe(3);
    });

    it.skipIf(!caps.namedQueues)('percent-encodes the queue name, so the id splits on / into its four parts', async () => {
      const other = await c.h().queue!('notes/v2 é');
      await other.publish('a', 1);
      const lease = (await other.claim('w', 1000))!;
      // A part of a spreadTransport names its own queue after the one it spreads.
      expect(lease.deliveryId).toBe(`${lease.origin}/${encodeURIComponent(lease.queue!)}/1/0`);
      expect(lease.deliveryId!.split('/')[1]).toMatch(/^notes%2Fv2%20%C3%A9/);
    });
  });
}
