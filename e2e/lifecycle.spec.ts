/**
 * A page that cannot run must not hold the queue. A tab in the back/forward cache (Safari and
 * Firefox keep such pages for minutes) lets its host go: the database's Web Lock and OPFS pool
 * pass to another tab, which serves; when the page is shown again it joins as a forwarder and its
 * calls work. (A `freeze` takes the same path in the client; CDP's Page.setWebLifecycleState
 * freezes a headless page without firing `freeze`, so no test here can show that one.)
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
  // Firefox under Playwright's remote agent never restores a page from its back/forward cache
  // (checked: not even a page with nothing open), so only Chromium can show it here.
  chromiumOnly(browserName, 'a back/forward cache that automation keeps (Playwright starts Chromium with --disable-back-forward-cache; this test starts its own without it)');
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
