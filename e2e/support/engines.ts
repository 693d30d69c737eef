/**
 * The e2e specs run in Chromium and Firefox (playwright.config.ts). What only Chromium can do
 * here — CDP (`Page.crash`, quota overrides), downloads and media emulation, which Firefox ESR's
 * WebDriver BiDi lacks — lives in `*.chromium.spec.ts` files, or, inside a shared spec, behind
 * {@link chromiumOnly}, which says why in the report.
 */
import { type Browser, chromium, expect, firefox, type Page, test, type BrowserContext } from '@playwright/test';
import { firefoxLaunchOptions } from '../../scripts/browsers.mjs';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';

/** Skips the current test outside Chromium, saying which Chromium-only API it needs. */
export function chromiumOnly(browserName: string, needs: string): void {
  test.skip(browserName !== 'chromium', `Chromium only: needs ${needs}`);
}

/**
 * A browser with a normal profile in `profile` (a directory on disk), as users have: OPFS in real
 * files, kept across a restart with the same directory. The engine of the running project.
 */
export async function launchProfile(browserName: string, profile: string, baseURL: string | undefined): Promise<BrowserContext> {
  if (browserName === 'firefox') return firefox.launchPersistentContext(profile, { ...firefoxLaunchOptions(), baseURL });
  return chromium.launchPersistentContext(profile, { executablePath: await findChromium(), args: chromiumArgs, baseURL });
}

/**
 * A Firefox of its own with extra preferences (a private window, a low quota…), on the lab
 * page, ready. Close the browser when done.
 */
export async function firefoxLab(prefs: Record<string, string | number | boolean>, baseURL: string | undefined): Promise<{ browser: Browser; page: Page }> {
  const options = firefoxLaunchOptions();
  const browser = await firefox.launch({ ...options, firefoxUserPrefs: { ...options.firefoxUserPrefs, ...prefs } });
  const page = await browser.newPage({ baseURL });
  await page.goto('/lab.html');
  await expect(page.locator('#status')).toHaveText('ready');
  return { browser, page };
}
