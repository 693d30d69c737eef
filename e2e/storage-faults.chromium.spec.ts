import { expect, test } from '@playwright/test';
import { openDb, openLab, uniqueName } from './support/lab.js';

test('quota exceeded while writing: a clear StorageError, no partial write, and the page recovers once there is room', async ({ page, context, baseURL }) => {
  test.setTimeout(90_000);
  const name = uniqueName('quota');
  await openLab(page);
  await openDb(page, name);
  await page.evaluate(() => (window as any).db.transport.publish('warm', 'up'));
  const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  const cdp = await context.newCDPSession(page);
  // The browser's own quota, lowered for this origin: the same path a full disk or a site over
  // its quota takes inside Chromium.
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin, quotaSize: usage + 2 * 1024 * 1024 });

  const outcome = await page.evaluate(async () => {
    const { db } = window as any;
    const big = 'x'.repeat(50_000);
    let acknowledged = 0;
    for (let i = 0; i < 400; i++) {
      try {
        await db.transport.publish('fill', { i, big });
        acknowledged++;
      } catch (e: any) {
        return { acknowledged, error: { name: e.name, code: e.code, message: e.message } };
      }
    }
    return { acknowledged, error: null };
  });
  expect(outcome.error).toMatchObject({ name: 'StorageError', code: 'STORAGE_FULL' });
  expect(outcome.error!.message).toMatch(/quota|space/i);
  expect(outcome.acknowledged).toBeGreaterThan(0);

  // No partial write: exactly the acknowledged publishes are there, and reads still work.
  const kept = await page.evaluate(async () => (await (window as any).db.transport.inspect()).groups.find((g: any) => g.groupId === 'fill').messages.map((m: any) => m.event.i));
  expect(kept).toEqual(Array.from({ length: outcome.acknowledged }, (_, i) => i));

  // Room again: writes work again, on the same open database.
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin });
  const after = await page.evaluate(async () => {
    const { db } = window as any;
    await db.transport.publish('after', { ok: true });
    const lease = await db.transport.claim('w', 1000);
    return lease.groupId;
  });
  expect(after).toBe('warm');
});
