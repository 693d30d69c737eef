import { expect, type Page, test } from '@playwright/test';
import { closeOwner, consoleErrors, group, logEntries, openDemo, openSecondTab, screenshots, settled, startLesson, step } from './demo-support.js';

test.use({ viewport: { width: 1280, height: 900 } });

test('lesson 7: a second tab joins through the owner; when the owner closes, it takes the file over and work continues', async ({ context }) => {
  const first = await context.newPage();
  await openDemo(first);
  await startLesson(first, 7);
  await step(first, 1000);
  await expect(first.getByTestId('owner')).toHaveText(/^This tab owns the database file/);
  await expect(first.locator('[data-testid="worker"][data-worker="w1"] .holds')).toContainText('holds upload-1#');
  await screenshots(first, 'lesson-7-owner');

  const second = await openSecondTab(first);
  // The second tab's worker works the same queue, its calls forwarded to the first tab.
  await expect(logEntries(second, { kind: 'claim', worker: 'tab2-w1' })).toHaveCount(1);
  await expect(second.locator('[data-testid="worker"][data-worker="tab2-w1"] .holds')).toContainText('holds upload-2#');
  await screenshots(second, 'lesson-7-second-tab');

  // The owner tab closes, holding w1's lease on upload-1.
  await closeOwner(first, second);
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

/** Lesson 9 up to the hold: the create rejected at 1 s, contact-43 done, contact-42's updates held. Returns the create's seq. */
async function heldAtRefusal(page: Page): Promise<number> {
  await openDemo(page);
  await startLesson(page, 9);
  const seq = Number(await group(page, 'contact-42').getByTestId('message').first().getAttribute('data-seq'));
  await step(page, 1000);
  // Refused (a 4xx): a dead letter at once, on its first attempt, with the server's reason.
  await expect(logEntries(page, { kind: 'reject', seq: String(seq) })).toContainText('attempt 1');
  await expect(logEntries(page, { kind: 'dead', seq: String(seq) })).toContainText('holds contact-42');
  await step(page, 1000, 3);
  // contact-43 flowed meanwhile; contact-42 is held, its updates marked so and never claimed.
  await expect(group(page, 'contact-43')).toHaveCount(0);
  await expect(group(page, 'contact-42')).toHaveAttribute('data-status', 'held');
  await expect(group(page, 'contact-42').getByTestId('message')).toHaveCount(2);
  for (const update of await group(page, 'contact-42').getByTestId('message').all()) await expect(update).toHaveAttribute('data-state', 'held');
  await expect(logEntries(page, { kind: 'claim', group: 'contact-42' })).toHaveCount(1);
  await page.locator('[data-panel="dead"] summary').click();
  await expect(page.getByTestId('dead-letter')).toContainText('1 try: 422: refused until the fix ships');
  return seq;
}

test('lesson 9: a refused create holds its record’s updates; after the fix, Redrive puts it back at the head and the updates follow it', async ({ page }) => {
  const seq = await heldAtRefusal(page);
  await screenshots(page, 'lesson-9-held');
  await step(page, 1000, 2); // the fix ships at 5 s
  await page.getByRole('button', { name: `redrive contact-42#${seq}` }).click();
  await expect(logEntries(page, { kind: 'redrive', seq: String(seq) })).toContainText('back at the head of its group');
  await expect(page.getByTestId('dead-letter')).toHaveCount(0);
  await step(page, 1000, 4);
  // The create, then its updates, in order: each acked after the one before.
  const acks = [seq, seq + 1, seq + 2].map((s) => logEntries(page, { kind: 'ack', seq: String(s) }));
  for (const ack of acks) await expect(ack).toHaveCount(1);
  const times = await Promise.all(acks.map(async (ack) => Number(await ack.getAttribute('data-time'))));
  expect(times).toEqual([...times].sort((a, b) => a - b));
  expect(new Set(times).size).toBe(3);
  await expect(group(page, 'contact-42')).toHaveCount(0);
  await settled(page);
  await screenshots(page, 'lesson-9-redrive');
  expect(consoleErrors(page)).toEqual([]);
});

test('lesson 9: a refused create holds its record’s updates; Discard drops it for good and the group goes on with its updates', async ({ page }) => {
  const seq = await heldAtRefusal(page);
  await page.getByRole('button', { name: `discard contact-42#${seq}`, exact: true }).click();
  await expect(logEntries(page, { kind: 'discard', seq: String(seq) })).toContainText('goes on with its next message');
  await expect(page.getByTestId('dead-letter')).toHaveCount(0);
  await step(page, 1000, 3);
  for (const s of [seq + 1, seq + 2]) await expect(logEntries(page, { kind: 'ack', seq: String(s) })).toHaveCount(1);
  await expect(logEntries(page, { kind: 'ack', seq: String(seq) })).toHaveCount(0);
  await expect(group(page, 'contact-42')).toHaveCount(0);
  await settled(page);
  await screenshots(page, 'lesson-9-discard');
  expect(consoleErrors(page)).toEqual([]);
});
