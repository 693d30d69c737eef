/**
 * Removing a record's intents with what depends on them: `discard(seq, { dependents: true })`
 * and `cancelGroup(groupId, options)`. Every backend removes the same messages (the later ones of
 * each group reached, and `after` waiters, transitively), refuses a live lease with nothing
 * removed, and says what it removed. Called by `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import { LeaseholdError } from '../../src/errors.js';
import type { TransportCaps } from './transport.js';
import { drain } from './transport-debounce.js';
import type { OutboxSuiteContext } from './transport-outbox.js';

export function describeRemoval(caps: TransportCaps, c: OutboxSuiteContext): void {
  const t = () => c.t();
  /** Parts of a spreadTransport keep `after` only within one part: groups chosen so they share one. */
  const [note, task, list] = caps.limits?.roundRobinPerPart ? ['note', 't3', 'x3'] : ['note', 'task', 'list'];
  const claimAll = () => drain(t());
  const refused = async (action: () => Promise<unknown>, code: string) => {
    await c.unchangedBy(async () => {
      const error = await action().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseholdError);
      expect(error).toMatchObject({ code });
    });
  };

  describe('discard with dependents, and cancelGroup: a record removed with what depends on it', () => {
    it("discards a refused create with its group's held edits and the tasks created under it", async () => {
      await c.open({ onDeadLetter: 'hold' });
      const create = await t().publish(note, 'create note');
      const edit = await t().publish(note, 'edit note');
      await t().reject((await t().claim('w', 1000))!, '422 refused');
      const taskCreate = await t().publish(task, 'create task', { after: create });
      const taskEdit = await t().publish(task, 'edit task');
      await t().publish('other', 'unrelated');
      expect(await t().discard(create, { dependents: true })).toEqual({ seqs: [create, edit, taskCreate, taskEdit], groups: [note, task] });
      expect(await t().stats()).toMatchObject({ queued: 1, groups: 1, dead: 0, held: 0, blocked: 0 });
      expect(await claimAll()).toEqual(['unrelated']);
      // The group is gone with its hold: a new publish goes out.
      await t().publish(note, 'again');
      expect(await claimAll()).toEqual(['again']);
    });

    it('follows after transitively across groups, from a queued message, and keeps what came before it', async () => {
      await t().publish(task, 'earlier task');
      const a = await t().publish(note, 'a');
      const b = await t().publish(task, 'b', { after: a });
      const bLater = await t().publish(task, 'b later');
      const c2 = await t().publish(list, 'c', { after: b });
      const cLater = await t().publish(list, 'c later');
      const d = await t().publish(note, 'a later');
      const removed = await t().discard(a, { dependents: true });
      expect(removed.seqs).toEqual([a, b, bLater, c2, cLater, d]);
      expect(removed.groups).toEqual([note, task, list]);
      expect(await claimAll()).toEqual(['earlier task']);
      expect(await t().stats()).toMatchObject({ queued: 0, groups: 0 });
    });

    it('refuses a live lease on anything it would remove, removing nothing; a lapsed one is removed', async () => {
      const a = await t().publish(note, 'a');
      await t().publish(task, 'b', { after: a });
      await t().publish(list, 'c');
      const lease = (await t().claim('w', 1000))!; // the note's a
      expect(lease.seq).toBe(a);
      await refused(() => t().discard(a, { dependents: true }), 'MESSAGE_LEASED');
      await refused(() => t().cancelGroup(note), 'MESSAGE_LEASED');
      await c.tick(1001);
      expect((await t().cancelGroup(note, { dependents: true })).groups).toEqual([note, task]);
      await c.expectLost(t().ack(lease), lease);
      expect(await claimAll()).toEqual(['c']);
    });

    it('cancelGroup without dependents releases what waited, and discards the dead letter holding the group', async () => {
      await c.open({ onDeadLetter: 'hold' });
      const create = await t().publish(note, 'create');
      const edit = await t().publish(note, 'edit');
      await t().reject((await t().claim('w', 1000))!, 'refused');
      await t().publish(task, 'waits for edit', { after: edit });
      expect(await t().cancelGroup(note)).toEqual({ seqs: [create, edit], groups: [note] });
      expect(await t().deadLetters()).toEqual([]);
      expect(await claimAll()).toEqual(['waits for edit']);
      expect(await t().cancelGroup(note)).toEqual({ seqs: [], groups: [] });
      expect(await t().cancelGroup('never-published', { dependents: true })).toEqual({ seqs: [], groups: [] });
    });

    it('cancelGroup keeps the pause of the group, and a plain discard says what it removed', async () => {
      await c.open({ maxAttempts: 1 });
      await t().pause(note);
      await t().publish(note, 'paused');
      await t().cancelGroup(note);
      await t().publish(note, 'still paused');
      expect(await t().claim('w', 1000)).toBeNull();
      await t().resume(note);
      await t().nack((await t().claim('w', 1000))!);
      expect(await t().claim('w', 1000)).toBeNull(); // dead-lettered
      const [dead] = await t().deadLetters();
      const waiter = await t().publish(task, 'waiter', { after: dead!.seq });
      expect(await t().discard(dead!.seq)).toEqual({ seqs: [dead!.seq], groups: [note] });
      expect(await claimAll()).toEqual(['waiter']);
      expect(waiter).toBeGreaterThan(dead!.seq);
    });

    it('refuses what is not there or a bad option, before anything changes', async () => {
      const seq = await t().publish(note, 'a');
      await refused(() => t().discard(seq), 'NOT_FOUND'); // queued, not dead: only with dependents
      await refused(() => t().discard(seq + 50, { dependents: true }), 'NOT_FOUND');
      for (const [action, type, pattern] of [
        [() => t().discard(seq, { dependents: 'yes' } as never), TypeError, /options\.dependents must be a boolean/],
        [() => t().discard(seq, { dependent: true } as never), TypeError, /did you mean "dependents"/],
        [() => t().cancelGroup(note, { dependents: 1 } as never), TypeError, /options\.dependents/],
        [() => t().cancelGroup('' as never), RangeError, /groupId/],
        [() => t().cancelGroup(7 as never), TypeError, /groupId/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await action().then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
          expect(String(error)).toMatch(pattern);
        });
      }
    });
  });

  describe('after: { group } waits for what that group holds at publish time', () => {
    it('waits for every message the group holds then, not for what is published to it later', async () => {
      const create = await t().publish(note, 'create note');
      await t().publish(note, 'edit note');
      await t().publish(task, 'create task', { after: { group: note } });
      const first = (await t().claim('w', 1000))!;
      expect(first.seq).toBe(create);
      await t().ack(first);
      await t().publish(note, 'later edit');
      expect(await t().stats()).toMatchObject({ blocked: 1 });
      expect(await claimAll()).toEqual(['edit note', 'create task', 'later edit']);
    });

    it('is no wait when the group holds nothing, and takes seqs beside groups', async () => {
      await t().publish(task, 'ready at once', { after: { group: note } });
      expect(await t().stats()).toMatchObject({ ready: 1, blocked: 0 });
      expect(await claimAll()).toEqual(['ready at once']);
      const a = await t().publish(list, 'a');
      await t().publish(note, 'n');
      const [waiter] = await t().publishMany([{ groupId: task, event: 'both', options: { after: [a, { group: note }, { group: note }, a] } }]);
      expect(waiter).toBeGreaterThan(a);
      const got = await claimAll();
      expect(got.indexOf('both')).toBe(2);
    });

    it("waits for a held group's dead letter too, and a discard with dependents takes the waiter", async () => {
      await c.open({ onDeadLetter: 'hold' });
      const create = await t().publish(note, 'create');
      await t().reject((await t().claim('w', 1000))!, 'refused');
      await t().publish(task, 'under the note', { after: { group: note } });
      expect(await t().stats()).toMatchObject({ held: 1, blocked: 1 });
      expect((await t().discard(create, { dependents: true })).groups).toEqual([note, task]);
      expect(await t().stats()).toMatchObject({ groups: 0, queued: 0 });
    });

    it('refuses a bad group entry before anything changes', async () => {
      await t().publish(note, 'a');
      for (const [after, type, pattern] of [
        [{ group: '' }, RangeError, /options\.after\.group/],
        [{ group: 5 }, TypeError, /options\.after\.group/],
        [{ grop: note }, TypeError, /did you mean "group"/],
        [[1, 'note'], TypeError, /options\.after\[1\] must be a seq or \{ group \}/],
        [null, TypeError, /options\.after/],
      ] as const) {
        await c.unchangedBy(async () => {
          const error = await t().publish(task, 'x', { after: after as never }).then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(type);
          expect(String(error)).toMatch(pattern);
        });
      }
      if (caps.limits?.roundRobinPerPart) {
        const error = await t().publish(note, 'x', { after: { group: 'task' } }).then(() => undefined, (e: unknown) => e);
        expect(String(error)).toMatch(/names group "task", of another part/);
      }
    });
  });
}
