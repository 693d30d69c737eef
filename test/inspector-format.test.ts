/**
 * The inspector's words, without a page: the default event preview, the shortening that never
 * cuts a word it can keep, worker labels, and group states that count as `stats()` counts.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryTransport, ManualClock } from '../src/index.js';
import { checkPreview, defaultPreview, fit, groupState, type GroupWord, PREVIEW_MAX, previewText, workerLabel } from '../src/inspector/format.js';

describe('defaultPreview', () => {
  it('shows a small event whole, as compact JSON', () => {
    expect(defaultPreview({ op: 'save', id: 'n-1', text: 'milk' })).toBe('{"op": "save", "id": "n-1", "text": "milk"}');
    expect(defaultPreview({ label: 'save draft' })).toBe('{"label": "save draft"}');
    expect(defaultPreview(42)).toBe('42');
    expect(defaultPreview(null)).toBe('null');
    expect(defaultPreview([1, 'a', {}])).toBe('[1, "a", {}]');
    expect(defaultPreview({ text: 'line one\nline two' })).toBe('{"text": "line one\\nline two"}');
    expect(defaultPreview('plain text')).toBe('plain text');
  });

  it('puts the operation and text of a larger event before a uuid that comes first', () => {
    const event = { id: '3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b', noteId: 'note-000123', op: 'update', text: 'buy oat milk', at: 1_733_500_000_000 };
    const shown = defaultPreview(event);
    expect(shown.startsWith('op: update · text: buy oat milk')).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(PREVIEW_MAX);
    // The ids come after what the event does, if at all.
    expect(shown.indexOf('3f2a')).not.toBe(0);
  });

  it('writes nested values as their shape and never throws on what JSON cannot write', () => {
    const shown = defaultPreview({ type: 'order.placed', items: [1, 2, 3], customer: { name: 'Ann', address: { city: 'Oslo' } }, note: 'at the door' });
    expect(shown).toMatch(/^type: order\.placed · note: at the door · items: \[3\] …$/);
    const cycle: Record<string, unknown> = { type: 'loop' };
    cycle.self = cycle;
    expect(defaultPreview(cycle)).toBe('[object Object]');
    expect(defaultPreview(10n)).toBe('10');
    expect(defaultPreview(undefined)).toBe('undefined');
  });

  it('shortens at a word end, not inside a word', () => {
    expect(fit('held at a dead letter', 14)).toBe('held at a…');
    expect(fit('short', 14)).toBe('short');
    // One word longer than the room: cut inside it, since nothing else fits.
    expect(fit('supercalifragilistic', 10)).toBe('supercali…');
    const long = defaultPreview('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(PREVIEW_MAX);
    expect(long.endsWith('word…')).toBe(true);
  });
});

describe('previewText', () => {
  it("uses the app's preview, shortens a long one and keeps the whole for the tooltip", () => {
    expect(previewText((e) => (e as { title: string }).title, { title: 'Pay invoice 7' })).toEqual({ text: 'Pay invoice 7', full: 'Pay invoice 7' });
    const long = 'a very long description '.repeat(10);
    const shown = previewText(() => long, {});
    expect(shown.text.length).toBeLessThanOrEqual(120);
    expect(shown.text.endsWith('…')).toBe(true);
    expect(shown.full).toBe(long);
  });

  it('shows why a preview failed instead of failing the view', () => {
    const shown = previewText(() => {
      throw new Error('no title');
    }, {});
    expect(shown.text).toBe('(preview failed: no title)');
  });

  it('gives the default preview the event itself as the tooltip', () => {
    const event = { id: '3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b', op: 'update', text: 'a note long enough to need more than the card shows' };
    expect(previewText(defaultPreview, event).full).toBe(JSON.stringify(event));
  });

  it('refuses a preview that is not a function, naming it', () => {
    expect(() => checkPreview('preview', 'label')).toThrow(TypeError);
    expect(() => checkPreview('options.preview', {})).toThrow(/options\.preview must be a function/);
    expect(checkPreview('preview', null)).toBe(defaultPreview);
    expect(checkPreview('preview', undefined)).toBe(defaultPreview);
  });
});

describe('workerLabel', () => {
  it('shortens a uuid to a stable prefix and leaves short ids alone', () => {
    expect(workerLabel('consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b')).toBe('consume-3f2a');
    expect(workerLabel('consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b')).toBe(workerLabel('consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b'));
    expect(workerLabel('3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b')).toBe('3f2a9c1e');
    expect(workerLabel('w1')).toBe('w1');
    expect(workerLabel('tab2-w1')).toBe('tab2-w1');
    // The fallback id of a host without randomUUID: time, counter and random, base 36.
    expect(workerLabel('consume-m4x7k2p1-3-8f3kq9z2ab')).toBe('consume-m4x7');
    expect(workerLabel('a-worker-with-a-very-long-descriptive-name')).toBe('a-worker-with-a-ver…');
  });
});

describe('group states in the words of stats()', () => {
  it('gives each group one word, and the words count as stats() counts', async () => {
    const clock = new ManualClock(1_000);
    const transport = new InMemoryTransport<Record<string, unknown>>({ clock: clock.now, onDeadLetter: 'hold' });
    for (const group of ['leased', 'parked', 'held', 'expired']) await transport.publish(group, { op: group });
    await transport.claim('w1', 60_000); // leased
    await transport.nack((await transport.claim('w2', 60_000))!, 60_000, 'HTTP 503'); // parked
    await transport.reject((await transport.claim('w3', 60_000))!, 'refused'); // held
    await transport.claim('w4', 1_000); // expired: ready again once it runs out
    await transport.publish('held', { op: 'edit' });
    clock.advance(2_000);
    const first = await transport.publish('ready', { op: 'create' });
    await transport.publish('delayed', { op: 'later' }, { delayMs: 60_000 });
    await transport.publish('debouncing', { op: 'type' }, { key: 'k', onDuplicate: 'merge', debounceMs: 5_000 });
    await transport.publish('paused', { op: 'p' });
    await transport.pause('paused');
    await transport.publish('blocked', { op: 'after' }, { after: first });
    await transport.publish('paused-blocked', { op: 'after' }, { after: first });
    await transport.pause('paused-blocked');

    const snapshot = await transport.inspect();
    const stats = await transport.stats();
    const words = Object.fromEntries(snapshot.groups.map((g) => [g.groupId, groupState(g)]));
    expect(words).toEqual({
      leased: { word: 'leased', why: null },
      parked: { word: 'waiting', why: 'parked' },
      held: { word: 'held', why: null },
      expired: { word: 'ready', why: null },
      ready: { word: 'ready', why: null },
      delayed: { word: 'waiting', why: 'delayed' },
      debouncing: { word: 'waiting', why: 'debouncing' },
      paused: { word: 'waiting', why: 'paused' },
      blocked: { word: 'blocked', why: null },
      'paused-blocked': { word: 'blocked', why: null },
    });
    const counts: Record<GroupWord, number> = { ready: 0, leased: 0, waiting: 0, blocked: 0, held: 0 };
    for (const g of snapshot.groups) counts[groupState(g).word]++;
    expect(counts).toEqual({ ready: stats.ready, leased: stats.leased, waiting: stats.waiting, blocked: stats.blocked, held: stats.held });
  });
});
