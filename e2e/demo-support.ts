/** Helpers for driving the demo page (demo/index.html) through its own controls. */
import { expect, type Locator, type Page } from '@playwright/test';

/** Dialogs the page opened (none should: user text is never run as HTML). */
export const dialogs: string[] = [];

const errors = new WeakMap<Page, string[]>();

/** Console errors and uncaught exceptions of `page` since it was watched. */
export function consoleErrors(page: Page): string[] {
  return errors.get(page) ?? [];
}

/** Records `page`'s console errors and uncaught exceptions (the demo must have none). */
export function watchErrors(page: Page): void {
  if (errors.has(page)) return;
  const list: string[] = [];
  errors.set(page, list);
  page.on('console', (message) => message.type() === 'error' && list.push(message.text()));
  page.on('pageerror', (error) => list.push(String(error)));
}

export async function openDemo(page: Page, path = '/'): Promise<void> {
  watchErrors(page);
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(path);
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'true');
}

/** Stops the demo clock (the tests move time with the step buttons only). */
export async function pause(page: Page): Promise<void> {
  const play = page.getByTestId('play');
  // The button says whether the clock plays from its first animation frame on, which can come
  // after the page is ready (late on a loaded machine): read it only once it says.
  await expect(play).toHaveAttribute('aria-pressed', /^(true|false)$/);
  if ((await play.getAttribute('aria-pressed')) === 'true') await play.click();
  await expect(play).toHaveAttribute('aria-pressed', 'false');
}

/** Waits until every call of the page's workers has answered and the view shows the result. */
export async function settled(page: Page): Promise<void> {
  await expect(page.locator('body')).toHaveAttribute('data-settled', 'true');
}

export async function startLesson(page: Page, id: number): Promise<void> {
  await pause(page);
  await page.getByTestId(`lesson-${id}`).click();
  await expect(page.getByTestId(`lesson-${id}`)).toHaveAttribute('aria-pressed', 'true');
  await settled(page);
  await expect(page.getByTestId('clock')).toHaveAttribute('data-ms', '0');
}

/** Opens the lesson's second tab with its action button (lessons 7 and 10); resolves once it has joined through the owner `first`. */
export async function openSecondTab(first: Page): Promise<Page> {
  const [second] = await Promise.all([first.context().waitForEvent('page'), first.getByTestId('lesson-action').click()]);
  watchErrors(second);
  await expect(second.locator('body')).toHaveAttribute('data-ready', 'true');
  await second.bringToFront();
  await expect(second.getByTestId('lesson-text')).toContainText('This is the second tab');
  await expect(second.getByTestId('owner')).toHaveText(/^Another tab owns the database file/);
  return second;
}

/** Closes the owner tab `first` (which must have logged no error) and waits until `second` has taken the database file over. */
export async function closeOwner(first: Page, second: Page): Promise<void> {
  expect(consoleErrors(first)).toEqual([]);
  await first.close();
  await expect(second.getByTestId('owner')).toHaveText(/^This tab owns the database file/, { timeout: 30_000 }); // takeover opens the file: seconds when loaded
}

/** Steps the clock `ms` (100 or 1000) `times` times, letting the page settle after each. */
export async function step(page: Page, ms: 100 | 1000, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    await page.getByTestId(`step-${ms}`).click();
    await settled(page);
  }
}

export async function now(page: Page): Promise<number> {
  return Number(await page.getByTestId('clock').getAttribute('data-ms'));
}

export function group(page: Page, id: string): Locator {
  return page.locator(`[data-testid="group"][data-group="${id}"]`);
}

export function message(page: Page, seq: string | number): Locator {
  return page.locator(`[data-testid="message"][data-seq="${seq}"]`);
}

export function logEntries(page: Page, filter: Record<string, string>): Locator {
  const attrs = Object.entries(filter)
    .map(([k, v]) => `[data-${k}="${v}"]`)
    .join('');
  return page.locator(`[data-testid="log-entry"]${attrs}`);
}

/** Screenshots of the page at desktop and phone width, under test-results/demo/. */
export async function screenshots(page: Page, name: string): Promise<void> {
  // Off-screen group rows skip painting (content-visibility), which a full-page picture must not.
  await page.addStyleTag({ content: '.group { content-visibility: visible !important; }' });
  for (const [width, height, device] of [[1280, 900, 'desktop'], [390, 844, 'phone']] as const) {
    await page.setViewportSize({ width, height });
    await redrawn(page);
    await page.screenshot({ path: `test-results/demo/${name}-${device}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await redrawn(page);
}

/** Two animation frames: the page has seen its new size and drawn with it. */
async function redrawn(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}
