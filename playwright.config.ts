import { defineConfig } from '@playwright/test';
import { chromiumArgs, findChromium } from './scripts/chromium.mjs';

const executablePath = await findChromium();
// Overridable so two runs (two engineers on one machine) do not fight over the port or the build.
const port = Number(process.env.E2E_PORT ?? 4173);
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
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    launchOptions: { executablePath, args: chromiumArgs },
  },
  webServer: {
    command: `npx vite build --logLevel warn --outDir ${outDir} && npx vite preview --outDir ${outDir} --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    // A vite build, then a server start: well under a minute when idle, longer on 2 loaded cores.
    timeout: 300_000,
  },
});
