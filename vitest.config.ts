import { playwright } from '@vitest/browser-playwright';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { searchForWorkspaceRoot } from 'vite';
import { defineConfig } from 'vitest/config';
import { firefoxLaunchOptions } from './scripts/browsers.mjs';
import { chromiumArgs, findChromium } from './scripts/chromium.mjs';
import { webkitgtk } from './test/webkit/provider.ts';
import { sharedAliases } from './vite.config.ts';

const executablePath = await findChromium();
// `npm run test:fast`: the memory and SQLite backends only. The server-only files are left out
// here and the shared backend lists drop their server rows (test/support/servers.ts).
const fast = process.env.LEASEHOLD_FAST === '1';
const serverOnly = ['test/postgres-*.test.ts', 'test/durable-object*.test.ts'];

export default defineConfig({
  resolve: { alias: sharedAliases },
  optimizeDeps: { exclude: ['@sqlite.org/sqlite-wasm'] },
  worker: { format: 'es' },
  server: {
    watch: { ignored: ['**/test-results/**', '**/bench/results/**', '**/.tmp/**'] },
    // node_modules (or a package in it) may be a link to a shared install (a git worktree's): the
    // browser tests fetch sqlite-wasm's .wasm from its real path, which Vite serves only if allowed.
    fs: { allow: [searchForWorkspaceRoot(process.cwd()), ...['./node_modules', './node_modules/@sqlite.org/sqlite-wasm'].map((path) => realpathSync(fileURLToPath(new URL(path, import.meta.url))))] },
  },
  test: {
    // expect.poll waits for something another connection, process, worker or tab does on its own
    // time: its default second is easily overrun on a loaded machine (CI: 2 shared cores). A
    // poll that never holds still fails, later; tests that want a tighter bound say so.
    expect: { poll: { timeout: 20_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/browser/**', 'test/pack/**', 'test/webkit/**', ...(fast ? serverOnly : [])],
          testTimeout: 60_000,
          // A hook may start an embedded PGlite (WASM start-up: seconds on a loaded machine).
          hookTimeout: 60_000,
          // One workerd and one PostgreSQL server for the run, each started when a test first asks
          // (test/support/servers-global.ts): a run of the in-process suites starts neither.
          globalSetup: ['test/support/servers-global.ts'],
        },
      },
      {
        // WebKitGTK (Debian's, under Xvfb, over WebDriver): the primitives and an in-memory
        // database, OPFS gated by a capability probe (test/webkit/): `npm run test:webkit`.
        extends: true,
        test: {
          name: 'webkit',
          environment: 'node',
          include: ['test/webkit/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The in-memory conformance suites in WebKitGTK, through Vitest's own browser mode
        // (test/webkit/provider.ts): the host worker, its messages and SQLite in memory, as in
        // Chromium. Their OPFS variants are defined and skipped, naming the call WebKitGTK
        // refuses (test/browser/harness.ts). The files left out need OPFS throughout (runtime,
        // faults, sahpool, the broker's tabs): test/webkit/webkit.test.ts shows what WebKit lacks.
        extends: true,
        test: {
          name: 'webkit-suites',
          include: ['test/browser/{transport,store,consume,trace}.test.ts'],
          provide: { engine: 'webkit' },
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: webkitgtk(),
            instances: [{ browser: 'webkit' }],
          },
        },
      },
      {
        // The package as a user installs it (npm pack, npm install, vite build, Chromium): `npm run test:pack`.
        extends: true,
        test: {
          name: 'pack',
          environment: 'node',
          include: ['test/pack/**/*.test.ts'],
          globalSetup: ['test/pack/global-setup.ts'], // one `npm pack` for every file
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          provide: { engine: 'chromium' },
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: { executablePath, args: chromiumArgs } }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        // The same browser suites in Firefox (ESR, Debian's), stock Firefox over WebDriver BiDi:
        // `npm run test:firefox`. Each Playwright context of a launched Firefox is a container of
        // the one profile Playwright made on disk, not a private window: OPFS there is files.
        extends: true,
        test: {
          name: 'firefox',
          include: ['test/browser/**/*.test.ts'],
          // The in-memory variants of the conformance suites run in WebKit only (see
          // test/browser/harness.ts): they take the same worker and message paths as the OPFS
          // ones, which run here, minus the storage. That halves this layer (4.5 → ~2.5 min on 2 cores).
          provide: { engine: 'firefox' },
          testTimeout: 60_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({ launchOptions: firefoxLaunchOptions() }),
            instances: [{ browser: 'firefox' }],
          },
        },
      },
    ],
  },
});
