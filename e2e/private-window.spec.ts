/**
 * A private window. Chromium's incognito keeps OPFS in memory and leasehold works there (every
 * other spec runs in one). Firefox offers no OPFS in a private window: the open must fail with a
 * StorageError that names the private window and what to do, and `storage: 'memory'` must work.
 */
import { expect, test } from '@playwright/test';
import { firefoxLab } from './support/engines.js';

test("a Firefox private window has no OPFS: the error says so, and storage: 'memory' works", async ({ baseURL, browserName }) => {
  test.skip(browserName !== 'firefox', 'Firefox only: Chromium has OPFS in incognito (the other specs run there)');
  const { browser, page } = await firefoxLab({ 'browser.privatebrowsing.autostart': true }, baseURL);
  try {
    const outcome = await page.evaluate(async () => {
      const w = window as any;
      return w.leasehold.openBrowserDatabase({ name: 'private' }).then(
        async (db: any) => (await db.close(), null),
        (e: any) => ({ name: e.name, code: e.code, message: e.message, isLeasehold: e instanceof w.leasehold.LeaseholdError }),
      );
    });
    expect(outcome).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE', isLeasehold: true });
    expect(outcome!.message).toMatch(/private window/);
    expect(outcome!.message).toMatch(/storage: 'memory'/);
    expect(outcome!.message).not.toMatch(/not a secure context/);
    const event = await page.evaluate(async () => {
      const db = await (window as any).leasehold.openBrowserDatabase({ name: 'private', storage: 'memory' });
      await db.transport.publish('g', 1);
      const lease = await db.transport.claim('w', 1000);
      await db.close();
      return lease.event;
    });
    expect(event).toBe(1);
  } finally {
    await browser.close();
  }
});
