/**
 * A page that cannot run must not hold the queue. A tab in the back/forward cache (Safari and
 * Firefox keep such pages for minutes) or frozen (Chromium's page lifecycle: background tabs on
 * mobile and under memory pressure) lets its host go: the database's Web Lock and OPFS pool pass
 * to another tab, which serves; when the page is shown again or resumed it joins as a forwarder
 * and its calls work.
 *
 * No automated browser here freezes a page for real: CDP's Page.setWebLifecycleState('frozen')
 * leaves a headless page running (checked on Chromium 156: its timers and its workers' ran on at
 * the same pace for a second "frozen", no `freeze` fired, headless or headed under Xvfb, behind
 * another window or minimized: a visible page is not frozen, and no page is hidden there). So the
 * freeze tests fire `freeze` and `resume` at the document as the browser does (bubbling, per the
 * Page Lifecycle spec) and show what leasehold does on them; that the browser fires them on a
 * real freeze is the browser's part.
 */
import { type BrowserContext, chromium, expect, type Page, test } from '@playwright/test';
import { chromiumArgs, findChromium } from '../scripts/chromium.mjs';
import { chromiumOnly } from './support/engines.js';
import { openDb, openLab, uniqueName } from './support/lab.js';

const owner = (page: Page) => page.evaluate(() => (window as any).db.owner());

/** Publishes `event` to group g through `page`, then claims and acks the group's head: its event. */
function publishAndTakeOne(page: Page, event: string): Promise<unknown> {
  return page.evaluate(async (event) => {
    const { db } = window as any;
    await db.transport.publish('g', event);
    const lease = await db.transport.claim('w', 60_000);
    await db.transport.ack(lease);
    return lease.event;
  }, event);
}

/** Two tabs of one database, the first the owner. */
async function twoTabs(context: BrowserContext, name: string): Promise<[Page, Page]> {
  const first = await context.newPage();
  await openLab(first);
  await openDb(first, name);
  await first.evaluate(() => (window as any).db.transport.publish('g', 'before'));
  const second = await context.newPage();
  await openLab(second);
  await openDb(second, name);
  expect(await owner(first)).toMatchObject({ isThisTab: true });
  expect(await owner(second)).toMatchObject({ isThisTab: false });
  return [first, second];
}

/** While `first` cannot run, `second` owns the database and serves; afterwards `first` forwards to it. */
async function takeOverAndReturn(first: Page, second: Page, away: () => Promise<void>, back: () => Promise<void>): Promise<void> {
  await away();
  await expect.poll(async () => (await owner(second)).isThisTab).toBe(true);
  expect(await publishAndTakeOne(second, 'while-away')).toBe('before');
  await back();
  const secondId = (await owner(second)).ownerId;
  await expect.poll(() => owner(first)).toMatchObject({ isThisTab: false, ownerId: secondId });
  // The page that came back is a forwarder whose calls work, in order with the owner's.
  expect(await publishAndTakeOne(first, 'after')).toBe('while-away');
  expect(await owner(second)).toMatchObject({ isThisTab: true });
}

test('a tab in the back/forward cache lets the queue go: another takes over, and it comes back as a forwarder', async ({ browserName, baseURL }) => {
  // Firefox (ESR 153, checked under Playwright over BiDi) keeps a plain page in its back/forward
  // cache and restores it, but never a page that holds a Web Lock or whose worker does, as every
  // page with a leasehold database open does: going back loads it anew, so no cached page holds
  // the queue there, and there is nothing to show.
  chromiumOnly(browserName, 'a back/forward cache that keeps pages holding a Web Lock (Firefox evicts them at once)');
  // Playwright starts Chromium with --disable-back-forward-cache: this test starts its own without it.
  const browser = await chromium.launch({ executablePath: await findChromium(), args: chromiumArgs, ignoreDefaultArgs: ['--disable-back-forward-cache'] });
  try {
    const context = await browser.newContext({ baseURL });
    const [first, second] = await twoTabs(context, uniqueName('bfcache'));
    await first.evaluate(() => {
      const w = window as any;
      w.lifecycle = [];
      for (const type of ['pagehide', 'pageshow']) addEventListener(type, (event) => w.lifecycle.push(`${type}:${(event as PageTransitionEvent).persisted}`));
    });
    await takeOverAndReturn(
      first,
      second,
      () => first.goto('/lab.html?away').then(() => undefined),
      // A page restored from the cache fires pageshow, not load.
      () => first.goBack({ waitUntil: 'commit' }).then(() => undefined),
    );
    // The same page came back (its own state is still there), not a new load of it.
    expect(await first.evaluate(() => (window as any).lifecycle)).toEqual(['pagehide:true', 'pageshow:true']);
  } finally {
    await browser.close();
  }
});

/** Fires a Page Lifecycle event at `page`'s document, as the browser does when it freezes or resumes the page. */
function lifecycleEvent(page: Page, type: 'freeze' | 'resume'): Promise<void> {
  return page.evaluate((type) => void document.dispatchEvent(new Event(type, { bubbles: true })), type);
}

/** Claims and acks everything group g holds through `page`: the events, in order. */
function drain(page: Page): Promise<unknown[]> {
  return page.evaluate(async () => {
    const { db } = window as any;
    const events: unknown[] = [];
    for (let lease = await db.transport.claim('w', 60_000); lease; lease = await db.transport.claim('w', 60_000)) {
      events.push(lease.event);
      await db.transport.ack(lease);
    }
    return events;
  });
}

test('a frozen owner tab lets the queue go: another takes over, and on resume it comes back as a forwarder', async ({ context }) => {
  const [first, second] = await twoTabs(context, uniqueName('freeze'));
  await takeOverAndReturn(
    first,
    second,
    () => lifecycleEvent(first, 'freeze'),
    () => lifecycleEvent(first, 'resume'),
  );
});

test('a call in flight when its tab is frozen fails saying it may or may not have been applied; the queue goes on without duplicates', async ({ context }) => {
  const [first, second] = await twoTabs(context, uniqueName('freeze-mid-call'));
  // The publish is posted to the owner's host worker and the page freezes before any answer can
  // arrive (an answer is a task; both happen in this one): the call must not hang until a resume
  // that may never come, and must not claim an outcome it cannot know.
  const outcome = await first.evaluate(async () => {
    const { db } = window as any;
    const call = db.transport.publish('g', 'in-flight').then(
      () => ({ settled: 'resolved' }),
      (error: { name: string; code: string; message: string }) => ({ settled: 'rejected', name: error.name, code: error.code, message: error.message }),
    );
    document.dispatchEvent(new Event('freeze', { bubbles: true }));
    return call;
  });
  expect(outcome).toMatchObject({ settled: 'rejected', name: 'StorageError', code: 'STORAGE_BUSY' });
  expect(outcome.message).toMatch(/may or may not have been applied/);
  await expect.poll(async () => (await owner(second)).isThisTab).toBe(true);
  // The frozen tab's host may have committed the publish or not before it was ended: either way
  // once, never twice, and nothing else lost.
  const seen = await drain(second);
  expect([['before'], ['before', 'in-flight']]).toContainEqual(seen);
  // A page that runs again without a resume event (none is promised) joins at its next call.
  expect(await first.evaluate(() => (window as any).db.transport.publish('g', 'after'))).toEqual(expect.any(Number));
  expect(await owner(first)).toMatchObject({ isThisTab: false, ownerId: (await owner(second)).ownerId });
  expect(await drain(second)).toEqual(['after']);
});
