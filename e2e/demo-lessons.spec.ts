import { expect, test } from '@playwright/test';
import { consoleErrors, group, logEntries, message, now, openDemo, screenshots, startLesson, step } from './demo-support.js';

test.afterEach(({ page }) => expect(consoleErrors(page)).toEqual([]));

test.use({ viewport: { width: 1280, height: 900 } });

test('lesson 1: the crashed worker’s message is taken by another worker as attempt 2, only after its lease ran out', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 1);
  const first = group(page, 'order-7').getByTestId('message').first();
  await expect(first).toHaveAttribute('data-holder', 'w1');
  const seq = await first.getAttribute('data-seq');
  const chip = message(page, seq!);

  await step(page, 1000);
  await expect(page.locator('[data-testid="worker"][data-worker="w1"]')).toHaveAttribute('data-status', 'crashed');
  await expect(logEntries(page, { kind: 'crash', worker: 'w1' })).toHaveCount(1);
  // Up to the lease's last millisecond (5.0 s) nobody may take it, though w2 is idle.
  await step(page, 1000, 4);
  expect(await now(page)).toBe(5000);
  await expect(chip).toHaveAttribute('data-holder', 'w1');
  await expect(chip).toHaveAttribute('data-attempt', '1');
  await expect(page.locator('[data-testid="worker"][data-worker="w2"]')).toHaveAttribute('data-status', 'idle');
  await step(page, 100);
  await expect(chip).toHaveAttribute('data-holder', 'w2');
  await expect(chip).toHaveAttribute('data-attempt', '2');
  await expect(chip).toHaveAttribute('data-state', 'leased');
  const claim = logEntries(page, { kind: 'claim', worker: 'w2', seq: seq!, attempt: '2' });
  await expect(claim).toContainText('the lease of w1 expired at 5.0 s');
  await expect(claim).toHaveAttribute('data-time', '5100');
  await screenshots(page, 'lesson-1');
});

/** The log's claims, oldest first, as "worker→group". */
async function claims(page: import('@playwright/test').Page): Promise<string[]> {
  const entries = await logEntries(page, { kind: 'claim' }).evaluateAll((nodes) =>
    nodes.map((n) => ({ id: Number(n.getAttribute('data-time')), text: `${n.getAttribute('data-worker')}→${n.getAttribute('data-group')}` })),
  );
  // The log shows the newest first; entries at one time keep their order reversed too.
  return entries.reverse().map((e) => e.text);
}

test('lesson 2: round-robin serves the quiet groups between the busy group’s messages', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 2);
  await step(page, 1000, 4);
  expect(await claims(page)).toEqual(['w1→busy', 'w1→quiet-a', 'w1→quiet-b', 'w1→quiet-c', 'w1→busy']);
  // The claimed group goes to the back of the line.
  await expect(page.getByTestId('group').last()).toHaveAttribute('data-group', 'busy');
  await screenshots(page, 'lesson-2');
});

test('lesson 3: a worker with floor 3 skips the low-priority groups until a floor-0 worker joins', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 3);
  await step(page, 1000, 4);
  expect(await claims(page)).toEqual(['w1→alert', 'w1→page', 'w1→alert']);
  await expect(page.locator('[data-testid="worker"][data-worker="w1"]')).toHaveAttribute('data-status', 'idle');
  for (const low of ['report', 'sync']) {
    for (const chip of await group(page, low).getByTestId('message').all()) {
      await expect(chip).toHaveAttribute('data-state', 'ready');
      await expect(chip).toHaveAttribute('data-attempt', '0');
    }
  }
  await step(page, 1000);
  await expect(logEntries(page, { kind: 'claim', worker: 'w2', group: 'report' })).toHaveCount(1);
  await screenshots(page, 'lesson-3');
});

test('lesson 4: a park blocks its group while the others flow, then the message comes back as attempt 2', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 4);
  const [charge, receipt] = await group(page, 'pay-1').getByTestId('message').all();
  const chargeSeq = await charge!.getAttribute('data-seq');
  await step(page, 1000);
  await expect(charge!).toHaveAttribute('data-state', 'parked');
  await expect(group(page, 'pay-1')).toHaveAttribute('data-status', 'parked');
  await expect(logEntries(page, { kind: 'park', seq: chargeSeq! })).toContainText('parked until 5.0 s');
  await screenshots(page, 'lesson-4-parked');
  await step(page, 1000, 4);
  // Every mail message was delivered while pay-1 waited; its receipt never moved.
  for (const mail of ['mail-1', 'mail-2', 'mail-3']) await expect(group(page, mail)).toHaveCount(0);
  await expect(receipt!).toHaveAttribute('data-attempt', '0');
  await expect(charge!).toHaveAttribute('data-state', 'parked');
  await step(page, 100);
  await expect(charge!).toHaveAttribute('data-attempt', '2');
  await expect(logEntries(page, { kind: 'claim', seq: chargeSeq!, attempt: '2' })).toContainText('its park ended at 5.0 s');
  await screenshots(page, 'lesson-4');
});

test('lesson 5: the stalled worker comes back late and its ack is refused (fencing)', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 5);
  const chip = group(page, 'invoice-1').getByTestId('message').first();
  await step(page, 1000);
  await expect(page.locator('[data-testid="worker"][data-worker="w1"]')).toHaveAttribute('data-status', 'stalled');
  await step(page, 1000, 2);
  await expect(chip).toHaveAttribute('data-holder', 'w1');
  await step(page, 100);
  await expect(chip).toHaveAttribute('data-holder', 'w2');
  await expect(chip).toHaveAttribute('data-attempt', '2');
  await step(page, 1000);
  const refused = logEntries(page, { kind: 'refused', worker: 'w1' });
  await expect(refused).toContainText('LeaseLostError');
  await expect(refused).toContainText('w2 holds attempt 2');
  await expect(page.locator('[data-testid="worker"][data-worker="w1"]')).toContainText('ack refused: LeaseLostError');
  // The timeline marks the refusal on invoice-1's lane at the moment it was made: w1 woke at
  // 4.0 s, seen at the next step (4.1 s), which is also where the now line stands.
  await expect(refused).toHaveAttribute('data-time', '4100');
  const mark = page.locator('[data-testid="tl-refused"][data-group="invoice-1"]');
  await expect(mark).toHaveAttribute('data-time', '4100');
  await expect(mark).toHaveAttribute('data-attempt', '1');
  // Measured again until both are drawn: the timeline redraws its lanes on animation frames,
  // and an element being replaced has no box for that moment.
  const apart = async () => {
    const [markBox, nowBox] = [await mark.locator('line').last().boundingBox(), await page.locator('.tl-lanes [data-testid="tl-now"]').boundingBox()];
    return markBox && nowBox ? Math.abs(markBox.x - nowBox.x) : Infinity;
  };
  await expect.poll(apart).toBeLessThan(2);
  // w1's bar ran out at 3.0 s unacked; w2's attempt 2 is held.
  await expect(page.locator('[data-testid="tl-lease"][data-worker="w1"][data-attempt="1"]')).toHaveAttribute('data-state', 'expired');
  await expect(page.locator('[data-testid="tl-lease"][data-worker="w2"][data-attempt="2"]')).toHaveAttribute('data-state', 'held');
  // The refused ack changed nothing: w2 still holds the message, and finishes it.
  await expect(chip).toHaveAttribute('data-holder', 'w2');
  await screenshots(page, 'lesson-5');
  await step(page, 1000);
  await expect(logEntries(page, { kind: 'ack', worker: 'w2' })).toHaveCount(1);
  // The README's picture: `UPDATE_DEMO_SCREENSHOT=1 npx playwright test e2e/demo-lessons.spec.ts -g "lesson 5"`.
  if (process.env.UPDATE_DEMO_SCREENSHOT) await page.screenshot({ path: 'docs/demo.png' });
  await expect(group(page, 'invoice-1')).toHaveCount(0);
});

test('lesson 6: the trace ring keeps the last 8 steps while the indices keep climbing', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 6);
  const exe = page.locator('[data-testid="execution"][data-execution="doc-1"]');
  await step(page, 1000, 8);
  await expect(exe).toHaveAttribute('data-kept', '0,1,2,3,4,5,6,7');
  await step(page, 1000, 4);
  await expect(exe).toHaveAttribute('data-kept', '4,5,6,7,8,9,10,11');
  await expect(exe.locator('[data-role="newest"]')).toHaveAttribute('data-index', '11');
  await expect(exe.locator('[data-role="oldest"]')).toHaveAttribute('data-index', '4');
  // Step 8 took slot 0, where step 0 was.
  await expect(exe.locator('[data-slot="0"]')).toHaveAttribute('data-index', '8');
  await expect(exe).toContainText('12 events handled');
  await screenshots(page, 'lesson-6');
});
