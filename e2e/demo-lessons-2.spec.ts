import { expect, test } from '@playwright/test';
import { consoleErrors, group, logEntries, openDemo, screenshots, settled, startLesson, step, watchErrors } from './demo-support.js';

test.use({ viewport: { width: 1280, height: 900 } });

test('lesson 7: a second tab joins through the owner; when the owner closes, it takes the file over and work continues', async ({ context }) => {
  const first = await context.newPage();
  await openDemo(first);
  await startLesson(first, 7);
  await step(first, 1000);
  await expect(first.getByTestId('owner')).toHaveText(/^This tab owns the database file/);
  await expect(first.locator('[data-testid="worker"][data-worker="w1"] .holds')).toContainText('holds upload-1#');
  await screenshots(first, 'lesson-7-owner');

  const [second] = await Promise.all([context.waitForEvent('page'), first.getByTestId('lesson-action').click()]);
  watchErrors(second);
  await expect(second.locator('body')).toHaveAttribute('data-ready', 'true');
  await second.bringToFront();
  await expect(second.getByTestId('lesson-text')).toContainText('This is the second tab');
  await expect(second.getByTestId('owner')).toHaveText(/^Another tab owns the database file/);
  // The second tab's worker works the same queue, its calls forwarded to the first tab.
  await expect(logEntries(second, { kind: 'claim', worker: 'tab2-w1' })).toHaveCount(1);
  await expect(second.locator('[data-testid="worker"][data-worker="tab2-w1"] .holds')).toContainText('holds upload-2#');
  await screenshots(second, 'lesson-7-second-tab');

  // The owner tab closes, holding w1's lease on upload-1.
  expect(consoleErrors(first)).toEqual([]);
  await first.close();
  await expect(second.getByTestId('owner')).toHaveText(/^This tab owns the database file/, { timeout: 30_000 }); // takeover opens the file: seconds when loaded
  await expect(logEntries(second, { kind: 'owner' }).first()).toContainText('This tab took over the database file');
  // Work continues here, and once w1's lease has run out its message is claimed again.
  const retaken = logEntries(second, { kind: 'claim', worker: 'tab2-w1', group: 'upload-1', attempt: '2' });
  for (let i = 0; i < 12 && (await retaken.count()) === 0; i++) await step(second, 1000);
  await expect(retaken).toHaveCount(1);
  await expect(retaken).toContainText('the lease of w1 expired');
  await expect(logEntries(second, { kind: 'ack', worker: 'tab2-w1' }).first()).toBeVisible();
  await screenshots(second, 'lesson-7');
  expect(consoleErrors(second)).toEqual([]);
});

test('lesson 8: a poison message goes to the dead letters after maxAttempts, its group moves on, and the redrive succeeds', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 8);
  const orders = group(page, 'import-1').getByTestId('message').first();
  const seq = Number(await orders.getAttribute('data-seq'));
  await step(page, 1000, 16);
  // Four deliveries, each failed and parked 2 s; the claim that found a fifth due buried it.
  await expect(logEntries(page, { kind: 'retry', seq: String(seq) })).toHaveCount(4);
  await expect(page.locator(`[data-testid="tl-park"][data-seq="${seq}"]`)).toHaveCount(4);
  const dead = logEntries(page, { kind: 'dead', seq: String(seq) });
  await expect(dead).toContainText('maxAttempts 4');
  const deadAt = await dead.getAttribute('data-time');
  await expect(page.locator(`[data-testid="tl-dead"][data-seq="${seq}"]`)).toHaveAttribute('data-time', deadAt!);
  // The same claim went on to customers.csv: the group is no longer blocked.
  await expect(logEntries(page, { kind: 'claim', seq: String(seq + 1) })).toHaveAttribute('data-time', deadAt!);
  await page.locator('[data-panel="dead"] summary').click();
  await expect(page.getByTestId('dead-letter')).toContainText('4 tries');
  await screenshots(page, 'lesson-8-dead');

  await step(page, 1000, 2);
  const redrive = logEntries(page, { kind: 'redrive' });
  await expect(redrive).toHaveAttribute('data-time', '18000');
  const fresh = await redrive.getAttribute('data-seq');
  await expect(page.getByTestId('dead-letter')).toHaveCount(0);
  await step(page, 1000);
  await expect(logEntries(page, { kind: 'ack', seq: fresh! })).toHaveCount(1);
  await expect(group(page, 'import-1')).toHaveCount(0);
  await settled(page);
  await screenshots(page, 'lesson-8');
  expect(consoleErrors(page)).toEqual([]);
});
