// Finds the Firefox and WebKitGTK the browser tests drive, beside scripts/chromium.mjs (which
// finds Chromium). Shared by vitest.config.ts, playwright.config.ts and scripts/ensure-browsers.mjs
// so all of them agree on one binary per engine. Only Debian's packages are used: Playwright
// cannot download its own browser builds here (no internet beyond npm and Debian).
import { existsSync } from 'node:fs';

/**
 * Firefox preferences for a closed network and a quiet test run: without them Firefox keeps
 * trying to reach Mozilla's update, telemetry and safe-browsing hosts.
 */
export const firefoxPrefs = {
  'app.update.enabled': false,
  'app.update.auto': false,
  'browser.shell.checkDefaultBrowser': false,
  'browser.startup.homepage_override.mstone': 'ignore',
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'datareporting.healthreport.uploadEnabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'toolkit.telemetry.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'extensions.update.enabled': false,
  'media.gmp-manager.updateEnabled': false,
};

/**
 * The Firefox executable: `FIREFOX_PATH` if set, else Debian's `/usr/bin/firefox-esr` (or
 * `/usr/bin/firefox`); `undefined` when none exists.
 */
export function findFirefox() {
  const fromEnv = process.env.FIREFOX_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`FIREFOX_PATH is set to ${fromEnv}, which does not exist`);
    return fromEnv;
  }
  return ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find((path) => existsSync(path));
}

/**
 * Playwright launch options for Firefox: stock Firefox over WebDriver BiDi (`moz-firefox`), no
 * geckodriver and no patched build. Pinned to Playwright 1.64.1: 1.65 sends
 * `emulation.setMediaFeaturesOverride` on every new context, which Firefox ESR 153 does not know.
 */
export function firefoxLaunchOptions(executablePath = findFirefox()) {
  return { channel: 'moz-firefox', executablePath, firefoxUserPrefs: firefoxPrefs };
}

/** WebKitGTK's pieces on Debian (packages `webkit2gtk-driver` and `xvfb`), or undefined when one is missing. */
export function findWebKit() {
  const driver = process.env.WEBKIT_DRIVER_PATH ?? '/usr/bin/WebKitWebDriver';
  const browser = process.env.WEBKIT_BROWSER_PATH ?? ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser'].find((path) => existsSync(path));
  const xvfb = '/usr/bin/Xvfb';
  if (!browser || !existsSync(driver) || !existsSync(xvfb)) return undefined;
  return { driver, browser, xvfb };
}
