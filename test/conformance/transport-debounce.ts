/**
 * The coalescing window of a keyed publish (`debounceMs`, `maxWaitMs`): every backend keeps a
 * keyed message unclaimable until its window closes, re-arms it on each publish of its key, never
 * past the bound, and never shortens a wait the message has for another reason. Called by
 * `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import type { TransportCaps } from './transport.js';
import type { OutboxSuiteContext } from './transport-outbox.js';
import type { Transport } from '../../src/transport/contract.js';

/** Claims and acks until nothing is ready; the events, in the order claimed. */
export async function drain(transport: Transport<any>): Promise<unknown[]> {
  const got: unknown[] = [];
  for (let lease = await transport.claim('w', 1000); lease; lease = await transport.claim('w', 1000)) {
    got.push(lease.event);
    await transport.ack(lease);
  }
  return got;
}

export function describeDebounce(caps: TransportCaps, c: OutboxSuiteContext): void {
  const t = () => c.t();
  /** Parts of a spreadTransport keep `after` only within one part: groups chosen so they share one. */
  const [note, task] = caps.limits?.roundRobinPerPart ? ['note', 't3'] : ['note', 'task'];
  const typing = { key: 'edit', onDuplicate: 'merge', debounceMs: 100 } as const;
  const claimAll = () => drain(t());

  describe('debounceMs and maxWaitMs: a keyed message waits until its key goes quiet', () => {
    it('waits debounceMs after its last publish, inclusive as a delay; each merge re-arms it', async () => {
      const seq = await t().publish(note, { text: 'H' }, typing);
      expect((await t().inspect()).groups[0]!.messages[0]!.state).toBe('delayed');
      await c.tick(100);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(1);
      // Quiet for 101 ms: the window closed, yet a later merge into the same message...
      expect(await t().publish(note, { text: 'He' }, typing)).toBe(seq);
      expect(await t().claim('w', 1000)).toBeNull(); // ...opens it again
      await c.tick(60);
      expect(await t().publish(note, { text: 'Hel' }, typing)).toBe(seq);
      await c.tick(100);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq, event: { text: 'Hel' }, attempt: 1, revision: 2 });
    });

    it('maxWaitMs bounds the window under merges that never stop: deliverable once it passes', async () => {
      const seq = await t().publish(note, { n: 0 }, { ...typing, maxWaitMs: 250 });
      for (let n = 1; n <= 5; n++) {
        await c.tick(50);
        expect(await t().publish(note, { n }, { ...typing, maxWaitMs: 250 })).toBe(seq);
        expect(await t().claim('w', 1000)).toBeNull();
      }
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq, event: { n: 5 } });
    });

    it('keeps the bound of the first window that met the message; a later maxWaitMs does not move it', async () => {
      const seq = await t().publish(note, 'a', { key: 'k', debounceMs: 100, maxWaitMs: 150 });
      await c.tick(90);
      await t().publish(note, 'b', { key: 'k', onDuplicate: 'replace', debounceMs: 100, maxWaitMs: 1000 });
      await c.tick(60);
      expect(await t().claim('w', 1000)).toBeNull(); // at the bound: still waiting, inclusive
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq, event: 'b' });
    });

    it("'skip' re-arms the window and keeps the event; a publish without a window changes the event only", async () => {
      const seq = await t().publish(note, 'first', { key: 'k', debounceMs: 100 });
      await c.tick(80);
      expect(await t().publish(note, 'ignored', { key: 'k', debounceMs: 100 })).toBe(seq);
      await c.tick(80);
      expect(await t().publish(note, 'second', { key: 'k', onDuplicate: 'replace' })).toBe(seq);
      expect(await t().claim('w', 1000)).toBeNull(); // the replace did not end the window of 80 + 100
      await c.tick(21);
      expect(await t().claim('w', 1000)).toMatchObject({ seq, event: 'second' });
    });

    it('a message queued without a window takes one from the first publish that brings it', async () => {
      const seq = await t().publish(note, { v: 1 }, { key: 'k' });
      await c.tick(10);
      expect(await t().publish(note, { v: 2 }, { key: 'k', onDuplicate: 'merge', debounceMs: 100, maxWaitMs: 120 })).toBe(seq);
      await c.tick(100);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq, event: { v: 2 } });
    });

    it('never shortens a delay or a park: the later wait holds, and a first publish waits max(delayMs, debounceMs)', async () => {
      await t().publish('d', 'delayed', { key: 'k', delayMs: 300, debounceMs: 100 });
      await t().publish('p', 'parked', { key: 'k' });
      await t().nack((await t().claim('w', 1000))!, 500);
      await c.tick(50);
      await t().publish('d', 'delayed2', { key: 'k', onDuplicate: 'replace', debounceMs: 100 });
      await t().publish('p', 'parked2', { key: 'k', onDuplicate: 'replace', debounceMs: 100 });
      await c.tick(250);
      expect(await t().claim('w', 1000)).toBeNull(); // 300 after publish: the delay, inclusive
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'delayed2' });
      await c.tick(199);
      expect(await t().claim('w', 1000)).toBeNull(); // the park's 500
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ event: 'parked2', attempt: 2 });
    });

    it('never re-arms a message under a live lease: the publish goes behind it with a window of its own', async () => {
      const first = await t().publish(note, { text: 'a' }, typing);
      await c.tick(101);
      const lease = (await t().claim('w', 1000))!;
      expect(await t().publish(note, 'ignored', { key: 'edit', debounceMs: 100 })).toBe(first); // skip: the leased one
      const second = await t().publish(note, { text: 'b' }, typing);
      expect(second).toBeGreaterThan(first);
      await t().ack(lease);
      expect(await t().claim('w', 1000)).toBeNull(); // the new message's window
      await c.tick(101);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: second, event: { text: 'b' } });
    });

    it('re-arms a message behind the head, which waits out its window once it leads', async () => {
      await t().publish(note, 'create');
      const edit = await t().publish(note, { text: 'x' }, typing);
      const create = (await t().claim('w', 1000))!;
      await c.tick(90);
      await t().publish(note, { text: 'xy' }, typing);
      await t().ack(create);
      await c.tick(100);
      expect(await t().claim('w', 1000)).toBeNull();
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: edit, event: { text: 'xy' } });
    });

    it('beside after, pause and hold: each still holds, and the window counts as well', async () => {
      await c.open({ maxAttempts: 1, onDeadLetter: 'hold' });
      const create = await t().publish(note, 'create');
      await t().publish(task, { t: 1 }, { ...typing, after: create });
      await c.tick(90);
      await t().publish(task, { t: 2 }, typing); // re-arms the blocked message's own wait
      await t().ack((await t().claim('w', 1000))!);
      await c.tick(100);
      expect(await t().claim('w', 1000)).toBeNull(); // unblocked, still in its window
      await c.tick(1);
      expect(await claimAll()).toEqual([{ t: 2 }]);

      await t().pause('paused');
      await t().publish('paused', 'p', { key: 'k', debounceMs: 100 });
      await c.tick(101);
      expect(await t().claim('w', 1000)).toBeNull();
      await t().resume('paused');
      expect(await claimAll()).toEqual(['p']);

      await t().publish('held', 'dies');
      await t().publish('held', 'edit', { key: 'k', debounceMs: 100 });
      const dead = (await t().claim('w', 1000))!;
      await t().nack(dead);
      await c.tick(200);
      await t().publish('held', 'edit2', { key: 'k', onDuplicate: 'replace', debounceMs: 100 });
      expect(await t().claim('w', 1000)).toBeNull(); // held at its dead letter
      await t().discard(dead.seq);
      expect(await t().claim('w', 1000)).toBeNull(); // released into its window
      await c.tick(101);
      expect(await claimAll()).toEqual(['edit2']);
    });

    it('publishMany takes windows too, and a batch re-arms what it finds', async () => {
      const [a, b] = await t().publishMany([
        { groupId: note, event: { v: 1 }, options: { ...typing, maxWaitMs: 120 } },
        { groupId: task, event: 'plain' },
      ]);
      await c.tick(50);
      expect(await t().publishMany([{ groupId: note, event: { w: 2 }, options: typing }])).toEqual([a]);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: b });
      await c.tick(70);
      expect(await t().claim('w', 1000)).toBeNull(); // 120 after the batch that set the bound: inclusive
      await c.tick(1);
      expect(await t().claim('w', 1000)).toMatchObject({ seq: a, event: { v: 1, w: 2 } });
    });

    it('refuses a bad window before anything changes', async () => {
      await t().publish(note, 'a', { key: 'k', debounceMs: 100 });
      for (const [options, type, pattern] of [
        [{ key: 'k', debounceMs: -1 }, RangeError, /options\.debounceMs/],
        [{ key: 'k', debounceMs: Number.NaN }, RangeError, /options\.debounceMs/],
        [{ key: 'k', debounceMs: Number.POSITIVE_INFINITY }, RangeError, /options\.debounceMs/],
        [{ key: 'k', debounceMs: '100' }, TypeError, /options\.debounceMs/],
        [{ debounceMs: 100 }, TypeError, /debounceMs needs options\.key/],
        [{ key: 'k', maxWaitMs: 100 }, TypeError, /maxWaitMs needs options\.debounceMs/],
        [{ key: 'k', debounceMs: 100, maxWaitMs: 99 }, RangeError, /maxWaitMs \(99\) must be ≥ options\.debounceMs \(100\)/],
        [{ key: 'k', debounceMs: 100, maxWaitMs: Number.NaN }, RangeError, /options\.maxWaitMs/],
        [{ key: 'k', debouncems: 100 }, TypeError, /did you mean "debounceMs"/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await t().publish(note, 'b', options as never).then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
          expect(String(error)).toMatch(pattern);
        });
        await c.unchangedBy(async () => {
          const error = await t()
            .publishMany([{ groupId: note, event: 'ok', options: { key: 'other' } }, { groupId: note, event: 'b', options: options as never }])
            .then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
        });
      }
    });
  });
}
