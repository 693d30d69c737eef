/**
 * Storage facts and loss detection from the page, in a real browser: a database this origin had
 * and whose OPFS files are gone opens as `lost`, once, never silently as a healthy empty queue.
 */
import { type BrowserDatabase, openBrowserDatabase } from 'leasehold/browser';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { openBrowserDatabaseWith } from '../../src/browser/client.js';
import type { HostToPage, PageToHost } from '../../src/browser/protocol.js';
import { freshName, removeOpfsPool } from './harness.js';

const opened: BrowserDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

async function open(name: string, storage: 'opfs' | 'memory' = 'opfs'): Promise<BrowserDatabase> {
  const db = await openBrowserDatabase({ name, storage });
  opened.push(db);
  return db;
}

describe('browser database storage', () => {
  it('opens as new, then existing, then lost once its OPFS files are cleared, then existing', async () => {
    const name = freshName('loss');
    const first = await open(name);
    expect(first.opened).toBe('new');
    expect([first.origin, first.lostOrigin]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), null]);
    await first.transport.publish('note-1', { text: 'draft' });
    await first.close();
    const second = await open(name);
    expect(second.opened).toBe('existing');
    expect((await second.transport.stats()).queued).toBe(1);
    expect(second.origin).toBe(first.origin);
    expect(await second.transport.claim('w', 1000)).toMatchObject({ origin: first.origin, counter: 1, lowWater: 1 });
    await second.close();

    await removeOpfsPool(name); // what an eviction or a cleared OPFS leaves: no file, the marker kept
    const heard: unknown[] = [];
    const listener = (event: Event) => heard.push((event as CustomEvent).detail);
    globalThis.addEventListener('leasehold:lost', listener);
    const third = await open(name);
    globalThis.removeEventListener('leasehold:lost', listener);
    expect(third.opened).toBe('lost');
    expect(third.lostOrigin).toBe(first.origin);
    expect(third.origin).not.toBe(first.origin);
    expect(heard).toEqual([{ name, lostOrigin: first.origin, origin: third.origin }]);
    expect((await third.storage()).opened).toBe('lost');
    expect((await third.transport.stats()).queued).toBe(0);
    await third.close();
    const fourth = await open(name);
    expect([fourth.opened, fourth.lostOrigin, fourth.origin]).toEqual(['existing', null, third.origin]);
    await removeOpfsPool(name);
  });

  it('takes db.origin from the database: an older owner that answers with something else leaves it null until one of this build answers', async () => {
    const name = freshName('origin');
    const host = new OlderOwner();
    const db = await openBrowserDatabaseWith({ name }, { createWorker: () => host as unknown as Worker, createBroker: () => null });
    // The older owner answered `host.origin` with its SQL trace ([]): not an origin, so none yet,
    // and no marker (a loss found later must not name a wrong one).
    expect(db.origin).toBeNull();
    expect(host.asked).toBe(1);
    // The owner changes to a tab of this build: the page asks again and keeps what the database says.
    host.origin = 'ab'.repeat(16);
    host.send({ kind: 'owner', owner: { ownerId: 'newer', isThisTab: false, via: 'channel' } });
    await expect.poll(() => db.origin).toBe('ab'.repeat(16));
    host.send({ kind: 'owner', owner: { ownerId: 'another', isThisTab: false, via: 'channel' } });
    expect(host.asked).toBe(2);
    await db.close();
    // The marker was written with that origin: with no OPFS files for the name, the next open finds it lost.
    const again = await openBrowserDatabaseWith({ name }, { createWorker: () => new OlderOwner('cd'.repeat(16)) as unknown as Worker, createBroker: () => null });
    expect([again.opened, again.lostOrigin, again.origin]).toEqual(['lost', 'ab'.repeat(16), 'cd'.repeat(16)]);
    await again.close();
  });

  it('reports persistence, usage and quota, and the engine', async () => {
    const db = await open(freshName('facts'), 'memory');
    expect(db.opened).toBe('new');
    const facts = await db.storage();
    expect(facts.engine).toBe('memory');
    expect(typeof facts.persisted).toBe('boolean');
    expect(facts.estimate?.quota).toBeGreaterThan(0);
    expect(facts.estimate?.usage).toBeGreaterThanOrEqual(0);
    // Firefox asks the user with a prompt and resolves only on an answer, which no one gives
    // under automation: there persist() is left pending here (docs/browser.md says so).
    if (inject('engine') === 'chromium') expect(typeof (await db.persist())).toBe('boolean');
  });
});

/**
 * A stand-in for the page's host worker that forwards to an owner of an older leasehold: one that
 * answered every `host` call with its SQL trace. `origin` is what it answers instead, once set.
 */
class OlderOwner {
  onmessage: ((event: MessageEvent<HostToPage>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  asked = 0;
  constructor(public origin: unknown = []) {}
  postMessage(message: PageToHost): void {
    queueMicrotask(() => {
      if (message.kind === 'open') this.send({ kind: 'opened', owner: { ownerId: 'older', isThisTab: false, via: 'channel' } });
      if (message.kind === 'close') this.send({ kind: 'closed' });
      if (message.kind !== 'call') return;
      if (message.target === 'host' && message.method === 'origin') this.asked++;
      this.send({ kind: 'answer', id: message.id, ok: true, value: message.method === 'origin' ? this.origin : null });
    });
  }
  send(message: HostToPage): void {
    this.onmessage?.({ data: message } as MessageEvent<HostToPage>);
  }
  terminate(): void {}
}
