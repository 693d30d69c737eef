/**
 * One record's status in one read: `inspectGroup(groupId)` gives the group as `inspect()` lists
 * it (each message with the seqs it waits for and its running coalescing window), its dead
 * letters and the queue's pause, on every backend. Called by `describeTransport`, so every
 * backend runs it.
 */
import { describe, expect, it } from 'vitest';
import type { TransportCaps } from './transport.js';
import type { OutboxSuiteContext } from './transport-outbox.js';

export function describeInspectGroup(caps: TransportCaps, c: OutboxSuiteContext): void {
  const t = () => c.t();
  /** Parts of a spreadTransport keep `after` only within one part: groups chosen so they share one. */
  const [note, task] = caps.limits?.roundRobinPerPart ? ['note', 't3'] : ['note', 'task'];
  /** What `inspect()` says of `groupId`, in the shape of `inspectGroup`. */
  const wholeReadOf = async (groupId: string) => {
    const snapshot = await t().inspect();
    return {
      groupId,
      now: snapshot.now,
      queuePaused: snapshot.paused,
      group: snapshot.groups.find((group) => group.groupId === groupId) ?? null,
      deadLetters: snapshot.deadLetters.filter((letter) => letter.groupId === groupId),
    };
  };

  describe('inspectGroup: one record in one read', () => {
    it('is null for a group the queue holds nothing of, and reads only that group', async () => {
      expect(await t().inspectGroup(note)).toMatchObject({ queuePaused: false, group: null, deadLetters: [] });
      await t().publish(task, 'other');
      const seq = await t().publish(note, 'create');
      const read = await t().inspectGroup(note);
      expect(read.group).toMatchObject({ groupId: note, heldBy: null, paused: false, messages: [{ seq, state: 'ready', waitsFor: [], window: null }] });
      expect(read).toEqual(await wholeReadOf(note));
    });

    it('names the seqs a message waits for, by seq or by group, and drops each once it is gone', async () => {
      const first = await t().publish(note, 'create note');
      const second = await t().publish(note, 'edit note');
      const waiting = await t().publish(task, 'create task', { after: [{ group: note }] });
      expect((await t().inspectGroup(task)).group!.messages).toMatchObject([{ seq: waiting, state: 'blocked', waitsFor: [first, second] }]);
      expect(await t().inspectGroup(task)).toEqual(await wholeReadOf(task));
      await t().ack((await t().claim('w', 1000))!);
      expect((await t().inspectGroup(task)).group!.messages).toMatchObject([{ state: 'blocked', waitsFor: [second] }]);
      await t().ack((await t().claim('w', 1000))!);
      expect((await t().inspectGroup(task)).group!.messages).toMatchObject([{ state: 'ready', waitsFor: [] }]);
    });

    it('shows a held group with its dead letter and reason, and what waits on the dead letter', async () => {
      await c.open({ onDeadLetter: 'hold' });
      const create = await t().publish(note, 'create');
      const edit = await t().publish(note, 'edit');
      await t().reject((await t().claim('w', 1000))!, '422 no such list');
      const waiting = await t().publish(task, 'task', { after: create });
      const read = await t().inspectGroup(note);
      expect(read.group).toMatchObject({ heldBy: create, messages: [{ seq: edit, state: 'held' }] });
      expect(read.deadLetters).toMatchObject([{ seq: create, groupId: note, reason: '422 no such list' }]);
      expect((await t().inspectGroup(task)).group!.messages).toMatchObject([{ seq: waiting, state: 'blocked', waitsFor: [create] }]);
      expect(await t().inspectGroup(note)).toEqual(await wholeReadOf(note));
    });

    it('reads a held group whose dead letter was its last message', async () => {
      await c.open({ onDeadLetter: 'hold' });
      const only = await t().publish(note, 'create');
      await t().reject((await t().claim('w', 1000))!, 'refused');
      const read = await t().inspectGroup(note);
      expect(read.group).toMatchObject({ groupId: note, heldBy: only, messages: [] });
      expect(read.deadLetters).toMatchObject([{ seq: only, reason: 'refused' }]);
    });

    it('gives a running coalescing window its end and bound, and none once it ended', async () => {
      const seq = await t().publish(note, { text: 'H' }, { key: 'edit', onDuplicate: 'merge', debounceMs: 100, maxWaitMs: 250 });
      const startedAt = (await t().inspectGroup(note)).now;
      expect((await t().inspectGroup(note)).group!.messages).toMatchObject([{ seq, state: 'delayed', window: { endsAt: startedAt + 100, latestEndAt: startedAt + 250 } }]);
      await c.tick(60);
      await t().publish(note, { text: 'He' }, { key: 'edit', onDuplicate: 'merge', debounceMs: 100 });
      expect((await t().inspectGroup(note)).group!.messages[0]!.window).toEqual({ endsAt: startedAt + 160, latestEndAt: startedAt + 250 });
      expect(await t().inspectGroup(note)).toEqual(await wholeReadOf(note));
      await c.tick(101);
      expect((await t().inspectGroup(note)).group!.messages[0]).toMatchObject({ state: 'ready', window: null });
      // Without maxWaitMs the window has no bound.
      await t().publish(task, 'x', { key: 'k', debounceMs: 50 });
      expect((await t().inspectGroup(task)).group!.messages[0]!.window).toMatchObject({ latestEndAt: null });
    });

    it('shows a pause of the group and of the queue', async () => {
      await t().publish(note, 'a');
      await t().pause(note);
      expect(await t().inspectGroup(note)).toMatchObject({ queuePaused: false, group: { paused: true, messages: [{ state: 'paused' }] } });
      await t().resume(note);
      await t().pause();
      expect(await t().inspectGroup(note)).toMatchObject({ queuePaused: true, group: { paused: false, messages: [{ state: 'paused' }] } });
      expect(await t().inspectGroup(task)).toMatchObject({ queuePaused: true, group: null });
    });

    it('refuses a groupId that is not an id, before reading', async () => {
      await expect(t().inspectGroup(7 as unknown as string)).rejects.toThrow(TypeError);
      await expect(t().inspectGroup('')).rejects.toThrow(RangeError);
    });
  });
}
