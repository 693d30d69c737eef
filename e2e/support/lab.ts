/** Helpers for driving the lab page (demo/lab.html), which puts the public API on `window.leasehold`. */
import { expect, type Page } from '@playwright/test';

export async function openLab(page: Page): Promise<void> {
  await page.goto('/lab.html');
  await expect(page.locator('#status')).toHaveText('ready');
}

let names = 0;
/** A database name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++names}`;
}

/**
 * Opens `name` in the page as `window.db`, with a clock the test sets through `window.now`
 * (so leases can run out without waiting).
 */
export async function openDb(page: Page, name: string, extra: Record<string, unknown> = {}): Promise<void> {
  await page.evaluate(
    async ({ name, extra }) => {
      const w = window as any;
      w.now ??= 1_000;
      w.db = await w.leasehold.openBrowserDatabase({ name, clock: () => w.now, ...extra });
    },
    { name, extra },
  );
}
