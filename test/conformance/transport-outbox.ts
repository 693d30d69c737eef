/**
 * The offline-first part of the transport conformance suite: a dead letter that holds its group,
 * reject, a nack's reason, release (a retry that spends no attempt), discard, and a keyed publish
 * that replaces or merges the queued message. Called by `describeTransport`,
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
    expect(s.ready + s.leased + s.waiting + s.held + s.blocked).toBe(s.groups);
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

  describe("nack's reason: why a message failed, kept until it dies", () => {
    it('shows the last reason given as lastError, and a nack without one keeps it', async () => {
      await c.open({ maxAttempts: 5 });
      await t().publish('g', 'a');
      await t().publish('g', 'b');
      const lastErrors = async () => (await t().inspect()).groups[0]!.messages.map((m) => m.lastError);
      expect(await lastErrors()).toEqual([null, null]);
      await t().nack((await t().claim('w', 1000))!, 0, 'HTTP 503');
      expect(await lastErrors()).toEqual(['HTTP 503', null]);
      await t().nack((await t().claim('w', 1000))!, 100);
      expect(await lastErrors()).toEqual(['HTTP 503', null]);
      await c.tick(101);
      await t().nack((await t().claim('w', 1000))!, 0, 'ECONNRESET');
      expect(await lastErrors()).toEqual(['ECONNRESET', null]);
      // It leaves with its message: the next head starts with none.
      await t().ack((await t().claim('w', 1000))!);
      expect(await lastErrors()).toEqual([null]);
    });

    it('becomes the reason of a dead letter that ran out of attempts; a redrive starts clean', async () => {
      await c.open({ maxAttempts: 2 });
      const seq = await t().publish('g', 'a');
      await t().nack((await t().claim('w', 1000))!, 0, 'first');
      await t().nack((await t().claim('w', 1000))!, 0, 'second');
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().deadLetters()).toEqual([{ seq, groupId: 'g', priority: 0, event: 'a', attempt: 2, deadAt: now(), reason: 'second' }]);
      const again = await t().redrive(seq);
      const lease = (await t().claim('w', 1000))!;
      expect(lease).toMatchObject({ seq: again, attempt: 1 });
      expect((await t().inspect()).groups[0]!.messages[0]!.lastError).toBeNull();
      // A lease that ran out on the last attempt still dies with the last reason given.
      await t().nack(lease, 0, 'third');
      await t().claim('w', 10);
      await c.tick(11);
      expect(await t().claim('w', 1000)).toBeNull();
      expect((await t().deadLetters())[0]).toMatchObject({ seq: again, attempt: 2, reason: 'third' });
    });

    it("a reject's own reason wins; a reject without one takes the last nack's", async () => {
      await c.open({ maxAttempts: 5 });
      const a = await t().publish('g', 'a');
      const b = await t().publish('g', 'b');
      await t().nack((await t().claim('w', 1000))!, 0, 'HTTP 500');
      await t().reject((await t().claim('w', 1000))!, 'HTTP 422');
      await t().nack((await t().claim('w', 1000))!, 0, 'HTTP 500');
      await t().reject((await t().claim('w', 1000))!);
      expect((await t().deadLetters()).map((d) => [d.seq, d.reason])).toEqual([
        [a, 'HTTP 422'],
        [b, 'HTTP 500'],
      ]);
    });

    it('refuses a bad reason to nack or release before anything changes; a stale one keeps nothing', async () => {
      await t().publish('g', 'a');
      const lease = (await t().claim('w1', 10))!;
      for (const method of ['nack', 'release'] as const) {
        for (const [reason, type] of [
          [5, TypeError],
          ['', RangeError],
          ['\uDC00', RangeError],
        ] as const) {
          await c.unchangedBy(async () => {
            const error = await t()[method](lease, 0, reason as never).then(() => undefined, (e: unknown) => e);
            expect(error, `${method}(${String(reason)})`).toBeInstanceOf(type);
            expect(String(error)).toMatch(/reason/);
          });
        }
      }
      await c.tick(11);
      await t().claim('w2', 1000);
      await c.unchangedBy(() => c.expectLost(t().nack(lease, 0, 'late'), lease));
      await c.unchangedBy(() => c.expectLost(t().release(lease, 0, 'late'), lease));
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

    it("keeps its reason as the message's lastError, as nack does; one without keeps the last", async () => {
      await c.open({ maxAttempts: 2 });
      const seq = await t().publish('g', 'a');
      const lastError = async () => (await t().inspect()).groups[0]!.messages[0]!.lastError;
      await t().release((await t().claim('w', 1000))!, 2000, 'server unreachable');
      expect((await t().inspect()).groups[0]!.messages[0]).toMatchObject({ state: 'delayed', lastError: 'server unreachable', attempt: 0, expiresAt: now() + 2000 });
      await c.tick(2001);
      await t().release((await t().claim('w', 1000))!);
      expect(await lastError()).toBe('server unreachable');
      await t().release((await t().claim('w', 1000))!, 0, 'HTTP 503');
      expect(await lastError()).toBe('HTTP 503');
      // A nack's reason and a release's are one lastError: the latest given wins, either way.
      await t().nack((await t().claim('w', 1000))!, 0, 'HTTP 500');
      expect(await lastError()).toBe('HTTP 500');
      await t().release((await t().claim('w', 1000))!, 0, 'timed out');
      expect(await lastError()).toBe('timed out');
      // It runs out of attempts (the nack spent one, the next claim a second): it dies with it.
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().deadLetters()).toEqual([expect.objectContaining({ seq, attempt: 2, reason: 'timed out' })]);
    });
  });

  describe("onDuplicate: a keyed publish replaces or merges the queued message", () => {
    const events = async () => (await t().inspect()).groups.flatMap((g) => g.messages.map((m) => [m.seq, m.event, m.state, m.attempt, m.key]));

    it("'replace' puts the new event in the queued one's place: same seq, place and attempts", async () => {
      const a = await t().publish('note', { text: 'a' }, { key: 'k' });
      const b = await t().publish('note', { text: 'b' });
      expect(await t().publish('note', { text: 'a2' }, { key: 'k', onDuplicate: 'replace' })).toBe(a);
      expect(await events()).toEqual([[a, { text: 'a2' }, 'ready', 0, 'k'], [b, { text: 'b' }, 'ready', 0, null]]);
      expect(await t().stats()).toMatchObject({ queued: 2, groups: 1 });
      const lease = (await t().claim('w', 1000))!;
      expect(lease).toMatchObject({ seq: a, event: { text: 'a2' }, attempt: 1 });
    });

    it("'skip' (the default) leaves the queued message as it is and returns its seq", async () => {
      const a = await t().publish('note', { text: 'a' }, { key: 'k' });
      expect(await t().publish('note', { text: 'x' }, { key: 'k', onDuplicate: 'skip' })).toBe(a);
      expect(await t().publish('note', { text: 'y' }, { key: 'k' })).toBe(a);
      expect(await events()).toEqual([[a, { text: 'a' }, 'ready', 0, 'k']]);
    });

    it("'merge' applies the new event as a JSON Merge Patch (RFC 7396)", async () => {
      const seq = await t().publish('note', { title: 'x', body: { a: 1, b: 2 }, tags: ['t'], gone: 1 }, { key: 'k' });
      const patch = { body: { b: null, c: 3 }, tags: ['u'], gone: null, extra: { n: null, m: { deep: null, kept: 'é\u2028"' } } };
      expect(await t().publish('note', patch, { key: 'k', onDuplicate: 'merge' })).toBe(seq);
      const merged = (await t().claim('w', 1000))!.event;
      expect(merged).toEqual({ title: 'x', body: { a: 1, c: 3 }, tags: ['u'], extra: { m: { kept: 'é\u2028"' } } });
      // The target's members keep their places; the patch's new ones follow, in its order.
      expect(Object.keys(merged)).toEqual(['title', 'body', 'tags', 'extra']);
      expect(Object.keys(merged.body)).toEqual(['a', 'c']);
    });

    it("'merge' with a patch or a target that is not an object follows RFC 7396", async () => {
      for (const [target, patch, result] of [
        ['text', { a: 1 }, { a: 1 }],
        [{ a: 1 }, ['x'], ['x']],
        [{ a: 1 }, 7, 7],
        [[1, 2], { a: null, b: [3] }, { b: [3] }],
        [{ a: { b: 1 } }, { a: 'flat' }, { a: 'flat' }],
        [{ a: 1 }, {}, { a: 1 }],
      ] as const) {
        const group = `g${JSON.stringify(target)}${JSON.stringify(patch)}`;
        const seq = await t().publish(group, target, { key: 'k' });
        expect(await t().publish(group, patch, { key: 'k', onDuplicate: 'merge' })).toBe(seq);
        const message = (await t().inspect()).groups.find((g) => g.groupId === group)!.messages[0]!;
        expect([message.seq, message.event]).toEqual([seq, result]);
      }
    });

    it('keeps a park or a delay, and the attempts, of the message it changes', async () => {
      const parked = await t().publish('p', 'p1', { key: 'k' });
      await t().nack((await t().claim('w', 1000))!, 500);
      const delayed = await t().publish('d', 'd1', { key: 'k', delayMs: 500 });
      expect(await t().publish('p', 'p2', { key: 'k', onDuplicate: 'replace' })).toBe(parked);
      expect(await t().publish('d', 'd2', { key: 'k', onDuplicate: 'replace', delayMs: 0 })).toBe(delayed);
      const snapshot = await t().inspect();
      const byGroup = Object.fromEntries(snapshot.groups.map((g) => [g.groupId, g.messages.map((m) => [m.event, m.state, m.attempt])]));
      expect(byGroup).toEqual({ p: [['p2', 'parked', 1]], d: [['d2', 'delayed', 0]] });
      await c.tick(500);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(1);
      const leases = [(await t().claim('w', 1000))!, (await t().claim('w', 1000))!].sort((x, y) => x.groupId.localeCompare(y.groupId));
      expect(leases.map((l) => [l.event, l.attempt])).toEqual([['d2', 1], ['p2', 2]]);
    });

    it('never changes a message under a live lease: the new event goes behind it and takes the key', async () => {
      const first = await t().publish('note', { text: 'a' }, { key: 'k' });
      const lease = (await t().claim('w', 1000))!;
      const second = await t().publish('note', { text: 'b' }, { key: 'k', onDuplicate: 'merge' });
      expect(second).toBeGreaterThan(first);
      expect(await events()).toEqual([[first, { text: 'a' }, 'leased', 1, null], [second, { text: 'b' }, 'ready', 0, 'k']]);
      // The key now names the new message: the next merge goes into it, a skip returns it.
      expect(await t().publish('note', { more: 1 }, { key: 'k', onDuplicate: 'merge' })).toBe(second);
      expect(await t().publish('note', 'ignored', { key: 'k' })).toBe(second);
      await t().ack(lease);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: second, event: { text: 'b', more: 1 }, attempt: 1 });
    });

    it("changes a message whose lease ran out, and its late holder's ack is refused", async () => {
      const seq = await t().publish('note', 'old', { key: 'k' });
      const late = (await t().claim('w1', 1000))!;
      await c.tick(1001);
      expect(await t().publish('note', 'new', { key: 'k', onDuplicate: 'replace' })).toBe(seq);
      await c.expectLost(t().ack(late), late);
      const again = (await t().claim('w2', 1000))!;
      expect(again).toMatchObject({ seq, event: 'new', attempt: 2 });
    });

    it('changes a message held behind a dead letter; a dead letter is not queued, so its key is free', async () => {
      await c.open({ maxAttempts: 1, onDeadLetter: 'hold' });
      const create = await t().publish('note', 'create', { key: 'create' });
      const edit = await t().publish('note', { text: 'a' }, { key: 'edit' });
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().publish('note', { text: 'b' }, { key: 'edit', onDuplicate: 'merge' })).toBe(edit);
      const again = await t().publish('note', 'create again', { key: 'create', onDuplicate: 'replace' });
      expect(again).toBeGreaterThan(edit);
      expect(await events()).toEqual([[edit, { text: 'b' }, 'held', 0, 'edit'], [again, 'create again', 'held', 0, 'create']]);
      expect((await t().deadLetters()).map((d) => [d.seq, d.event])).toEqual([[create, 'create']]);
    });

    it('publishMany items replace or merge into queued messages and into earlier items of the batch', async () => {
      const queued = await t().publish('a', { n: 1, keep: true }, { key: 'k' });
      const seqs = await t().publishMany([
        { groupId: 'a', event: { n: 2 }, options: { key: 'k', onDuplicate: 'merge' } },
        { groupId: 'b', event: { v: 1 }, options: { key: 'k' } },
        { groupId: 'b', event: { w: 2 }, options: { key: 'k', onDuplicate: 'merge' } },
        { groupId: 'b', event: 'whole', options: { key: 'j' } },
        { groupId: 'b', event: 'replaced', options: { key: 'j', onDuplicate: 'replace' } },
      ]);
      expect(seqs[0]).toBe(queued);
      expect(seqs[2]).toBe(seqs[1]);
      expect(seqs[4]).toBe(seqs[3]);
      const snapshot = await t().inspect();
      const byGroup = Object.fromEntries(snapshot.groups.map((g) => [g.groupId, g.messages.map((m) => m.event)]));
      expect(byGroup).toEqual({ a: [{ n: 2, keep: true }], b: [{ v: 1, w: 2 }, 'replaced'] });
      expect(await t().stats()).toMatchObject({ queued: 3 });
    });

    it('refuses a bad onDuplicate, or one without a key, before anything changes', async () => {
      await t().publish('g', 'a', { key: 'k' });
      for (const [action, type, pattern] of [
        [() => t().publish('g', 'b', { key: 'k', onDuplicate: 'update' as never }), RangeError, /options\.onDuplicate/],
        [() => t().publish('g', 'b', { key: 'k', onDuplicate: 1 as never }), RangeError, /options\.onDuplicate/],
        [() => t().publish('g', 'b', { onDuplicate: 'replace' }), TypeError, /options\.key/],
        [() => t().publishMany([{ groupId: 'g', event: 'b' }, { groupId: 'g', event: 'c', options: { onDuplicate: 'merge' } }]), TypeError, /items\[1\]\.options\.onDuplicate/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
          expect(String(error)).toMatch(pattern);
        });
      }
    });
  });

  describe('pause and resume, of the queue or of one group', () => {
    const claimAll = async (worker = 'w') => {
      const got: string[] = [];
      for (let lease = await t().claim(worker, 1000); lease; lease = await t().claim(worker, 1000)) {
        got.push(`${lease.groupId}:${String(lease.event)}`);
        await t().ack(lease);
      }
      return got;
    };

    it('a paused group delivers nothing, takes publishes, and goes on from its head when resumed', async () => {
      await t().publish('a', 'a1');
      await t().publish('b', 'b1');
      await t().pause('a');
      await t().publish('a', 'a2');
      expect(await claimAll()).toEqual(['b:b1']);
      expect(await countsAddUp()).toMatchObject({ groups: 1, ready: 0, waiting: 1, queued: 2, paused: false, pausedGroups: 1 });
      expect((await t().inspect()).groups.map((g) => [g.groupId, g.paused, g.messages.map((m) => m.state)])).toEqual([['a', true, ['paused', 'paused']]]);
      await t().resume('a');
      expect(await countsAddUp()).toMatchObject({ ready: 1, waiting: 0, pausedGroups: 0 });
      expect(await claimAll()).toEqual(['a:a1', 'a:a2']);
    });

    it('a pause may name a group before its first publish, and outlives the group emptying', async () => {
      await t().pause('later');
      expect(await t().stats()).toMatchObject({ groups: 0, pausedGroups: 1 });
      await t().publish('later', 'l1');
      expect(await t().claim('w', 1000)).toBeNull();
      await t().resume('later');
      const lease = (await t().claim('w', 1000))!;
      await t().pause('later');
      await t().ack(lease); // a lease in flight can still be acked: the group is now empty
      await t().publish('later', 'l2');
      expect(await t().claim('w', 1000)).toBeNull();
      await t().resume('later');
      expect(await claimAll()).toEqual(['later:l2']);
    });

    it('leases in flight can be extended, released, nacked and rejected; one that runs out is not delivered again', async () => {
      await t().publish('a', 'a1');
      await t().publish('a', 'a2');
      const lease = (await t().claim('w', 1000))!;
      await t().pause('a');
      expect((await t().inspect()).groups[0]!.messages.map((m) => m.state)).toEqual(['leased', 'paused']);
      expect(await countsAddUp()).toMatchObject({ leased: 1, ready: 0, nextReadyAt: null });
      const renewed = await t().extend(lease, 2000);
      await c.tick(2001);
      expect(await t().claim('w2', 1000)).toBeNull(); // ran out while paused: held back
      expect((await t().inspect()).groups[0]!.messages[0]!.state).toBe('paused');
      await t().release(renewed); // the late holder may still give it back
      expect(await t().claim('w2', 1000)).toBeNull();
      await t().resume('a');
      const again = (await t().claim('w2', 1000))!;
      expect(again).toMatchObject({ seq: lease.seq, attempt: lease.attempt });
      await t().pause('a');
      await t().nack(again, 10);
      await t().resume('a');
      expect(await t().claim('w2', 1000)).toBeNull(); // its park still holds it
      await c.tick(11);
      const third = (await t().claim('w2', 1000))!;
      await t().pause('a');
      await t().reject(third, 'no');
      expect((await t().deadLetters()).map((d) => d.reason)).toEqual(['no']);
      await t().resume('a');
      expect(await claimAll()).toEqual(['a:a2']);
    });

    it('a paused queue delivers nothing at all; a group paused by name stays paused when the queue resumes', async () => {
      await t().publish('a', 'a1', { delayMs: 5 });
      await t().publish('b', 'b1');
      await t().pause('b');
      await t().pause();
      await t().pause(); // idempotent
      await c.tick(10);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await t().claimMany('w', 1000, { max: 5 })).toEqual([]);
      expect(await countsAddUp()).toMatchObject({ ready: 0, waiting: 2, paused: true, pausedGroups: 1, nextReadyAt: null });
      const snapshot = await t().inspect();
      expect(snapshot.paused).toBe(true);
      expect(states(snapshot).sort()).toEqual([['a', false, [['a1', 'paused']]], ['b', false, [['b1', 'paused']]]]);
      await t().publish('c', 'c1');
      await t().resume();
      await t().resume(); // idempotent
      expect(await t().stats()).toMatchObject({ paused: false, ready: 2 });
      expect((await claimAll()).sort()).toEqual(['a:a1', 'c:c1']);
      await t().resume('b');
      expect(await claimAll()).toEqual(['b:b1']);
    });

    it.skipIf(caps.limits?.roundRobinPerPart)('keeps the round-robin order and the FIFO of every group', async () => {
      for (const g of ['a', 'b', 'c']) for (const n of [1, 2]) await t().publish(g, `${g}${n}`);
      await t().pause('b');
      expect(await claimAll()).toEqual(['a:a1', 'c:c1', 'a:a2', 'c:c2']);
      await t().resume('b');
      expect(await claimAll()).toEqual(['b:b1', 'b:b2']);
    });

    it('a held group that is paused waits for both its redrive and its resume', async () => {
      await c.open({ maxAttempts: 1, onDeadLetter: 'hold' });
      const create = await t().publish('note', 'create');
      await t().publish('note', 'edit');
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      await t().pause('note');
      await t().redrive(create);
      expect(await t().claim('w', 1000)).toBeNull();
      expect(await countsAddUp()).toMatchObject({ held: 0, waiting: 1 });
      await t().resume('note');
      expect(await claimAll()).toEqual(['note:create', 'note:edit']);
    });

    it('refuses a bad group id before anything changes', async () => {
      await t().publish('g', 'a');
      for (const action of [() => t().pause(''), () => t().resume(7 as never), () => t().pause(null as never)]) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(Error);
          expect(String(error)).toMatch(/groupId/);
        });
      }
      expect(await t().stats()).toMatchObject({ paused: false, pausedGroups: 0 });
    });
  });

  describe('after: a message waits for others to be gone', () => {
    const claimAll = async () => {
      const got: string[] = [];
      for (let lease = await t().claim('w', 1000); lease; lease = await t().claim('w', 1000)) {
        got.push(String(lease.event));
        await t().ack(lease);
      }
      return got;
    };
    /** Parts of a spreadTransport keep `after` only within one part: groups chosen so they share one. */
    const [note, task] = caps.limits?.roundRobinPerPart ? ['note', 't3'] : ['note', 'task'];
    const neverIssued = caps.limits?.roundRobinPerPart ? /never issued|another part/ : /never issued/;

    it('is delivered only once every message it names is acked; FIFO and round-robin stay', async () => {
      const create = await t().publish(note, 'create note');
      const task1 = await t().publish(task, 'create task', { after: create });
      await t().publish(task, 'update task');
      const view = async () => (await t().inspect()).groups.map((g) => [g.groupId, g.messages.map((m) => m.state)]);
      expect(await view()).toEqual([[note, ['ready']], [task, ['blocked', 'ready']]]);
      expect(await countsAddUp()).toMatchObject({ ready: 1, blocked: 1, waiting: 0 });
      const lease = (await t().claim('w', 1000))!;
      expect(lease.event).toBe('create note');
      expect(await t().claim('w', 1000)).toBeNull();
      await t().ack(lease);
      expect(await countsAddUp()).toMatchObject({ ready: 1, blocked: 0 });
      expect(await claimAll()).toEqual(['create task', 'update task']);
      expect(task1).toBeGreaterThan(create);
    });

    it('waits for every seq of an array; one already gone counts as done, and a cancel is gone too', async () => {
      const a = await t().publish(note, 'a');
      const b = await t().publish(note, 'b');
      const done = await t().publish(note, 'done');
      await t().cancel(done);
      await t().publish(task, 'after all', { after: [a, b, done, a] });
      const first = (await t().claim('w', 1000))!;
      await t().ack(first);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'b' });
      expect(await t().stats()).toMatchObject({ blocked: 1 });
      await t().cancel(b).catch(() => undefined); // leased: not cancellable, still waited for
      expect(await t().stats()).toMatchObject({ blocked: 1 });
    });

    it('a dead letter is not gone: its redrive is waited for, and its discard releases the waiter', async () => {
      await c.open({ maxAttempts: 1 });
      const create = await t().publish(note, 'create');
      await t().publish(task, 'child', { after: create });
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull(); // create dead-lettered; child still waits
      expect(await t().stats()).toMatchObject({ dead: 1, blocked: 1 });
      const again = await t().redrive(create);
      expect(await t().stats()).toMatchObject({ blocked: 1 });
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      expect((await t().deadLetters()).map((d) => d.seq)).toEqual([again]);
      await t().discard(again);
      expect(await claimAll()).toEqual(['child']);
    });

    it('a delay still counts after the wait, and a paused group stays paused', async () => {
      const create = await t().publish(note, 'create');
      await t().publish(task, 'later', { after: create, delayMs: 100 });
      await t().pause(task);
      await t().ack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull();
      await t().resume(task);
      expect(await t().claim('w', 1000)).toBeNull(); // its own delay
      await c.tick(101);
      expect(await claimAll()).toEqual(['later']);
    });

    it('a keyed publish that changes a queued message keeps that message as it is (after is for a new one)', async () => {
      const create = await t().publish(note, 'create');
      const edit = await t().publish(task, { text: 'a' }, { key: 'edit' });
      expect(await t().publish(task, { text: 'b' }, { key: 'edit', onDuplicate: 'merge', after: create })).toBe(edit);
      expect(await t().stats()).toMatchObject({ blocked: 0, ready: 2 });
    });

    it('refuses a seq never issued or a bad after, before anything changes', async () => {
      const seq = await t().publish(note, 'a');
      for (const [action, type, pattern] of [
        [() => t().publish(task, 'x', { after: seq + 50 }), RangeError, neverIssued],
        [() => t().publishMany([{ groupId: task, event: 'ok' }, { groupId: task, event: 'x', options: { after: [seq, seq + 50] } }]), RangeError, neverIssued],
        [() => t().publish(task, 'x', { after: 0 }), RangeError, /options\.after/],
        [() => t().publish(task, 'x', { after: [seq, 1.5] }), RangeError, /options\.after\[1\]/],
        [() => t().publish(task, 'x', { after: String(seq) as never }), TypeError, /options\.after/],
        [() => t().publish(task, 'x', { after: Array.from({ length: 101 }, (_, i) => i + 1) }), RangeError, /at most 100/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
          expect(String(error)).toMatch(pattern);
        });
      }
    });
  });

  describe('the new arguments are checked before anything changes', () => {
    it('refuses a misspelt option, naming it and the option meant', async () => {
      await t().publish('g', 'a');
      const lease = (await t().claim('w', 1000))!;
      for (const [action, pattern] of [
        [() => t().publish('g', 'b', { dealyMs: 5 } as never), /options has no option "dealyMs"; did you mean "delayMs"\?/],
        [() => t().publishMany([{ groupId: 'g', event: 'b', options: { Key: 'k' } as never }]), /items\[0\]\.options has no option "Key"; did you mean "key"\?/],
        [() => t().publishMany([{ groupId: 'g', event: 'b', option: {} } as never]), /items\[0\] has no option "option"; did you mean "options"\?/],
        [() => t().claim('w', 1000, { minPriorty: 1 } as never), /"minPriorty"; did you mean "minPriority"\?/],
        [() => t().claimMany('w', 1000, { max: 2, maximum: 3 } as never), /"maximum"/],
        [() => t().publish('g', 'b', { zzz: 1 } as never), /has no option "zzz"; it takes "priority", "key"/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(TypeError);
          expect(String(error)).toMatch(pattern);
        });
      }
      await t().ack(lease);
    });

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
