/**
 * Pages built from one script with Vite's own API and the project's `leasehold()` plugin, served
 * by `vite preview` on a free port: for e2e tests of apps as users write them, and of two builds
 * of one app (two versions of leasehold) served from one origin, as after a deploy.
 */
import { type Page, test } from '@playwright/test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Alias, build, type Plugin, preview } from 'vite';
import { leasehold } from '../../src/vite/index.js';
import { sharedAliases } from '../../vite.config.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** One build of a page: its script, and what it resolves differently (another version of a leasehold module). */
export interface PageBuild {
  source: string;
  /** Resolved before the project's own aliases. */
  aliases?: Alias[];
}

/** Builds `source` as a page's script, serves it on a free port (with `plugins` in the server), opens it in `page`, runs `body`. */
export async function withPage(page: Page, source: string, body: () => Promise<void>, plugins: Plugin[] = []): Promise<void> {
  await withBuilds({ '': { source } }, async (url) => {
    await page.goto(url);
    await body();
  }, plugins);
}

/**
 * Builds each of `builds` into its own folder (`/<key>/`, the key '' at the root) of one site,
 * serves the site on a free port and runs `body` with its URL (ending in '/'). Removes it all after.
 */
export async function withBuilds(builds: Record<string, PageBuild>, body: (url: string) => Promise<void>, plugins: Plugin[] = []): Promise<void> {
  // Inside the repository (.tmp/ is ignored), so the page's imports of react resolve to the project's own.
  mkdirSync(here('../../.tmp'), { recursive: true });
  const dir = mkdtempSync(join(here('../../.tmp'), 'page-'));
  const site = join(dir, 'site');
  const buildStarted = Date.now();
  for (const [key, { source, aliases = [] }] of Object.entries(builds)) {
    const root = join(dir, `src-${key || 'root'}`);
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="./main.js"></script></body></html>\n');
    writeFileSync(join(root, 'main.js'), source);
    // es2022: a page may await its database at the top level, as an app's entry may. No
    // timing notices: bundling sqlite-wasm's worker on loaded cores is slow, and not this test's concern.
    await build({
      configFile: false, root, base: './', logLevel: 'warn', plugins: [leasehold()],
      resolve: { alias: [...aliases, ...Object.entries(sharedAliases).map(([find, replacement]) => ({ find, replacement }))] },
      build: { outDir: join(site, key), emptyOutDir: false, target: 'es2022', rolldownOptions: { checks: { bundlerTimings: false } } },
    });
  }
  // The first build in a worker process loads the bundler cold, and on 2 cores shared with the
  // node suites it has taken most of a minute: the build is setup, not the page under test, so
  // it extends the test's time rather than eating it.
  test.info().setTimeout(test.info().timeout + (Date.now() - buildStarted));
  const server = await preview({ configFile: false, root: dir, logLevel: 'warn', plugins, build: { outDir: site }, preview: { port: 0, host: '127.0.0.1' } });
  try {
    await body(server.resolvedUrls!.local[0]!);
  } finally {
    await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
}
