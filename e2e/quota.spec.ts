/**
 * Quota exceeded on OPFS in Firefox: the origin's storage limit set low through Firefox's own
 * quota manager (a fixed global limit; each site gets a share of it). Writing past it must fail
 * with StorageError STORAGE_FULL that says so (not sqlite's "disk I/O error"), with nothing half
 * written. Chromium's run of the same path, with the room given back, is
 * storage-faults.chromium.spec.ts (CDP's quota override).
 */
import { expect, test } from '@playwright/test';
import { firefoxLab } from './support/engines.js';

test('Firefox: quota exceeded while writing is StorageError STORAGE_FULL, and what was acknowledged is kept', async ({ baseURL, browserName }) => {
  test.skip(browserName !== 'firefox', 'Firefox only: Chromium runs this in storage-faults.chromium.spec.ts');
  test.setTimeout(120_000);
  // 50 MB for all sites, of which one site may use a fifth (the 10 MB floor): a few hundred publishes.
  const { browser, page } = await firefoxLab({ 'dom.quotaManager.temporaryStorage.fixedLimit': 50_000 }, baseURL);
  try {
    const outcome = await page.evaluate(async () => {
      const w = window as any;
      w.db = await w.leasehold.openBrowserDatabase({ name: `quota-${Date.now()}` });
      const big = 'x'.repeat(50_000);
      let acknowledged = 0;
      for (let i = 0; i < 1_000; i++) {
        try {
          await w.db.transport.publish('fill', { i, big });
          acknowledged++;
        } catch (e: any) {
          return { acknowledged, error: { name: e.name, code: e.code, message: e.message } };
        }
      }
      return { acknowledged, error: null };
    });
    expect(outcome.error).toMatchObject({ name: 'StorageError', code: 'STORAGE_FULL' });
    expect(outcome.error!.message).toMatch(/quota/i);
    expect(outcome.error!.message).not.toMatch(/disk I\/O error/i);
    expect(outcome.acknowledged).toBeGreaterThan(0);
    const kept = await page.evaluate(async () => (await (window as any).db.transport.inspect()).groups.find((g: any) => g.groupId === 'fill').messages.map((m: any) => m.event.i));
    expect(kept).toEqual(Array.from({ length: outcome.acknowledged }, (_, i) => i));
  } finally {
    await browser.close();
  }
});
