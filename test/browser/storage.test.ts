/**
 * Storage facts and loss detection from the page, in a real browser: a database this origin had
 * and whose OPFS files are gone opens as `lost`, once, never silently as a healthy empty queue.
 */
import { type BrowserDatabase, openBrowserDatabase } from 'leasehold/browser';
import { afterEach, describe, expect, inject, it } from 'vitest';
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
