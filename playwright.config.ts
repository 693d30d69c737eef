import { defineConfig } from '@playwright/test';
import { firefoxLaunchOptions } from './scripts/browsers.mjs';
import { chromiumArgs, findChromium } from './scripts/chromium.mjs';
import { freePort } from './scripts/ports.mjs';

const executablePath = await findChromium();
// A port the OS hands out, never a fixed one: a run must not depend on what else listens on the
// machine. Chosen once, in the runner, and kept in the environment, which its workers inherit
// (each loads this file again and must reach the same server).
process.env.E2E_PORT ??= String(await freePort());
const port = Number(process.env.E2E_PORT);
const outDir = process.env.E2E_OUT_DIR ?? 'dist-demo';

export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results/e2e',
  timeout: 60_000,
  // Web-first assertions (toHaveText, toHaveCount, expect.poll) wait for pages and workers that
  // share 2 loaded cores in CI: Playwright's default 5 s is overrun there without any bug. An
  // assertion that never holds still fails, after this long.
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [['list']],
  use: { baseURL: `http://127.0.0.1:${port}` },
  // Every spec in Chromium; in Firefox (ESR, over WebDriver BiDi) all but the Chromium-only ones:
  // `*.chromium.spec.ts` need CDP (Page.crash, quota overrides), and a shared spec's test that
  // needs a Chromium-only API skips itself saying which (e2e/support/engines.ts).
  // `--project=chromium` or `--project=firefox` runs one engine.
  projects: [
    { name: 'chromium', use: { browserName: 'chromium', launchOptions: { executablePath, args: chromiumArgs } } },
    { name: 'firefox', testIgnore: /\.chromium\.spec\.ts$/, use: { browserName: 'firefox', launchOptions: firefoxLaunchOptions() } },
  ],
  webServer: {
    command: `npx vite build --logLevel warn --outDir ${outDir} && npx vite preview --outDir ${outDir} --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    // A vite build, then a server start: well under a minute when idle, longer on 2 loaded cores.
    timeout: 300_000,
  },
});
