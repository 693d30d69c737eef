/** Helpers for driving the demo page (demo/index.html) through its own controls. */
import { expect, type Locator, type Page } from '@playwright/test';

/** Dialogs the page opened (none should: user text is never run as HTML). */
export const dialogs: string[] = [];

export async function openDemo(page: Page): Promise<void> {
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto('/');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'true');
}

/** Stops the demo clock (the tests move time with the step buttons only). */
export async function pause(page: Page): Promise<void> {
  const play = page.getByTestId('play');
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
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: `test-results/demo/${name}-desktop.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `test-results/demo/${name}-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}
