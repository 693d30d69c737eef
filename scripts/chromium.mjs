// Finds the Chromium the browser tests drive. Shared by vitest.config.ts, playwright.config.ts
// and scripts/ensure-browsers.mjs so all three agree on one binary.
import { existsSync } from 'node:fs';

/** Flags for a closed network: without them Chromium keeps trying to reach Google's hosts. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--no-default-browser-check',
];

/**
 * The Chromium executable to use: `CHROMIUM_PATH` if set, else Debian's `/usr/bin/chromium`,
 * else Playwright's own download if one is present; `undefined` when none exists.
 */
export async function findChromium() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH is set to ${fromEnv}, which does not exist`);
    return fromEnv;
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  try {
    const { chromium } = await import('playwright');
    const bundled = chromium.executablePath();
    if (bundled && existsSync(bundled)) return bundled;
  } catch {
    // playwright not installed or no browser downloaded: fall through
  }
  return undefined;
}
