/**
 * The in-memory transport's two ways of keeping events: by identity (the seed's: the very object
 * comes back) and as JSON copies (`events: 'json'`, what the SQL backends do), and what the
 * difference means to a test.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryTransport } from '../src/transport/memory.js';

type Note = { text: string; at?: unknown; tags?: string[] };

describe("InMemoryTransport events: 'identity' and 'json'", () => {
  it("keeps the very object by default: a later change to it reaches the queued message", async () => {
    const transport = new InMemoryTransport<Note>();
    const event: Note = { text: 'draft', at: new Date(0) };
    await transport.publish('n', event);
    event.text = 'changed after publish';
    const lease = (await transport.claim('w', 1000))!;
    expect(lease.event).toBe(event);
    expect(lease.event.at).toBeInstanceOf(Date);
  });

  it("keeps a JSON copy with events: 'json', as SQL does: a Date comes back as its string", async () => {
    const transport = new InMemoryTransport<Note>({ events: 'json' });
    const event: Note = { text: 'draft', at: new Date(0) };
    await transport.publish('n', event);
    event.text = 'changed after publish';
    const lease = (await transport.claim('w', 1000))!;
    expect(lease.event).toEqual({ text: 'draft', at: '1970-01-01T00:00:00.000Z' });
  });

  it('lets no change by a handler, an inspect or a dead-letter read reach the queue', async () => {
    const transport = new InMemoryTransport<Note>({ events: 'json', maxAttempts: 2 });
    await transport.publish('n', { text: 'draft', tags: ['a'] });
    const first = (await transport.claim('w', 1000))!;
    first.event.tags!.push('added by a handler');
    first.event.text = 'mutated before the nack';
    await transport.nack(first, 0);
    (await transport.inspect()).groups[0]!.messages[0]!.event.text = 'mutated in a snapshot';
    (await transport.inspectGroup('n')).group!.messages[0]!.event.text = 'mutated in a group read';
    const second = (await transport.claim('w', 1000))!;
    expect(second.event).toEqual({ text: 'draft', tags: ['a'] });
    await transport.nack(second, 0);
    expect(await transport.claim('w', 1000)).toBeNull(); // the second nack was its last attempt
    (await transport.deadLetters())[0]!.event.text = 'mutated in a dead letter';
    expect((await transport.deadLetters())[0]!.event).toEqual({ text: 'draft', tags: ['a'] });
  });

  it('merges and replaces on the copies, and refuses a bad mode', async () => {
    const transport = new InMemoryTransport<Record<string, unknown>>({ events: 'json' });
    const patch = { title: 'T' };
    await transport.publish('n', { body: 'b' }, { key: 'k', onDuplicate: 'merge' });
    await transport.publish('n', patch, { key: 'k', onDuplicate: 'merge' });
    patch.title = 'changed after the merge';
    expect((await transport.claim('w', 1000))!.event).toEqual({ body: 'b', title: 'T' });
    expect(() => new InMemoryTransport({ events: 'copy' as never })).toThrow(RangeError);
    expect(() => new InMemoryTransport({ events: 1 as never })).toThrow(TypeError);
  });
});
