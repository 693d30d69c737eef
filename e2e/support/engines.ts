/**
 * The e2e specs run in Chromium and Firefox (playwright.config.ts). What only Chromium can do
 * here — CDP (`Page.crash`, quota overrides), downloads and media emulation, which Firefox ESR's
 * WebDriver BiDi lacks — lives in `*.chromium.spec.ts` files, or, inside a shared spec, behind
 * {@link chromiumOnly}, which says why in the report.
 */
import { chromium, firefox, test, type BrowserContext } from '@playwright/test';
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
