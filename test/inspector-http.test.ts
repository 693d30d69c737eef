import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryTransport, LeaseholdError, ManualClock } from '../src/index.js';
import { httpTransport } from '../src/inspector/client.js';
import { type InspectorHandler, inspectorHandler } from '../src/inspector/http.js';
import { watchQueue } from '../src/watch/watch.js';
import { flush } from './support/runtime-scheduler.js';

const URL_ = 'http://app.test/admin/leasehold';
let handlers: InspectorHandler[] = [];
afterEach(() => {
  for (const handler of handlers) handler.close();
  handlers = [];
});

/** A server queue, its handler, and a page-side client that reaches it through `fetch`. */
function serve(options: { actions?: boolean; waitMs?: number; maxEventChars?: number | null } = {}) {
  const clock = new ManualClock(1_000);
  const server = new InMemoryTransport<{ text: string }>({ clock: clock.now, maxAttempts: 1 });
  const handler = inspectorHandler(server as never, options);
  handlers.push(handler);
  const client = httpTransport<{ text: string }>(URL_, { fetch: (input, init) => handler(new Request(input as string, init)) });
  return { clock, server, handler, client };
}

async function deadLetter(server: InMemoryTransport<{ text: string }>): Promise<number> {
  const seq = await server.publish('note-1', { text: 'x' });
  const lease = await server.claim('w', 1_000);
  await server.reject(lease!, 'the server said 422');
  return seq;
}

describe('inspectorHandler and httpTransport', () => {
  it('read the server queue as the server sees it', async () => {
    const { server, client } = serve();
    await server.publish('note-1', { text: 'hello <b>' });
    expect(await client.stats()).toEqual(await server.stats());
    const snapshot = await client.inspect();
    expect(snapshot.groups[0]?.messages[0]?.event).toEqual({ text: 'hello <b>' });
    expect(await client.deadLetters()).toEqual([]);
    expect(await client.inspectGroup('note-1')).toEqual(await server.inspectGroup('note-1'));
  });

  it('refuse writes, and actions unless the handler allows them', async () => {
    const { server, client } = serve();
    const seq = await deadLetter(server);
    await expect(client.publish('g', { text: 'x' })).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    await expect(client.claim('w', 1_000)).rejects.toBeInstanceOf(LeaseholdError);
    await expect(client.redrive(seq)).rejects.toMatchObject({ code: 'ACCESS_DENIED' });
    expect((await server.stats()).dead).toBe(1);
  });

  it('redrive and discard when allowed, with the backend own errors', async () => {
    const { server, client } = serve({ actions: true });
    const seq = await deadLetter(server);
    await client.redrive(seq);
    expect((await server.stats()).queued).toBe(1);
    await expect(client.discard(999)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(client.redrive(Number.NaN)).rejects.toBeInstanceOf(RangeError);
  });

  it('carry change notices to the page by long poll', async () => {
    const { server, client } = serve();
    let notices = 0;
    const stop = client.onChange(() => notices++);
    await flush();
    await server.publish('note-1', { text: 'a' });
    await expect.poll(() => notices).toBe(1);
    stop();
  });

  it('let watchQueue follow the server queue within one notice, without polling', async () => {
    const { server, client } = serve();
    const watch = watchQueue(client, { inspect: true });
    watch.subscribe(() => {});
    await expect.poll(() => watch.getSnapshot()?.stats?.queued).toBe(0);
    await server.publish('note-7', { text: 'b' });
    await expect.poll(() => watch.getSnapshot()?.snapshot?.groups.map((g) => g.groupId)).toEqual(['note-7']);
    watch.close();
  });

  it('answer a held poll at the wait bound when nothing changes', async () => {
    const { handler } = serve({ waitMs: 20 });
    const ask = (since: number | null) => handler(new Request(URL_, { method: 'POST', body: JSON.stringify({ method: 'changes', args: [since] }) })).then((r) => r.json());
    const first = (await ask(null)) as { value: number };
    expect(await ask(first.value)).toEqual({ ok: true, value: first.value });
  });

  it('refuse what is not a call', async () => {
    const { handler } = serve();
    expect((await handler(new Request(URL_))).status).toBe(405);
    const answer = (await (await handler(new Request(URL_, { method: 'POST', body: '{not json' }))).json()) as { ok: boolean; error: { name: string } };
    expect(answer).toMatchObject({ ok: false, error: { name: 'TypeError' } });
  });

  it('refuse bad arguments, naming them', () => {
    expect(() => inspectorHandler({} as never)).toThrow(TypeError);
    expect(() => inspectorHandler(new InMemoryTransport(), { actions: 1 as unknown as boolean })).toThrow(/options\.actions/);
    expect(() => inspectorHandler(new InMemoryTransport(), { waitMs: -1 })).toThrow(RangeError);
    expect(() => httpTransport(5 as unknown as string)).toThrow(/url/);
    expect(() => httpTransport(URL_, { headers: 'x' as never })).toThrow(/options\.headers/);
  });
});

describe('inspectorHandler: large events', () => {
  it('sends an event longer than maxEventChars as its length and start, in every read, leaving the queue whole', async () => {
    const { server, client } = serve({ maxEventChars: 100 });
    await deadLetter(server);
    await server.publish('note-1', { text: 'x'.repeat(500) });
    await server.publish('note-2', { text: 'short' });
    const cut = { truncated: true, chars: 511, start: JSON.stringify({ text: 'x'.repeat(500) }).slice(0, 100) };
    const snapshot = await client.inspect();
    expect(snapshot.groups.find((g) => g.groupId === 'note-1')!.messages[0]!.event).toEqual(cut);
    expect(snapshot.groups.find((g) => g.groupId === 'note-2')!.messages[0]!.event).toEqual({ text: 'short' });
    expect((await client.inspectGroup('note-1')).group!.messages[0]!.event).toEqual(cut);
    expect((await client.deadLetters())[0]!.event).toEqual({ text: 'x' });
    expect((await server.inspect()).groups.find((g) => g.groupId === 'note-1')!.messages[0]!.event).toEqual({ text: 'x'.repeat(500) });
  });

  it('cuts at 4096 characters by default, sends everything whole with null, and refuses a bad limit', async () => {
    const big = { text: 'y'.repeat(5_000) };
    const cutByDefault = serve();
    await cutByDefault.server.publish('g', big);
    expect((await cutByDefault.client.inspect()).groups[0]!.messages[0]!.event).toMatchObject({ truncated: true, chars: 5_011 });
    const whole = serve({ maxEventChars: null });
    await whole.server.publish('g', big);
    expect((await whole.client.inspect()).groups[0]!.messages[0]!.event).toEqual(big);
    expect(() => inspectorHandler(whole.server as never, { maxEventChars: 0 })).toThrow(RangeError);
  });
});
