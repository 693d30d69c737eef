/**
 * The transport conformance suite: every rule of the seeds (000, 001) and of DESIGN.md's
 * extensions, each as its own behaviour, run unchanged against every backend.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClosedError, LeaseholdError, LeaseLostError } from '../../src/errors.js';
import { describeOrigin } from './transport-origin.js';
import { describeOutbox } from './transport-outbox.js';
import { describeDebounce } from './transport-debounce.js';
import { describeInspectGroup } from './transport-inspect-group.js';
import { describeExpireLeases } from './transport-expire.js';
import { describeLimits } from './transport-limits.js';
import { describeRemoval } from './transport-remove.js';
import { describeQueueApi } from './transport-queue.js';
import { type ChangeNotifier, isChangeNotifier, type Lease, type Transport, type TransportOptions, type TransportSnapshot } from '../../src/transport/contract.js';

/** A clock the suite can move; backends read it through the function they were given. */
export interface TestClock {
  now(): number;
  advance(ms: number): unknown;
}

export interface TransportHarness {
  transport: Transport<any>;
  clock: TestClock;
  /** Another named queue on the same database (backends with `caps.namedQueues`). */
  queue?: (name: string) => Promise<Transport<any>>;
  /** Closes the storage and opens it again, keeping what was written (persistent backends). */
  reopen?: () => Promise<Transport<any>>;
  dispose(): Promise<void>;
}

export interface TransportCaps {
  /** Events are stored as JSON: parsed copies come back (every backend refuses non-JSON events). */
  json: boolean;
  /** Data outlives the transport object: the harness can `reopen()`. */
  persistent: boolean;
  /** Several named queues share one database: the harness can open another with `queue()`. */
  namedQueues?: boolean;
  /**
   * Documented limits of a combinator (spreadTransport, src/transport/spread.ts), each named
   * after its limit and gating only the tests that limit makes inapplicable. No backend has any.
   */
  limits?: {
    /** Round-robin order holds within each part, not across parts (nor does inspect's claim order). */
    roundRobinPerPart?: boolean;
    /** Events are checked as JSON, yet leases carry the very object published (in-memory parts). */
    eventsByIdentity?: boolean;
    /** A lease names the queue of the part that issued it (which the part checks), not `'default'`. */
    partQueues?: boolean;
  };
}

export type TransportFactory = (options: Omit<TransportOptions, 'clock'>) => Promise<TransportHarness>;

export function describeTransport(name: string, caps: TransportCaps, make: TransportFactory): void {
  describe(`Transport conformance: ${name}`, () => {
    let t: Transport<any>;
    let h: TransportHarness;
    /** Whether `h` is open: a make that throws leaves nothing to dispose twice. */
    let live = false;
    const open = async (options: Omit<TransportOptions, 'clock'> = {}) => {
      if (live) {
        live = false;
        await h.dispose();
      }
      h = await make(options);
      live = true;
      t = h.transport;
    };
    beforeEach(() => open());
    afterEach(async () => {
      if (live) await h.dispose();
      live = false;
    });

    const tick = (ms = 1) => h.clock.advance(ms);
    /** Claim and ack at once, advancing the clock first (as the seed's oracle workloads do). */
    const take = async (worker = 'w', advance = 1) => {
      await tick(advance);
      const lease = await t.claim(worker, 1000);
      if (lease) await t.ack(lease);
      return lease;
    };
    const expectLost = async (promise: Promise<unknown>, lease: Lease) => {
      const error = await promise.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ code: 'LEASE_LOST', seq: lease.seq, attempt: lease.attempt, groupId: lease.groupId });
    };
    const unchangedBy = async (action: () => Promise<unknown>) => {
      const before = await t.inspect();
      await action().catch(() => undefined);
      expect(await t.inspect()).toEqual(before);
    };

    describeQueueApi(caps, { h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeOutbox(caps, { h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeDebounce(caps, { h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeInspectGroup(caps, { h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeRemoval(caps, { h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeOrigin(caps, { h: () => h, t: () => t, open, tick });
    describeLimits({ h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });
    describeExpireLeases({ h: () => h, t: () => t, open, tick, unchangedBy, expectLost: (p, lease) => expectLost(p, lease) });

    describe('the seed rules', () => {
      it('returns null when nothing is queued', async () => {
        expect(await t.claim('w', 1000)).toBeNull();
      });

      it('gives every publish a new, increasing seq', async () => {
        const a = await t.publish('g', { n: 1 });
        const b = await t.publish('g', { n: 2 });
        const c = await t.publish('other', { n: 3 });
        expect(a).toBeGreaterThan(0);
        expect(b).toBeGreaterThan(a);
        expect(c).toBeGreaterThan(b);
      });

      it('delivers a lease with the event, holder, attempt 1 and expiry now + visibility', async () => {
        const seq = await t.publish('g', { hello: 'world' });
        const lease = await t.claim('w1', 5000);
        expect(lease).toEqual({
          seq, groupId: 'g', event: { hello: 'world' }, workerId: 'w1', attempt: 1, expiresAt: h.clock.now() + 5000, queue: caps.limits?.partQueues ? expect.any(String) : 'default',
          origin: expect.stringMatching(/^[0-9a-f]{32}$/), counter: 1, lowWater: 1, revision: 0, deliveryId: expect.stringMatching(/^[0-9a-f]{32}\/[^/]+\/1\/0$/),
        });
      });

      it('keeps at most one message of a group in flight', async () => {
        await t.publish('g', 1);
        await t.publish('g', 2);
        expect(await t.claim('w1', 1000)).not.toBeNull();
        expect(await t.claim('w2', 1000)).toBeNull();
      });

      it('delivers a group oldest first (FIFO)', async () => {
        for (const n of [1, 2, 3]) await t.publish('g', n);
        const order = [];
        for (let i = 0; i < 3; i++) order.push((await take())!.event);
        expect(order).toEqual([1, 2, 3]);
      });

      it('serves groups never claimed first, then the group claimed least recently (round-robin)', async () => {
        await t.publish('a', 'a1');
        await t.publish('a', 'a2');
        await t.publish('a', 'a3');
        await t.publish('b', 'b1');
        await t.publish('b', 'b2');
        await t.publish('c', 'c1');
        const order = [];
        for (let lease = await take(); lease; lease = await take()) order.push(lease.event);
        expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
      });

      it('lets other groups through while one is in flight', async () => {
        await t.publish('a', 'a1');
        await t.publish('a', 'a2');
        await t.publish('b', 'b1');
        const first = await t.claim('w1', 1000);
        const second = await t.claim('w2', 1000);
        expect([first?.event, second?.event]).toEqual(['a1', 'b1']);
        expect(await t.claim('w3', 1000)).toBeNull();
      });

      it('sets a group priority by the publish that creates it; later publishes do not change it', async () => {
        await t.publish('g', 1, { priority: 1 });
        await t.publish('g', 2, { priority: 4 });
        const snapshot = await t.inspect();
        expect(snapshot.groups[0]).toMatchObject({ groupId: 'g', priority: 1 });
        expect(await t.claim('w', 1000, { minPriority: 2 })).toBeNull();
      });

      it('forgets a group priority once the group drains, so the next publish sets it anew', async () => {
        await t.publish('g', 1, { priority: 1 });
        await take();
        await t.publish('g', 2, { priority: 3 });
        expect((await t.inspect()).groups[0]!.priority).toBe(3);
        expect((await t.claim('w', 1000, { minPriority: 3 }))?.event).toBe(2);
      });

      it('skips groups below the priority floor', async () => {
        await t.publish('low', 'low', { priority: 0 });
        await t.publish('mid', 'mid', { priority: 2 });
        await t.publish('high', 'high', { priority: 3 });
        expect((await t.claim('w1', 1000, { minPriority: 3 }))?.event).toBe('high');
        expect(await t.claim('w2', 1000, { minPriority: 3 })).toBeNull();
        expect((await t.claim('w3', 1000, { minPriority: 1 }))?.event).toBe('mid');
        expect((await t.claim('w4', 1000))?.event).toBe('low');
      });

      it('redelivers a message once its lease has run out (crash recovery), with the next attempt', async () => {
        await t.publish('g', 'job');
        const first = await t.claim('crashed', 1000);
        await tick(1000);
        expect(await t.claim('w2', 1000)).toBeNull(); // expiry is inclusive: still in flight at expiresAt
        await tick(1);
        const second = await t.claim('w2', 1000);
        expect(second).toMatchObject({ seq: first!.seq, event: 'job', workerId: 'w2', attempt: 2 });
      });

      it('parks a nacked message with a delay, blocking its group until the delay has passed', async () => {
        await t.publish('g', 'g1');
        await t.publish('g', 'g2');
        await t.publish('other', 'o1');
        const lease = await t.claim('w', 1000);
        await t.nack(lease!, 500);
        expect((await t.claim('w', 1000))?.event).toBe('o1');
        await tick(500);
        expect(await t.claim('w', 1000)).toBeNull();
        await tick(1);
        expect(await t.claim('w', 1000)).toMatchObject({ event: 'g1', attempt: 2 });
      });

      it('frees a message at once on nack(0), for an immediate retry', async () => {
        await t.publish('g', 'job');
        const lease = await t.claim('w1', 1000);
        await t.nack(lease!);
        expect(await t.claim('w2', 1000)).toMatchObject({ event: 'job', attempt: 2, workerId: 'w2' });
      });

      it('deletes an acked message and drops its group when it is empty', async () => {
        await t.publish('g', 'job');
        const lease = await t.claim('w', 1000);
        await t.ack(lease!);
        expect((await t.inspect()).groups).toEqual([]);
        expect(await t.claim('w', 1000)).toBeNull();
      });
    });

    describe('ackAndClaim: the ack and the next claim as one step', () => {
      it('acks the lease and returns what claim would return next, in round-robin order', async () => {
        await t.publish('a', 'a1');
        await t.publish('b', 'b1');
        await t.publish('a', 'a2');
        const first = (await t.claim('w', 1000))!;
        await tick();
        const second = (await t.ackAndClaim(first, 'w', 1000))!;
        expect(second).toMatchObject({ groupId: 'b', event: 'b1', workerId: 'w', attempt: 1, expiresAt: h.clock.now() + 1000 });
        await tick();
        const third = (await t.ackAndClaim(second, 'w2', 500))!;
        expect(third).toMatchObject({ groupId: 'a', event: 'a2', workerId: 'w2' });
        expect((await t.inspect()).groups.map((g) => [g.groupId, g.messages.length])).toEqual([['a', 1]]);
        expect(await t.ackAndClaim(third, 'w', 1000)).toBeNull();
        expect((await t.inspect()).groups).toEqual([]);
      });

      it('applies the priority floor to the claim', async () => {
        await t.publish('low', 'x');
        await t.publish('high', 'y', { priority: 3 });
        await t.publish('high', 'z');
        const y = (await t.claim('w', 1000, { minPriority: 3 }))!;
        const z = (await t.ackAndClaim(y, 'w', 1000, { minPriority: 3 }))!;
        expect(z.event).toBe('z');
        expect(await t.ackAndClaim(z, 'w', 1000, { minPriority: 3 })).toBeNull();
        expect((await t.claim('w', 1000))?.event).toBe('x');
      });

      it('rejects a stale lease with LeaseLostError and changes nothing, claiming nothing', async () => {
        await t.publish('g', 1);
        const stale = (await t.claim('w', 1000))!;
        await tick(1001);
        const fresh = (await t.claim('w2', 1000))!;
        await t.publish('h', 2);
        await unchangedBy(() => t.ackAndClaim(stale, 'w', 1000));
        await expectLost(t.ackAndClaim(stale, 'w', 1000), stale);
        await t.ack(fresh);
      });

      it('checks the claim arguments before acking', async () => {
        await t.publish('g', 1);
        const lease = (await t.claim('w', 1000))!;
        await expect(t.ackAndClaim(lease, 'w', 0)).rejects.toBeInstanceOf(RangeError);
        await expect(t.ackAndClaim(lease, '', 1000)).rejects.toBeInstanceOf(RangeError);
        await expect(t.ackAndClaim(lease, 'w', 1000, { minPriority: 9 })).rejects.toBeInstanceOf(RangeError);
        await t.ack(lease);
      });
    });

    describe('fencing: a lease is (seq, attempt)', () => {
      it('rejects an ack from a lease whose message was claimed again, and changes nothing', async () => {
        await t.publish('g', 'job');
        const stale = (await t.claim('slow', 1000))!;
        await tick(1001);
        const fresh = (await t.claim('fast', 1000))!;
        await unchangedBy(() => t.ack(stale));
        await expectLost(t.ack(stale), stale);
        await t.ack(fresh);
      });

      it('rejects nack and extend from a stale lease, and changes nothing', async () => {
        await t.publish('g', 'job');
        const stale = (await t.claim('slow', 1000))!;
        await tick(1001);
        await t.claim('fast', 1000);
        await unchangedBy(() => t.nack(stale, 10));
        await expectLost(t.nack(stale), stale);
        await expectLost(t.nack(stale, 10), stale);
        await expectLost(t.extend(stale, 1000), stale);
      });

      it('rejects a second ack of the same lease', async () => {
        await t.publish('g', 'a');
        await t.publish('g', 'b');
        const lease = (await t.claim('w', 1000))!;
        await t.ack(lease);
        await expectLost(t.ack(lease), lease);
      });

      it('rejects acting on a lease after it was released by nack(0) or parked', async () => {
        await t.publish('g', 'job');
        const released = (await t.claim('w', 1000))!;
        await t.nack(released);
        await expectLost(t.ack(released), released);
        const parked = (await t.claim('w', 1000))!;
        await t.nack(parked, 100);
        await expectLost(t.ack(parked), parked);
        await expectLost(t.extend(parked, 100), parked);
      });

      it('still accepts an ack from a lease that ran out if nobody claimed the message again', async () => {
        await t.publish('g', 'job');
        const lease = (await t.claim('w', 1000))!;
        await tick(5000);
        await t.ack(lease);
        expect((await t.inspect()).groups).toEqual([]);
      });

      it('still accepts nack and extend from a lease that ran out, unclaimed', async () => {
        await t.publish('g', 'job');
        const lease = (await t.claim('w', 1000))!;
        await tick(5000);
        const renewed = await t.extend(lease, 1000);
        expect(renewed.expiresAt).toBe(h.clock.now() + 1000);
        expect(await t.claim('w2', 1000)).toBeNull();
        await t.nack(lease, 0);
        expect(await t.claim('w2', 1000)).toMatchObject({ attempt: 2 });
      });

      it('rejects a lease for a message that does not exist, and one with a forged holder', async () => {
        await t.publish('g', 'job');
        const lease = (await t.claim('w', 1000))!;
        await expectLost(t.ack({ ...lease, seq: lease.seq + 100 }), { ...lease, seq: lease.seq + 100 });
        await expectLost(t.ack({ ...lease, workerId: 'intruder' }), lease);
        await expectLost(t.ack({ ...lease, attempt: 2 }), { ...lease, attempt: 2 });
        await t.ack(lease);
      });
    });

    describe('renewal', () => {
      it('moves a live lease to now + visibility and keeps the group blocked', async () => {
        await t.publish('g', 'job');
        const lease = (await t.claim('w', 1000))!;
        await tick(900);
        const renewed = await t.extend(lease, 1000);
        expect(renewed).toEqual({ ...lease, expiresAt: h.clock.now() + 1000 });
        await tick(500); // past the original expiry
        expect(await t.claim('w2', 1000)).toBeNull();
        await tick(501);
        expect(await t.claim('w2', 1000)).toMatchObject({ attempt: 2 });
      });

      it('keeps the old lease object valid after extend (same seq and attempt)', async () => {
        await t.publish('g', 'job');
        const lease = (await t.claim('w', 1000))!;
        await t.extend(lease, 5000);
        await t.ack(lease);
        expect((await t.inspect()).groups).toEqual([]);
      });
    });

    describe('fair ties', () => {
      it('takes turns between groups even when the clock does not move', async () => {
        for (const g of ['a', 'b', 'c']) {
          await t.publish(g, `${g}1`);
          await t.publish(g, `${g}2`);
        }
        const order = [];
        for (let lease = await take('w', 0); lease; lease = await take('w', 0)) order.push(lease.event);
        expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'c2']);
      });
    });

    describe('idempotent publish', () => {
      it('returns the queued message seq for a repeated (group, key) and inserts nothing', async () => {
        const first = await t.publish('g', 'one', { key: 'k' });
        expect(await t.publish('g', 'two', { key: 'k' })).toBe(first);
        const snapshot = await t.inspect();
        expect(snapshot.groups[0]!.messages).toHaveLength(1);
        expect(snapshot.groups[0]!.messages[0]).toMatchObject({ seq: first, event: 'one', key: 'k' });
      });

      it('scopes keys to their group', async () => {
        const a = await t.publish('a', 1, { key: 'k' });
        const b = await t.publish('b', 1, { key: 'k' });
        expect(b).not.toBe(a);
      });

      it('keeps the key while the message is leased or parked, and frees it once acked', async () => {
        const seq = await t.publish('g', 1, { key: 'k' });
        const lease = (await t.claim('w', 1000))!;
        expect(await t.publish('g', 2, { key: 'k' })).toBe(seq);
        await t.nack(lease, 100);
        expect(await t.publish('g', 2, { key: 'k' })).toBe(seq);
        await tick(101);
        await t.ack((await t.claim('w', 1000))!);
        expect(await t.publish('g', 3, { key: 'k' })).toBeGreaterThan(seq);
      });
    });

    describe('dead letters', () => {
      beforeEach(() => open({ maxAttempts: 2 }));

      it('moves a message delivered maxAttempts times to the dead letters instead of delivering it again', async () => {
        const seq = await t.publish('poison', { bad: true });
        await t.nack((await t.claim('w', 1000))!);
        await tick(10);
        await t.nack((await t.claim('w', 1000))!);
        await tick(10);
        expect(await t.claim('w', 1000)).toBeNull();
        expect(await t.deadLetters()).toEqual([{ seq, groupId: 'poison', priority: 0, event: { bad: true }, attempt: 2, deadAt: h.clock.now(), reason: null }]);
        expect((await t.inspect()).groups).toEqual([]);
      });

      it('carries on in the same claim and returns the next deliverable message', async () => {
        await t.publish('poison', 'p1');
        await t.publish('poison', 'p2');
        for (let i = 0; i < 2; i++) {
          await t.nack((await t.claim('w', 1000))!);
          await tick(1);
        }
        expect(await t.claim('w', 1000)).toMatchObject({ event: 'p2', attempt: 1 });
        expect((await t.deadLetters()).map((d) => d.event)).toEqual(['p1']);
      });

      it('counts a lease that ran out as a delivery', async () => {
        await t.publish('g', 'job');
        await t.claim('crash-1', 10);
        await tick(11);
        await t.claim('crash-2', 10);
        await tick(11);
        expect(await t.claim('w', 10)).toBeNull();
        expect(await t.deadLetters()).toHaveLength(1);
      });

      it('redrives a dead letter to its group tail with a new seq and attempt 0, re-creating the group with its priority', async () => {
        const seq = await t.publish('g', 'job', { priority: 3 });
        for (let i = 0; i < 2; i++) {
          await t.nack((await t.claim('w', 1000))!);
          await tick(1);
        }
        expect(await t.claim('w', 1000)).toBeNull();
        const again = await t.redrive(seq);
        expect(again).toBeGreaterThan(seq);
        expect(await t.deadLetters()).toEqual([]);
        expect((await t.inspect()).groups[0]).toMatchObject({ groupId: 'g', priority: 3 });
        expect(await t.claim('w', 1000, { minPriority: 3 })).toMatchObject({ seq: again, event: 'job', attempt: 1 });
      });

      it('refuses to redrive a seq that is not a dead letter', async () => {
        const seq = await t.publish('g', 'job');
        for (const bad of [seq, 999]) {
          const error = await t.redrive(bad).catch((e: unknown) => e);
          expect(error).toBeInstanceOf(LeaseholdError);
          expect(error).toMatchObject({ code: 'NOT_FOUND' });
        }
      });
    });

    describe('inspect', () => {
      it.skipIf(caps.limits?.roundRobinPerPart)('reports each message state, holder, attempt and expiry, and groups in claim order', async () => {
        await t.publish('leased', 'l1');
        await t.publish('leased', 'l2');
        await t.publish('parked', 'p1');
        await t.publish('expired', 'e1');
        await t.publish('fresh', 'f1', { key: 'k1' });
        const leased = (await t.claim('w1', 1000))!;
        const parked = (await t.claim('w2', 1000))!;
        await t.nack(parked, 5000);
        await t.claim('w3', 10);
        await tick(100);
        const snapshot: TransportSnapshot = await t.inspect();
        expect(snapshot.now).toBe(h.clock.now());
        const view = snapshot.groups.map((g) => [g.groupId, g.inFlight, g.messages.map((m) => [m.event, m.state, m.holder, m.attempt])]);
        expect(view).toEqual([
          ['fresh', false, [['f1', 'ready', null, 0]]],
          ['leased', true, [['l1', 'leased', 'w1', 1], ['l2', 'ready', null, 0]]],
          ['parked', true, [['p1', 'parked', null, 1]]],
          ['expired', false, [['e1', 'expired', 'w3', 1]]],
        ]);
        expect(snapshot.groups[1]!.messages[0]!.expiresAt).toBe(leased.expiresAt);
        expect(snapshot.groups[0]!.messages[0]!.key).toBe('k1');
        expect(snapshot.groups.map((g) => g.claimOrder)).toEqual([0, 1, 2, 3]);
      });
    });

    describe('bad input is refused before anything changes', () => {
      const badCalls: [string, (t: Transport<any>, lease: Lease) => Promise<unknown>, typeof TypeError | typeof RangeError][] = [
        ['publish: empty group id', (t) => t.publish('', 1), RangeError],
        ['publish: non-string group id', (t) => t.publish(42 as unknown as string, 1), TypeError],
        ['publish: missing group id', (t) => t.publish(undefined as unknown as string, 1), TypeError],
        ['publish: priority 5', (t) => t.publish('g', 1, { priority: 5 }), RangeError],
        ['publish: priority 1.5', (t) => t.publish('g', 1, { priority: 1.5 }), RangeError],
        ['publish: priority -1', (t) => t.publish('g', 1, { priority: -1 }), RangeError],
        ['publish: priority as a string', (t) => t.publish('g', 1, { priority: '1' as unknown as number }), TypeError],
        ['publish: empty key', (t) => t.publish('g', 1, { key: '' }), RangeError],
        ['publish: options not an object', (t) => t.publish('g', 1, 3 as unknown as object), TypeError],
        ['claim: empty worker id', (t) => t.claim('', 1000), RangeError],
        ['claim: visibility 0', (t) => t.claim('w', 0), RangeError],
        ['claim: visibility -1', (t) => t.claim('w', -1), RangeError],
        ['claim: visibility NaN', (t) => t.claim('w', NaN), RangeError],
        ['claim: visibility Infinity', (t) => t.claim('w', Infinity), RangeError],
        ['claim: visibility as a string', (t) => t.claim('w', '10' as unknown as number), TypeError],
        ['claim: minPriority 5', (t) => t.claim('w', 1000, { minPriority: 5 }), RangeError],
        ['nack: negative delay', (t, l) => t.nack(l, -1), RangeError],
        ['nack: NaN delay', (t, l) => t.nack(l, NaN), RangeError],
        ['extend: visibility 0', (t, l) => t.extend(l, 0), RangeError],
        ['ack: not a lease', (t) => t.ack({} as Lease), TypeError],
        ['ack: null', (t) => t.ack(null as unknown as Lease), TypeError],
        ['ack: seq 0', (t, l) => t.ack({ ...l, seq: 0 }), RangeError],
        ['redrive: seq 1.5', (t) => t.redrive(1.5), RangeError],
      ];
      for (const [label, call, errorClass] of badCalls) {
        it(`rejects ${label} with ${errorClass.name}`, async () => {
          await t.publish('g', 'job');
          await t.publish('g', 'next');
          const lease = (await t.claim('w', 1000))!;
          const before = await t.inspect();
          const error = await call(t, lease).then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(errorClass);
          expect(await t.inspect()).toEqual(before);
        });
      }

      const unstorable: [string, () => unknown][] = [
        ['a cycle', () => { const a: Record<string, unknown> = {}; a.self = a; return a; }],
        ['a BigInt', () => ({ n: 10n })],
        ['a function', () => ({ f: () => 1 })],
        ['undefined', () => undefined],
        ['NaN', () => ({ n: NaN })],
        ['a Map', () => ({ m: new Map([[1, 2]]) })],
      ];
      for (const [label, event] of unstorable) {
        it(`refuses an event holding ${label}, on every backend (memory too: same semantics)`, async () => {
          const before = await t.inspect();
          const error = await t.publish('g', event()).then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(TypeError);
          expect(String(error)).toMatch(/^TypeError: event /);
          expect(await t.inspect()).toEqual(before);
        });
      }

      it('returns the very event object in memory, an equal copy over JSON', async () => {
        const event = { nested: { list: [1, 'two', null, true] } };
        await t.publish('g', event);
        const lease = (await t.claim('w', 1000))!;
        expect(lease.event).toEqual(event);
        if (caps.json && !caps.limits?.eventsByIdentity) expect(lease.event).not.toBe(event);
        else expect(lease.event).toBe(event);
      });

      it('round-trips group ids and events that look like SQL or HTML, and non-ASCII text', async () => {
        const names = ["'); DROP TABLE lh_messages;--", '<img src=x onerror=alert(1)>', 'заказ-7 🧾 注文', 'a\u0000b'];
        for (const name of names) await t.publish(name, { name }, { key: name });
        const seen = [];
        for (let lease = await take(); lease; lease = await take()) seen.push([lease.groupId, lease.event.name]);
        const expected = names.map((n) => [n, n]);
        // Four groups, served in round-robin order; where that order holds only within each part, in some order.
        if (caps.limits?.roundRobinPerPart) expect(seen.sort()).toEqual(expected.sort());
        else expect(seen).toEqual(expected);
      });
    });

    describe('change notices', () => {
      it('notifies subscribers after publish, ack, ackAndClaimMany, nack and redrive, and stops after unsubscribe', async () => {
        expect(isChangeNotifier(t)).toBe(true);
        let notices = 0;
        const unsubscribe = (t as Transport & ChangeNotifier).onChange(() => notices++);
        const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
        // A notice through the server (LISTEN/NOTIFY) may arrive after the call's own reply:
        // wait for it rather than for a fixed number of turns (the test's timeout bounds this).
        const noticed = async (more: number) => {
          while (notices <= more) await new Promise((resolve) => setTimeout(resolve, 1));
        };
        await t.publish('g', 1);
        await t.publish('g', 2);
        await t.publish('g', 'more');
        await noticed(0);
        const afterPublish = notices;
        await t.nack((await t.claim('w', 1000))!);
        await noticed(afterPublish);
        const afterNack = notices;
        await t.ack((await t.claim('w', 1000))!);
        await noticed(afterNack);
        const afterAck = notices;
        await t.ackAndClaimMany([(await t.claim('w', 1000))!], 'w', 1000, { max: 1 });
        await noticed(afterAck);
        unsubscribe();
        const final = notices;
        await t.publish('g', 3);
        await settle();
        expect(notices).toBe(final);
      });
    });

    describe('close', () => {
      it('rejects every call after close with ClosedError', async () => {
        await t.publish('g', 1);
        const lease = (await t.claim('w', 1000))!;
        await t.close();
        await t.close();
        for (const call of [() => t.publish('g', 1), () => t.claim('w', 1), () => t.ack(lease), () => t.inspect(), () => t.deadLetters()]) {
          await expect(call()).rejects.toBeInstanceOf(ClosedError);
        }
      });
    });

    describe('durability', () => {
      it.skipIf(!caps.persistent)('keeps every message across a reopen, and the lease that was held runs out and is claimable', async () => {
        await t.publish('a', 'a1', { priority: 2 });
        await t.publish('a', 'a2');
        await t.publish('b', 'b1', { key: 'k' });
        const held = (await t.claim('w', 1000))!;
        t = await h.reopen!();
        const snapshot = await t.inspect();
        expect(snapshot.groups.map((g) => [g.groupId, g.priority, g.messages.map((m) => m.event)])).toEqual([
          ['b', 0, ['b1']],
          ['a', 2, ['a1', 'a2']],
        ]);
        expect(await t.publish('b', 'dup', { key: 'k' })).toBe(snapshot.groups[0]!.messages[0]!.seq);
        await tick(1001);
        expect((await t.claim('w2', 1000, { minPriority: 2 }))).toMatchObject({ seq: held.seq, attempt: 2 });
      });
    });
  });
}
