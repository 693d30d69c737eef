/**
 * consume() on one transport backend: delivery and acks, concurrency across groups, retries
 * with back-off and dead letters, lease renewal and loss, stop(), and idle waiting. Driven by a
 * manual clock and scheduler: time moves only when a test says so, and nothing sleeps. Called
 * once per backend (test/consume.test.ts); another backend runs it by passing its own factory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { consume } from '../../src/consume/consume.js';
import type { ConsumeHandler, ConsumeOptions, Consumer, HandlerContext } from '../../src/consume/types.js';
import { RejectError, RetryLaterError } from '../../src/consume/outcomes.js';
import { LeaseLostError } from '../../src/errors.js';
import { isChangeNotifier, type Lease, type Transport } from '../../src/transport/contract.js';
import { flush, ManualScheduler } from '../support/runtime-scheduler.js';
import type { TransportFactory, TransportHarness } from './transport.js';

/** Lets in-flight work settle, turn by turn, until `ready()` holds (or fails the test). */
export async function until(ready: () => boolean | Promise<boolean>, what = 'the condition', turns = 5000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (await ready()) return;
    await flush();
  }
  throw new Error(`${what} did not happen within ${turns} turns`);
}

/** A promise the test settles by hand. */
export function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/**
 * The transport seen through a counter of calls (and their arguments); `hide` removes methods,
 * e.g. `onChange` to act as a transport without change notices.
 */
export function spy<E>(transport: Transport<E>, hide: string[] = []): { transport: Transport<E>; calls: Map<string, unknown[][]>; count(method: string): number } {
  const calls = new Map<string, unknown[][]>();
  const proxy = new Proxy(transport, {
    get(target, property, receiver) {
      if (typeof property === 'string' && hide.includes(property)) return undefined;
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const list = calls.get(String(property)) ?? [];
        list.push(args);
        calls.set(String(property), list);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { transport: proxy, calls, count: (method) => calls.get(method)?.length ?? 0 };
}

/** Claim-like calls: each may lease messages. */
export const claimCalls = (s: ReturnType<typeof spy>): number => s.count('claim') + s.count('claimMany') + s.count('ackAndClaim') + s.count('ackAndClaimMany');

export function describeConsume(name: string, make: TransportFactory): void {
  describe(`consume() on ${name}`, () => {
    let h: TransportHarness;
    let t: Transport<any>;
    let scheduler: ManualScheduler;
    let consumers: Consumer[];
    let errors: { error: unknown; phase: string }[];

    const open = async (transportOptions = {}) => {
      h = await make(transportOptions);
      t = h.transport;
      scheduler = new ManualScheduler(h.clock);
    };
    beforeEach(async () => {
      consumers = [];
      errors = [];
      await open();
    });
    afterEach(async () => {
      for (const c of consumers) await c.stop({ graceMs: 0 });
      await h.dispose();
    });

    const start = <E>(handler: ConsumeHandler<E>, options: ConsumeOptions<E> = {}, transport: Transport<E> = t): Consumer => {
      const consumer = consume(transport, handler, {
        workerId: 'c',
        visibilityMs: 1000,
        clock: () => h.clock.now(),
        scheduler,
        onError: (error, info) => void errors.push({ error, phase: info.phase }),
        ...options,
      });
      consumers.push(consumer);
      return consumer;
    };
    const states = async () => (await t.inspect()).groups.flatMap((g) => g.messages.map((m) => m.state));

    it('handles every message, oldest first in each group, and acks it', async () => {
      for (const [g, n] of [['a', 1], ['b', 1], ['a', 2], ['a', 3], ['b', 2]] as const) await t.publish(g, { n });
      const seen: string[] = [];
      const consumer = start<{ n: number }>((event, lease) => void seen.push(`${lease.groupId}${event.n}`));
      await until(() => consumer.handled === 5, 'five acks');
      expect(seen.filter((s) => s.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
      expect(seen.filter((s) => s.startsWith('b'))).toEqual(['b1', 'b2']);
      expect((await t.inspect()).groups).toEqual([]);
      expect({ failed: consumer.failed, lost: consumer.lost, active: consumer.active }).toEqual({ failed: 0, lost: 0, active: 0 });
      expect(errors).toEqual([]);
    });

    it('holds up to `concurrency` groups at once and never two messages of one group', async () => {
      for (let n = 0; n < 3; n++) for (const g of ['a', 'b', 'c', 'd', 'e', 'f']) await t.publish(g, { n });
      const running = new Map<string, () => void>();
      let most = 0;
      const overlaps: string[] = [];
      const consumer = start(async (_event, lease) => {
        if (running.has(lease.groupId)) overlaps.push(lease.groupId);
        const gate = deferred();
        running.set(lease.groupId, gate.resolve);
        most = Math.max(most, running.size);
        await gate.promise;
        running.delete(lease.groupId);
      }, { concurrency: 4 });
      await until(() => running.size === 4, 'four handlers running');
      const leased = (await t.inspect()).groups.filter((g) => g.messages[0]!.state === 'leased');
      expect(leased).toHaveLength(4);
      expect(consumer.active).toBe(4);
      for (let released = 0; released < 18; released++) {
        await until(() => running.size > 0, 'a handler running');
        running.values().next().value!();
        await flush();
        expect(running.size).toBeLessThanOrEqual(4);
      }
      await until(() => consumer.handled === 18, 'the last acks');
      expect(most).toBe(4);
      expect(overlaps).toEqual([]);
      expect((await t.inspect()).groups).toEqual([]);
    });

    it('retries a failing handler after the back-off delays and dead-letters it at maxAttempts, with its last error', async () => {
      await h.dispose();
      await open({ maxAttempts: 4 });
      const seq = await t.publish('g', { poison: true });
      const attempts: number[] = [];
      const consumer = start(
        (_event, lease) => {
          attempts.push(lease.attempt);
          throw new Error(`boom ${lease.attempt}`);
        },
        // Polls far apart, so only the park's end can wake the consumer in time.
        { backoff: { baseMs: 100, factor: 3, maxMs: 500 }, idleMinMs: 60_000, idleMaxMs: 60_000 },
      );
      for (const [attempt, delay] of [[1, 100], [2, 300], [3, 500], [4, 500]] as const) {
        await until(() => consumer.failed === attempt, `failure ${attempt}`);
        const parked = (await t.inspect()).groups[0]!.messages[0]!;
        expect(parked).toMatchObject({ seq, state: 'parked', attempt, expiresAt: h.clock.now() + delay, lastError: `boom ${attempt}` });
        // No lease held (so no renewal timer): the one timer left is the wake-up.
        await until(() => consumer.active === 0 && scheduler.pending === 1, 'the wake-up at the park end');
        await scheduler.advance(delay); // the park holds through its last millisecond
        expect(attempts).toHaveLength(attempt);
        await scheduler.advance(1);
      }
      await until(async () => (await t.deadLetters()).length === 1, 'the dead letter');
      // The dead letter says why: the message of the error the handler threw last.
      expect(await t.deadLetters()).toMatchObject([{ seq, attempt: 4, reason: 'boom 4' }]);
      expect(attempts).toEqual([1, 2, 3, 4]);
      expect(errors.map((e) => [e.phase, (e.error as Error).message])).toEqual([1, 2, 3, 4].map((n) => ['handler', `boom ${n}`]));
      expect((await t.inspect()).groups).toEqual([]);
    });

    it('releases a message on RetryLaterError without spending an attempt, and claims nothing for afterMs', async () => {
      await h.dispose();
      await open({ maxAttempts: 2 });
      const seq = await t.publish('a', 'mutation');
      const s = spy(t);
      const attempts: number[] = [];
      const consumer = start(
        (_event, lease) => {
          if (lease.groupId !== 'a') return;
          attempts.push(lease.attempt);
          if (attempts.length <= 3) throw new RetryLaterError({ afterMs: 500 }); // offline, three times: more than maxAttempts
        },
        { idleMinMs: 60_000, idleMaxMs: 60_000 },
        s.transport,
      );
      for (let round = 1; round <= 3; round++) {
        await until(() => consumer.retried === round, `retry ${round}`);
        // The error's message stays with the message, for every tab's status to show.
        expect((await t.inspect()).groups.find((g) => g.groupId === 'a')!.messages[0], `round ${round}`).toMatchObject({ seq, attempt: 0, expiresAt: h.clock.now() + 500, lastError: 'retry in 500 ms' });
        if (round === 1) await t.publish('b', 'other'); // free at once, yet not claimed while the consumer waits
        const claims = claimCalls(s);
        await scheduler.advance(500);
        expect(claimCalls(s)).toBe(claims);
        if (round === 1) expect(consumer.handled).toBe(0);
        await scheduler.advance(1);
      }
      await until(() => consumer.handled === 2, 'both handled');
      expect(attempts).toEqual([1, 1, 1, 1]);
      expect(await t.deadLetters()).toEqual([]);
      expect({ failed: consumer.failed, retried: consumer.retried }).toEqual({ failed: 0, retried: 3 });
      expect(errors).toEqual([]);
    });

    it('dead-letters a message on RejectError at once, with its reason; on a hold queue its group waits', async () => {
      await h.dispose();
      await open({ maxAttempts: 5, onDeadLetter: 'hold' });
      const create = await t.publish('note', 'create');
      await t.publish('note', 'update');
      const seen: string[] = [];
      const consumer = start<string>((event) => {
        seen.push(event);
        if (event === 'create') throw new RejectError('HTTP 422: title is required');
      });
      await until(() => consumer.rejected === 1, 'the rejection');
      expect(await t.deadLetters()).toMatchObject([{ seq: create, attempt: 1, reason: 'HTTP 422: title is required' }]);
      await scheduler.advance(60_000);
      expect(seen).toEqual(['create']); // the update waits for its create
      await t.discard(create);
      await until(() => consumer.handled === 1, 'the update, once the create is discarded');
      expect(seen).toEqual(['create', 'update']);
      expect({ failed: consumer.failed, rejected: consumer.rejected }).toEqual({ failed: 0, rejected: 1 });
      expect(errors).toEqual([]);
    });

    it('starts at most rate.max handlers in any rate.perMs window', async () => {
      for (const g of ['a', 'b', 'c', 'd', 'e']) await t.publish(g, g);
      const consumer = start(() => {}, { concurrency: 5, rate: { max: 2, perMs: 1000 } });
      await until(() => consumer.handled === 2, 'the first two');
      await scheduler.advance(999);
      expect(consumer.handled).toBe(2);
      await scheduler.advance(1);
      await until(() => consumer.handled === 4, 'two more, a window later');
      await scheduler.advance(1000);
      await until(() => consumer.handled === 5, 'the last');
    });

    it('refuses a bad rate, and RetryLaterError a bad afterMs', () => {
      for (const [rate, type] of [[{ max: 0, perMs: 10 }, RangeError], [{ max: 1, perMs: 0 }, RangeError], [{ max: 1.5, perMs: 10 }, RangeError], [{ max: 1 }, TypeError], ['fast', TypeError]] as const) {
        expect(() => consume(t, () => {}, { rate: rate as never })).toThrow(type);
      }
      expect(() => new RetryLaterError({ afterMs: -1 })).toThrow(RangeError);
      expect(() => new RetryLaterError({ afterMs: Number.NaN })).toThrow(RangeError);
      expect(() => new RetryLaterError(undefined as never)).toThrow(TypeError);
    });

    it('keeps the lease of a handler that runs far longer than the visibility', async () => {
      await t.publish('g', { slow: true });
      const gate = deferred();
      const consumer = start(() => gate.promise, { visibilityMs: 1000 });
      await until(() => consumer.active === 1, 'the claim');
      for (let i = 0; i < 25; i++) await scheduler.advance(400);
      const [message] = (await t.inspect()).groups[0]!.messages;
      expect(message).toMatchObject({ state: 'leased', holder: 'c', attempt: 1 });
      expect(message!.expiresAt).toBeGreaterThan(h.clock.now());
      expect(await t.claim('other', 1000)).toBeNull();
      gate.resolve();
      await until(() => consumer.handled === 1, 'the ack');
      expect((await t.inspect()).groups).toEqual([]);
      expect(errors).toEqual([]);
    });

    it("aborts the handler's signal when its lease is lost, and does not ack", async () => {
      await t.publish('g', { n: 1 });
      const gate = deferred();
      let context: HandlerContext | undefined;
      const consumer = start((_event, _lease, ctx) => {
        context = ctx;
        return gate.promise;
      });
      await until(() => context !== undefined, 'the handler');
      expect(context!.signal.aborted).toBe(false);
      h.clock.advance(1001); // past the lease, before the renewal gets to run
      const other = (await t.claim('other', 1000))!;
      expect(other.attempt).toBe(2);
      await scheduler.advance(0); // the overdue renewal runs and finds the lease gone
      await until(() => context!.signal.aborted, 'the abort');
      expect(context!.signal.reason).toBeInstanceOf(LeaseLostError);
      gate.resolve();
      await until(() => consumer.lost === 1, 'the loss counted');
      expect(consumer.handled).toBe(0);
      expect(consumer.active).toBe(0);
      expect(errors.map((e) => e.phase)).toEqual(['extend']);
      await t.ack(other); // the new holder's lease is intact
    });

    it('stop() lets handlers finish within the grace, then releases the rest: nothing leased, nothing lost', async () => {
      for (const g of ['a', 'b', 'c']) for (let n = 0; n < 2; n++) await t.publish(g, { n });
      const gates = new Map<string, ReturnType<typeof deferred>>();
      const signals = new Map<string, HandlerContext['signal']>();
      const s = spy(t);
      const consumer = start(
        (_event, lease, { signal }) => {
          const gate = deferred();
          gates.set(lease.groupId, gate);
          signals.set(lease.groupId, signal);
          return gate.promise;
        },
        { concurrency: 3 },
        s.transport,
      );
      await until(() => gates.size === 3, 'three handlers');
      const claims = claimCalls(s);
      const stopped = consumer.stop({ graceMs: 1000 });
      let settled = false;
      void stopped.then(() => (settled = true));
      gates.get('a')!.resolve(); // finishes within the grace: acked as usual
      await until(() => consumer.handled === 1, 'the ack within the grace');
      await scheduler.advance(999);
      expect(settled).toBe(false);
      expect(signals.get('b')!.aborted).toBe(false);
      await scheduler.advance(1);
      await until(() => settled, 'stop() to resolve');
      expect(signals.get('b')!.aborted && signals.get('c')!.aborted).toBe(true);
      expect(signals.get('a')!.aborted).toBe(false);
      expect({ handled: consumer.handled, released: consumer.released, active: consumer.active }).toEqual({ handled: 1, released: 2, active: 0 });
      expect(claimCalls(s)).toBe(claims); // no claim after stop()
      const snapshot = await t.inspect();
      const left = snapshot.groups.flatMap((g) => g.messages);
      expect(left).toHaveLength(5);
      expect(left.every((m) => m.state === 'ready')).toBe(true);
      expect(left.every((m) => m.attempt === 0)).toBe(true); // given back by release: no attempt spent
      gates.get('b')!.resolve(); // a released handler finishing late changes nothing
      await flush();
      expect(await t.inspect()).toEqual({ ...snapshot, now: h.clock.now() });
      await consumer.done;
    });

    it('stops on its signal, and stop() when idle settles at once', async () => {
      const controller = new AbortController();
      const s = spy(t);
      const consumer = start(() => {}, { signal: controller.signal }, s.transport);
      await until(() => claimCalls(s) === 1, 'the first claim');
      controller.abort();
      await consumer.done;
      expect(consumer.stopping).toBe(true);
      await t.publish('g', { late: true });
      await scheduler.advance(10_000);
      expect(claimCalls(s)).toBe(1);
      expect(await states()).toEqual(['ready']);
      await consumer.stop(); // again: the same, settled
    });

    it('does not poll while idle when the transport sends change notices, and wakes on one', async () => {
      if (!isChangeNotifier(t)) return;
      const s = spy(t);
      const consumer = start(() => {}, { idleMinMs: 60_000, idleMaxMs: 60_000 }, s.transport);
      await until(() => claimCalls(s) === 1, 'the first claim');
      for (let i = 0; i < 20; i++) await flush();
      expect(claimCalls(s)).toBe(1);
      await t.publish('g', { n: 1 });
      await until(() => consumer.handled === 1, 'the handled message'); // the scheduler never moved
      // The claim that took it, the ackAndClaim that found nothing, and at most one more for a
      // notice that arrived while that call ran (its own ack's, or another's: it cannot tell).
      const claims = claimCalls(s);
      expect(claims).toBeLessThanOrEqual(4);
      for (let i = 0; i < 20; i++) await flush();
      expect(claimCalls(s)).toBe(claims);
    });

    it('polls with back-off, from idleMinMs doubling to idleMaxMs, where there are no change notices', async () => {
      const s = spy(t, ['onChange']);
      const consumer = start(() => {}, { idleMinMs: 100, idleMaxMs: 400 }, s.transport);
      await until(() => claimCalls(s) === 1, 'the first claim');
      const claimsAfter = async (ms: number) => {
        await until(() => scheduler.pending === 1, 'the idle timer'); // a remote transport answers in its own time
        await scheduler.advance(ms - 1);
        const before = claimCalls(s);
        await scheduler.advance(1);
        return [before, claimCalls(s)];
      };
      expect(await claimsAfter(100)).toEqual([1, 2]);
      expect(await claimsAfter(200)).toEqual([2, 3]);
      expect(await claimsAfter(400)).toEqual([3, 4]);
      expect(await claimsAfter(400)).toEqual([4, 5]);
      await t.publish('g', { n: 1 });
      await scheduler.advance(400);
      await until(() => consumer.handled === 1, 'the handled message');
    });

    it('wakes when a lease another worker holds runs out, without waiting for its poll', async () => {
      await t.publish('g', { n: 1 });
      const crashed = (await t.claim('crashed', 5000))!;
      const seen: Lease[] = [];
      const consumer = start((_event, lease) => void seen.push(lease), { idleMinMs: 60_000, idleMaxMs: 60_000 });
      await until(() => scheduler.pending === 1, 'the wake-up at the lease end');
      await scheduler.advance(5000); // the lease holds through expiresAt
      expect(seen).toEqual([]);
      await scheduler.advance(1);
      await until(() => consumer.handled === 1, 'the redelivery');
      expect(seen[0]).toMatchObject({ seq: crashed.seq, attempt: 2, workerId: 'c' });
    });

    it('reports a failed claim to onError and carries on after the idle back-off', async () => {
      let failNext = true;
      const flaky = new Proxy(t, {
        get(target, property) {
          const value = Reflect.get(target, property) as unknown;
          if (property === 'claim' || property === 'claimMany') {
            return (...args: unknown[]) => {
              if (failNext) {
                failNext = false;
                return Promise.reject(new Error('disk hiccup'));
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      });
      await t.publish('g', { n: 1 });
      const consumer = start(() => {}, { idleMinMs: 100 }, flaky);
      await until(() => errors.length === 1, 'the reported failure');
      expect(errors[0]).toMatchObject({ phase: 'claim', error: { message: 'disk hiccup' } });
      expect(consumer.handled).toBe(0);
      await until(() => scheduler.pending === 1, 'the idle timer');
      await scheduler.advance(100);
      await until(() => consumer.handled === 1, 'the message, on the next try');
    });

    it('takes the next message with the ack (ackAndClaim), and claims for all free slots in one call', async () => {
      for (let n = 0; n < 4; n++) await t.publish('g', { n });
      const s = spy(t);
      const one = start(() => {}, {}, s.transport);
      await until(() => one.handled === 4, 'four acks');
      expect(s.count('ackAndClaim')).toBe(4);
      expect(s.count('ack')).toBe(0);
      await one.stop();

      for (const g of ['a', 'b', 'c']) await t.publish(g, { g });
      const many = spy(t);
      const wide = start(() => new Promise<void>(() => {}), { concurrency: 8, workerId: 'wide' }, many.transport);
      await until(() => wide.active === 3, 'three leases');
      expect(many.calls.get('claimMany')![0]).toEqual(['wide', 1000, { max: 8, minPriority: 0 }]);
      expect(many.count('claim')).toBe(0);
    });

    it('acks handlers that finish together in one call that also claims for the free slots', async () => {
      for (const g of ['a', 'b', 'c']) await t.publish(g, { g, n: 1 });
      for (const g of ['a', 'b']) await t.publish(g, { g, n: 2 });
      const s = spy(t);
      const gates: (() => void)[] = [];
      const seen: unknown[] = [];
      const consumer = start((event) => new Promise<void>((resolve) => (seen.push(event), gates.push(resolve))), { concurrency: 3 }, s.transport);
      await until(() => gates.length === 3, 'three handlers');
      for (const open of gates.splice(0)) open();
      await until(() => gates.length === 2, 'the next two messages, from the acking call');
      const [call] = s.calls.get('ackAndClaimMany')!;
      expect((call![0] as Lease[]).map((l) => l.groupId).sort()).toEqual(['a', 'b', 'c']);
      expect(call!.slice(1)).toEqual([consumer.workerId, 1000, { max: 3, minPriority: 0 }]);
      expect(seen.slice(3)).toEqual(expect.arrayContaining([{ g: 'a', n: 2 }, { g: 'b', n: 2 }]));
      expect(s.count('ack') + s.count('ackAndClaim') + s.count('ackMany')).toBe(0);
      for (const open of gates.splice(0)) open();
      await until(() => consumer.handled === 5, 'five acks');
      expect((await t.inspect()).groups).toEqual([]);
    });

    it('reports a lease lost among handlers that finish together (phase ack), acks the others and claims all the same', async () => {
      for (const g of ['a', 'b']) await t.publish(g, { g, n: 1 });
      await t.publish('b', { g: 'b', n: 2 });
      const s = spy(t);
      const gates: (() => void)[] = [];
      const seen: unknown[] = [];
      const consumer = start((event) => new Promise<void>((resolve) => (seen.push(event), gates.push(resolve))), { concurrency: 2 }, s.transport);
      await until(() => gates.length === 2, 'two handlers');
      h.clock.advance(1001); // past both leases, before the renewal gets to run
      const stolen = (await t.claim('other', 5000))!;
      expect(stolen.groupId).toBe('a');
      for (const open of gates.splice(0)) open();
      await until(() => gates.length === 1, "b's next message, from the acking call");
      expect(s.count('ackAndClaimMany')).toBe(1);
      expect(errors.map((e) => [e.phase, (e.error as Error).name])).toEqual([['ack', 'LeaseLostError']]);
      expect([consumer.handled, consumer.lost]).toEqual([1, 1]);
      expect(seen[2]).toEqual({ g: 'b', n: 2 });
      await t.ack(stolen); // the thief's lease is intact
      gates[0]!();
      await until(() => consumer.handled === 2, 'the last ack');
      expect((await t.inspect()).groups).toEqual([]);
    });

    it('reports a failed ack-and-claim call (phase ack), which acked nothing: the messages come back once their leases run out', async () => {
      for (const g of ['a', 'b']) await t.publish(g, { g });
      let failNext = true;
      const flaky = new Proxy(t, {
        get(target, property) {
          const value = Reflect.get(target, property) as unknown;
          if (property === 'ackAndClaimMany') {
            return (...args: unknown[]) => {
              if (!failNext) return (value as (...a: unknown[]) => unknown).apply(target, args);
              failNext = false;
              return Promise.reject(new Error('disk hiccup'));
            };
          }
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      });
      const gates: (() => void)[] = [];
      let runs = 0;
      const consumer = start(() => new Promise<void>((resolve) => (runs++, gates.push(resolve))), { concurrency: 2, idleMinMs: 100 }, flaky);
      await until(() => gates.length === 2, 'two handlers');
      for (const open of gates.splice(0)) open();
      await until(() => errors.length === 1, 'the reported failure');
      expect(errors[0]).toMatchObject({ phase: 'ack', error: { message: 'disk hiccup' } });
      expect([consumer.handled, consumer.active]).toEqual([0, 0]);
      expect(await states()).toEqual(['leased', 'leased']);
      // The idle back-off, then the leases' end (stats().nextReadyAt), wake it to claim again.
      const failedAt = h.clock.now();
      while (gates.length < 2) {
        expect(h.clock.now() - failedAt).toBeLessThan(2_000);
        await until(() => scheduler.pending > 0 || gates.length === 2, 'the idle timer');
        if (gates.length < 2) await scheduler.advance(100);
      }
      expect(runs).toBe(4);
      for (const open of gates.splice(0)) open();
      await until(() => consumer.handled === 2, 'two acks');
      expect((await t.inspect()).groups).toEqual([]);
    });

    it('acks what finishes while stopping with ackMany, claiming nothing', async () => {
      for (const g of ['a', 'b']) await t.publish(g, { g });
      await t.publish('a', { g: 'a', n: 2 });
      const s = spy(t);
      const gates: (() => void)[] = [];
      const consumer = start(() => new Promise<void>((resolve) => gates.push(resolve)), { concurrency: 2 }, s.transport);
      await until(() => gates.length === 2, 'two handlers');
      const stopped = consumer.stop({ graceMs: Infinity });
      for (const open of gates) open();
      await stopped;
      expect(s.calls.get('ackMany')!.map(([leases]) => (leases as Lease[]).map((l) => l.groupId).sort())).toEqual([['a', 'b']]);
      expect(s.count('ackAndClaimMany')).toBe(0);
      expect(await states()).toEqual(['ready']);
    });

    it('stops when its transport is closed under it', async () => {
      const consumer = start(() => {}, { idleMinMs: 100 });
      await until(() => scheduler.pending === 1, 'the idle timer');
      await t.close();
      await scheduler.advance(100);
      await consumer.done;
      expect(errors.map((e) => e.phase)).toContain('claim');
    });
  });
}
