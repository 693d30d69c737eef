/**
 * The offline-first part of the transport conformance suite: a dead letter that holds its group,
 * reject, release (a retry that spends no attempt) and discard. Called by `describeTransport`,
 * so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import { LeaseholdError } from '../../src/errors.js';
import type { Lease, Transport, TransportOptions, TransportSnapshot } from '../../src/transport/contract.js';
import type { TransportCaps, TransportHarness } from './transport.js';

export interface OutboxSuiteContext {
  h(): TransportHarness;
  t(): Transport<any>;
  open(options?: Omit<TransportOptions, 'clock'>): Promise<void>;
  tick(ms?: number): unknown;
  unchangedBy(action: () => Promise<unknown>): Promise<void>;
  expectLost(promise: Promise<unknown>, lease: Lease): Promise<void>;
}

const states = (snapshot: TransportSnapshot) => snapshot.groups.map((g) => [g.groupId, g.heldBy !== null, g.messages.map((m) => [m.event, m.state])]);

export function describeOutbox(caps: TransportCaps, c: OutboxSuiteContext): void {
  const t = () => c.t();
  const now = () => c.h().clock.now();
  /** Claims the next message and fails it (nack) until the claim after that dead-letters it. */
  const exhaust = async (max: number) => {
    for (let i = 0; i < max; i++) {
      await t().nack((await t().claim('w', 1000))!);
      await c.tick(1);
    }
  };
  const expectNotFound = async (promise: Promise<unknown>) => {
    const error = await promise.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseholdError);
    expect(error).toMatchObject({ code: 'NOT_FOUND' });
  };
  const countsAddUp = async () => {
    const s = await t().stats();
    expect(s.ready + s.leased + s.waiting + s.held).toBe(s.groups);
    return s;
  };

  describe("onDeadLetter: 'hold' — a dead letter holds its group", () => {
    const openHold = () => c.open({ maxAttempts: 2, onDeadLetter: 'hold' });

    it('delivers nothing more of the group, publishes included, while the other groups go on', async () => {
      await openHold();
      const create = await t().publish('note', 'create');
      await t().publish('note', 'update');
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull(); // dead-letters `create` and holds `note`
      await t().publish('other', 'o1');
      const other = (await t().claim('w', 1000))!;
      expect(other).toMatchObject({ groupId: 'other', event: 'o1' });
      await t().ack(other);
      await t().publish('note', 'delete');
      await c.tick(5000);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().deadLetters()).toEqual([{ seq: create, groupId: 'note', priority: 0, event: 'create', attempt: 2, deadAt: expect.any(Number), reason: null }]);
      const snapshot = await t().inspect();
      expect(states(snapshot)).toEqual([['note', true, [['update', 'held'], ['delete', 'held']]]]);
      expect(snapshot.groups[0]!.heldBy).toBe(create);
      expect(snapshot.groups[0]!.inFlight).toBe(false);
      const s = await countsAddUp();
      expect(s).toMatchObject({ queued: 2, groups: 1, ready: 0, leased: 0, waiting: 0, held: 1, dead: 1, nextReadyAt: null });
    });

    it('redrive puts the dead letter back at the head with its own seq and attempts reset; the group goes on from it', async () => {
      await openHold();
      const create = await t().publish('note', 'create');
      await t().publish('note', 'update');
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().redrive(create)).toBe(create);
      expect(await t().deadLetters()).toEqual([]);
      expect(await countsAddUp()).toMatchObject({ queued: 2, groups: 1, ready: 1, held: 0, dead: 0 });
      const again = (await t().claim('w', 1000))!;
      expect(again).toMatchObject({ seq: create, event: 'create', attempt: 1 });
      await t().ack(again);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'update', attempt: 1 });
      // A seq handed out again is never reused by a publish.
      expect(await t().publish('x', 'new')).toBeGreaterThan(create + 1);
    });

    it('discard deletes the dead letter and the group goes on with its next message', async () => {
      await openHold();
      const create = await t().publish('note', 'create');
      await t().publish('note', 'update');
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull();
      await t().discard(create);
      expect(await t().deadLetters()).toEqual([]);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'update', attempt: 1 });
      await expectNotFound(t().discard(create));
    });

    it('keeps a group held with nothing behind its dead letter, so a later publish waits too', async () => {
      await openHold();
      const only = await t().publish('g', 'first');
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await countsAddUp()).toMatchObject({ queued: 0, groups: 1, held: 1 });
      expect(states(await t().inspect())).toEqual([['g', true, []]]);
      const later = await t().publish('g', 'later');
      expect(await t().claim('w', 1000)).toBeNull();
      await t().redrive(only);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: only, event: 'first' });
      expect((await t().inspect()).groups[0]!.messages.map((m) => m.seq)).toEqual([only, later]);
    });

    it('discarding the dead letter of an empty held group removes the group', async () => {
      await openHold();
      const seq = await t().publish('g', 'only');
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull();
      await t().discard(seq);
      expect(await countsAddUp()).toMatchObject({ queued: 0, groups: 0, held: 0, dead: 0 });
      expect((await t().inspect()).groups).toEqual([]);
    });

    it('reject holds the group at once, whatever attempts remain, and keeps the reason', async () => {
      await openHold();
      const create = await t().publish('note', 'create');
      await t().publish('note', 'update');
      const lease = (await t().claim('w', 1000))!;
      await t().reject(lease, 'HTTP 422: title is required');
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().deadLetters()).toEqual([{ seq: create, groupId: 'note', priority: 0, event: 'create', attempt: 1, deadAt: now(), reason: 'HTTP 422: title is required' }]);
      expect(await countsAddUp()).toMatchObject({ held: 1, queued: 1 });
      await c.expectLost(t().ack(lease), lease);
    });

    it('a cancel in a held group leaves it held', async () => {
      await openHold();
      const create = await t().publish('note', 'create');
      const update = await t().publish('note', 'update');
      await t().publish('note', 'delete');
      await t().reject((await t().claim('w', 1000))!);
      expect(await t().cancel(update)).toBe(true);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(states(await t().inspect())).toEqual([['note', true, [['delete', 'held']]]]);
      await t().discard(create);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'delete' });
    });

    it.skipIf(!caps.persistent)('keeps the hold across a reopen', async () => {
      await openHold();
      const seq = await t().publish('g', 'a');
      await t().publish('g', 'b');
      await t().reject((await t().claim('w', 1000))!, 'no');
      c.h().transport = await c.h().reopen!();
      expect(await c.h().transport.claim('w', 1000)).toBeNull();
      expect(await c.h().transport.stats()).toMatchObject({ held: 1, queued: 1 });
      expect(await c.h().transport.redrive(seq)).toBe(seq);
      expect(await c.h().transport.claim('w', 1000)).toMatchObject({ seq, event: 'a' });
    });
  });

  describe("onDeadLetter: 'continue' (the default)", () => {
    it('reject dead-letters the message with its reason and the group goes on', async () => {
      const first = await t().publish('g', 'a');
      await t().publish('g', 'b');
      await t().reject((await t().claim('w', 1000))!, 'HTTP 400');
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'b', attempt: 1 });
      expect(await t().deadLetters()).toEqual([{ seq: first, groupId: 'g', priority: 0, event: 'a', attempt: 1, deadAt: now(), reason: 'HTTP 400' }]);
      expect((await t().stats()).held).toBe(0);
    });

    it('a reject without a reason keeps none; a redrive still goes to the tail with a new seq', async () => {
      const seq = await t().publish('g', 'a');
      await t().reject((await t().claim('w', 1000))!);
      expect((await t().deadLetters())[0]).toMatchObject({ seq, reason: null, attempt: 1 });
      const again = await t().redrive(seq);
      expect(again).toBeGreaterThan(seq);
    });

    it('discard deletes a dead letter for good', async () => {
      const seq = await t().publish('g', 'a');
      await t().publish('g', 'b');
      await t().reject((await t().claim('w', 1000))!);
      await t().discard(seq);
      expect(await t().deadLetters()).toEqual([]);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'b' });
      await expectNotFound(t().discard(seq));
      await expectNotFound(t().redrive(seq));
    });

    it('reject is fenced like ack: a lease that no longer holds is lost and nothing changes', async () => {
      await t().publish('g', 'a');
      const stale = (await t().claim('w1', 10))!;
      await c.tick(11);
      await t().claim('w2', 1000);
      await c.unchangedBy(() => c.expectLost(t().reject(stale, 'late'), stale));
      expect(await t().deadLetters()).toEqual([]);
    });
  });

  describe('release: a retry that spends no attempt', () => {
    it('delivers the message again with the same attempt, and maxAttempts does not count it', async () => {
      await c.open({ maxAttempts: 2 });
      const seq = await t().publish('g', 'job');
      for (let i = 0; i < 5; i++) {
        const lease = (await t().claim('w', 1000))!;
        expect(lease).toMatchObject({ seq, attempt: 1 });
        await t().release(lease);
      }
      await exhaust(2);
      expect(await t().claim('w', 1000)).toBeNull();
      expect((await t().deadLetters())[0]).toMatchObject({ seq, attempt: 2 });
    });

    it('with a delay, parks the message at its group head until the delay has passed', async () => {
      await t().publish('g', 'a');
      await t().publish('g', 'b');
      const lease = (await t().claim('w', 1000))!;
      await t().release(lease, 500);
      await c.tick(500);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().stats()).toMatchObject({ waiting: 1, nextReadyAt: now() + 1 });
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'a', attempt: 1 });
    });

    it('is fenced like ack: the released lease is lost, a stale one too', async () => {
      await t().publish('g', 'a');
      const lease = (await t().claim('w1', 1000))!;
      await t().release(lease);
      await c.expectLost(t().ack(lease), lease);
      await c.expectLost(t().release(lease), lease);
      const next = (await t().claim('w2', 1000))!;
      expect(next.attempt).toBe(lease.attempt);
      await c.unchangedBy(() => c.expectLost(t().release(lease), lease));
    });
  });

  describe('the new arguments are checked before anything changes', () => {
    it('refuses a bad reason, delay, seq or policy', async () => {
      await t().publish('g', 'a');
      const lease = (await t().claim('w', 1000))!;
      for (const [action, type] of [
        [() => t().reject(lease, 5 as never), TypeError],
        [() => t().reject(lease, ''), RangeError],
        [() => t().reject(lease, '\uD800'), RangeError],
        [() => t().release(lease, -1), RangeError],
        [() => t().release(lease, 'soon' as never), TypeError],
        [() => t().discard('1' as never), TypeError],
        [() => t().discard(0), RangeError],
        [() => t().reject({ ...lease, seq: 0 }), RangeError],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
        });
      }
      await t().ack(lease);
      const error = await c.open({ onDeadLetter: 'drop' as never }).then(() => t().stats()).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(RangeError);
      expect(String(error)).toMatch(/onDeadLetter/);
    });
  });
}
