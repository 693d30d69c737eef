import { readFile } from 'node:fs/promises';
import { expect, type Page, test } from '@playwright/test';
import { consoleErrors, group, logEntries, now, openDemo, settled, startLesson, step, watchErrors } from './demo-support.js';
import { chromiumOnly } from './support/engines.js';

test.use({ viewport: { width: 1280, height: 900 } });
test.afterEach(({ page }) => expect(consoleErrors(page)).toEqual([]));

/** What the queue, the workers and the rings show, as comparable text. */
async function scene(page: Page): Promise<string> {
  return page.evaluate(() => {
    const attrs = (el: Element, names: string[]) => names.map((n) => `${n}=${el.getAttribute(n)}`).join(' ');
    const groups = [...document.querySelectorAll('[data-testid="group"]')].map(
      (g) => `${attrs(g, ['data-group', 'data-status'])}: ${[...g.querySelectorAll('[data-testid="message"]')].map((m) => `${attrs(m, ['data-seq', 'data-state', 'data-holder', 'data-attempt'])} ${m.textContent}`).join(' | ')}`,
    );
    const workers = [...document.querySelectorAll('[data-testid="worker"]')].map((w) => `${attrs(w, ['data-worker', 'data-status'])} ${w.querySelector('.holds')?.textContent}`);
    const rings = [...document.querySelectorAll('[data-testid="execution"]')].map((e) => attrs(e, ['data-execution', 'data-kept']));
    return [...groups, ...workers, ...rings].join('\n');
  });
}

test('scrubbing back shows the queue, workers and log as they were then, and leaves the database alone', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 2);
  await step(page, 1000, 2);
  const then = await scene(page);
  expect(then).toContain('data-group=quiet-b');
  await step(page, 1000, 3);
  const later = await scene(page);
  expect(later).not.toEqual(then);

  // Back to 2.0 s with the keyboard alone: the slider under the timeline.
  const slider = page.getByTestId('tl-scrub');
  await slider.focus();
  await page.keyboard.press('End');
  for (let i = 0; i < 30; i++) await page.keyboard.press('ArrowLeft');
  await expect(page.locator('.timeline')).toHaveAttribute('data-view', '2000');
  await expect(page.getByTestId('tl-status')).toContainText('Looking back at 2.0 s');
  await expect(slider).toHaveAttribute('aria-valuetext', /2\.0 s, in the past/);
  await expect.poll(() => scene(page)).toEqual(then);
  // The log shows only what had happened by then; the present did not move.
  expect(await now(page)).toBe(5000);
  await expect(logEntries(page, { kind: 'claim', group: 'quiet-c' })).toBeHidden();
  await expect(page.locator('.workers button[data-testid="crash-worker"]').first()).toBeDisabled();

  // Dragging on the timeline picks a moment too; Escape (or "Back to live") returns.
  const lanes = page.getByTestId('timeline');
  const box = (await lanes.boundingBox())!;
  await page.mouse.move(box.x + box.width - 20, box.y + 5);
  await page.mouse.down();
  await page.mouse.move(box.x + 200, box.y + 5);
  await page.mouse.up();
  await expect(page.locator('.timeline')).not.toHaveAttribute('data-view', 'live');
  await page.keyboard.press('Escape');
  await expect(page.locator('.timeline')).toHaveAttribute('data-view', 'live');
  await settled(page);
  expect(await scene(page)).toEqual(later);
  await expect(logEntries(page, { kind: 'claim', group: 'quiet-c' })).toBeVisible();
  expect(await now(page)).toBe(5000);
});

test('the SQL panel shows the claim’s UPDATE with its parameters and the lh_groups row it changed', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 2);
  await page.locator('[data-panel="sql"] summary').click();
  await step(page, 100);
  const claim = page.getByTestId('sql-claim');
  await expect(claim).toHaveAttribute('data-method', 'claim');
  const update = claim.getByTestId('sql-statement').filter({ hasText: 'UPDATE OR FAIL lh_groups SET holder' });
  await expect(update).toContainText("#1 = 'w1'");
  await expect(update).toContainText('"group_id":"busy"');
  const row = claim.locator('[data-testid="sql-row"][data-group="busy"]');
  await expect(row).toHaveAttribute('data-changed', 'true');
  await expect(row).toContainText("NULL → 'w1'");
  await expect(row).toContainText('claimed');
  await expect(claim.locator('[data-testid="sql-row"][data-group="quiet-a"]')).toHaveAttribute('data-changed', 'false');
  // After the first ack, the ack's DELETE and the trigger's change to the busy row.
  await step(page, 1000);
  const ack = page.getByTestId('sql-ack');
  await expect(ack).toHaveAttribute('data-method', 'ack');
  await expect(ack.getByTestId('sql-statement').filter({ hasText: 'DELETE FROM lh_messages' })).toContainText('1 row changed');
  await expect(ack.locator('[data-testid="sql-row"][data-group="busy"]')).toHaveAttribute('data-changed', 'true');
  await page.getByTestId('tl-mode-worker').check();
  await expect(page.locator('[data-testid="tl-lane"][data-lane="w1"]')).toHaveCount(1);
  await page.locator('[data-panel="sql"]').screenshot({ path: 'test-results/demo/sql-panel.png' });
});

test('a shared link reopens the same lesson at the same time', async ({ page, browser }) => {
  await openDemo(page);
  await startLesson(page, 5);
  await step(page, 1000, 3);
  await step(page, 100);
  await step(page, 1000);
  const address = page.url();
  expect(address).toMatch(/#lesson=5&speed=1&t=4\.1$/);
  const before = await scene(page);

  // Someone else opens it: another browser context, its own OPFS and settings.
  const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const visitor = await other.newPage();
  watchErrors(visitor);
  await visitor.goto(address);
  await expect(visitor.locator('body')).toHaveAttribute('data-ready', 'true');
  await settled(visitor);
  expect(await now(visitor)).toBe(4100);
  await expect(visitor.getByTestId('lesson-5')).toHaveAttribute('aria-pressed', 'true');
  await expect(visitor.getByTestId('play')).toHaveAttribute('aria-pressed', 'false');
  expect(await scene(visitor)).toEqual(before);
  // The link plays the lesson in 0.1 s steps, so w1 wakes at exactly 4.0 s there (this page's
  // 1 s step saw it at 4.1 s): the same refusal, at its scheduled time.
  await expect(visitor.locator('[data-testid="tl-refused"][data-group="invoice-1"]')).toHaveAttribute('data-time', '4000');
  expect(consoleErrors(visitor)).toEqual([]);
  await other.close();

  // A reload of one's own address keeps the queue instead of replaying it.
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'true');
  await settled(page);
  await expect(page.locator('[data-testid="worker"]')).toHaveCount(0);
  await expect(group(page, 'invoice-1')).toHaveCount(1);
});

test('the timeline exports as SVG and PNG', async ({ page, browserName }) => {
  chromiumOnly(browserName, "downloads (page.waitForEvent('download') is not carried by Firefox ESR's WebDriver BiDi)");
  await openDemo(page);
  await startLesson(page, 4);
  await step(page, 1000, 2);
  await expect(page.locator('[data-testid="tl-park"][data-group="pay-1"]')).toHaveCount(1);
  const [svgFile] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-svg').click()]);
  expect(svgFile.suggestedFilename()).toBe('leasehold-timeline.svg');
  const text = await readFile((await svgFile.path())!, 'utf8');
  expect(text).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  for (const lane of ['pay-1', 'mail-1', 'mail-2', 'mail-3']) expect(text).toContain(`data-lane="${lane}"`);
  expect(text).toContain('data-testid="tl-park"');
  const [pngFile] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-png').click()]);
  expect(pngFile.suggestedFilename()).toBe('leasehold-timeline.png');
  const png = await readFile((await pngFile.path())!);
  expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  expect(png.length).toBeGreaterThan(2_000);
});

test('a delayed message has its own state, icon and hatched wait on the timeline', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 0);
  await page.locator('[data-panel="publish"] summary').click();
  await page.getByTestId('publish-group').fill('later');
  await page.getByTestId('publish-delay').selectOption('2000');
  await page.getByTestId('publish').click();
  await settled(page);
  const chip = group(page, 'later').getByTestId('message').first();
  await expect(chip).toHaveAttribute('data-state', 'delayed');
  await expect(chip).toContainText('delayed');
  await expect(chip).toContainText('due in 2.0 s');
  await expect(group(page, 'later')).toHaveAttribute('data-status', 'delayed');
  await expect(page.locator('[data-testid="tl-delay"][data-group="later"]')).toHaveAttribute('data-until', String((await now(page)) + 2000));
  await step(page, 1000, 2);
  await step(page, 100);
  await expect(chip).toHaveAttribute('data-state', 'ready');
});

test('reduced motion: the clock waits to be started and the page says so; the timeline is described for screen readers', async ({ page, browserName }) => {
  chromiumOnly(browserName, "media emulation (emulateMedia({ reducedMotion }) is not carried by Firefox ESR's WebDriver BiDi)");
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await openDemo(page);
  await expect(page.locator('body')).toHaveAttribute('data-motion', 'reduced');
  await expect(page.getByTestId('play')).toHaveAttribute('aria-pressed', 'false');
  await startLesson(page, 1);
  await step(page, 1000);
  const log = page.getByTestId('log');
  await expect(log).toHaveAttribute('role', 'log');
  await expect(log).toHaveAttribute('aria-live', 'polite');
  const timeline = page.getByTestId('timeline');
  await expect(timeline).toHaveAttribute('role', 'img');
  await expect(timeline).toHaveAttribute('aria-details', 'log');
  await expect(timeline).toHaveAttribute('aria-label', /Lease timeline, 2 group lanes/);
  await expect(group(page, 'order-7').getByTestId('message').first()).toHaveAttribute('data-holder', 'w1');
  await expect(page.locator('[data-testid="tl-lease"][data-worker="w1"]')).toHaveCount(1);
});
