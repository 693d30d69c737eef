/**
 * The package as a user gets it: `npm pack` (which builds dist/ in prepack), then
 * `npm install <tarball>` in scratch apps outside the repository, then the public entries used
 * from Node, from CommonJS, and from a page built by `vite build` with `leasehold()` from
 * leasehold/vite and run in Chromium on OPFS.
 */
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../../scripts/pack.mjs';
import { chromium } from 'playwright';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';
import { deadLinks } from './links.ts';
import { documentedPages, readmeInstallCommands, readmeTsBlocks, typecheckReadme } from './readme.ts';
import { createApp, lastJson, node, SQLITE_WASM_VERSION } from './scratch.ts';

let scratch = '';
let files: string[] = [];
let app = '';
let bare = '';

beforeAll(async () => {
  const packed = inject('packed');
  scratch = packed.scratch;
  files = packed.files;
  // `app` has every driver; `bare` has leasehold alone (Vite linked in only to run a build).
  [app, bare] = await Promise.all([
    createApp(scratch, 'app', packed.tarball, {
      install: [`@sqlite.org/sqlite-wasm@${SQLITE_WASM_VERSION}`],
      link: ['better-sqlite3', 'vite', 'pg', '@types/pg', '@electric-sql/pglite'],
    }),
    createApp(scratch, 'bare', packed.tarball, { link: ['vite'] }),
  ]);
}, 300_000);

describe('the tarball', () => {
  it('holds dist/ (JavaScript, declarations, both kinds of map), the worker, src/, docs/, schema/, the offline-outbox example, README, LICENSE, CHANGELOG, ARCHITECTURE, CONTRIBUTING and nothing else', () => {
    // The example ships so that docs/offline-first.md can send users to it (test/pack/offline-outbox.test.ts runs the copy);
    // docs/, schema/ and the top-level pages so that every link of the README and docs/ resolves in node_modules.
    const outside = files.filter((f) => !/^(dist|src|docs|schema|examples\/offline-outbox)\//.test(f));
    expect(outside.sort()).toEqual(['ARCHITECTURE.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'LICENSE', 'README.md', 'package.json']);
    expect(files).toEqual(expect.arrayContaining(documentedPages()));
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/index.d.ts.map', 'dist/index.js.map', 'dist/browser/host.worker.js', 'dist/vite/index.js', 'dist/require.cjs', 'src/index.ts']) {
      expect(files).toContain(f);
    }
    // Every compiled module has its declaration and both maps, and every map's source ships.
    const modules = files.filter((f) => f.startsWith('dist/') && f.endsWith('.js'));
    for (const f of modules) for (const suffix of ['.js.map', '.d.ts', '.d.ts.map']) expect(files).toContain(f.replace(/\.js$/, suffix));
    const installed = join(app, 'node_modules/leasehold');
    for (const f of modules) {
      const map = JSON.parse(readFileSync(join(installed, `${f}.map`), 'utf8')) as { sources: string[] };
      for (const source of map.sources) expect(existsSync(normalize(join(installed, f, '..', source)))).toBe(true);
    }
    expect(files.some((f) => /^(test|bench|demo|e2e|scripts)\/|\/node_modules\//.test(f))).toBe(false);
  });

  it('is a publishable MIT package: not private, with the licence text', () => {
    const installed = join(app, 'node_modules/leasehold');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    const licence = readFileSync(join(installed, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License/);
    expect(licence).toContain('leasehold contributors');
  });
});

describe('the README and docs/, against the installed package', () => {
  it('every relative link of README.md and docs/*.md, as installed, leads to a file the package holds (and a heading, for an anchor)', () => {
    const installed = join(app, 'node_modules/leasehold');
    const pages = files.filter((f) => f === 'README.md' || /^docs\/[^/]+\.md$/.test(f));
    expect(pages.length).toBeGreaterThanOrEqual(15);
    expect(deadLinks(pages, files, (path) => readFileSync(join(installed, path), 'utf8'))).toEqual([]);
  });

  it('every ```ts block compiles against the package\'s declarations (strict, module nodenext)', async () => {
    const result = await typecheckReadme(app);
    // README's quick starts alone are 5; the docs' pages (browser, node-sqlite, postgres, cloudflare, …) hold more.
    expect(result.files).toBeGreaterThanOrEqual(15);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it.each([
    ['Runtime', 'new Runtime(', 'runtime-quick-start.ts', 'order-17 paid after 3 commits'],
    ['Workflow', 'new Workflows(', 'workflow-quick-start.ts', 'signup-1: u-1 verified'],
  ])('the %s quick start runs as printed: it prints its result and exits', async (_name, marker, fileName, printed) => {
    const block = readmeTsBlocks().find((b) => b.code.includes(marker));
    expect(block).toBeDefined();
    mkdirSync(join(app, 'readme'), { recursive: true });
    const file = join(app, 'readme', fileName);
    writeFileSync(file, `${block!.code}\n`);
    // tsx strips the types (Node 20 cannot); 'leasehold' resolves to the tarball installed in the app.
    const tsx = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/esm/index.mjs')).href;
    const result = await node(app, ['--import', tsx, file]);
    expect(result.stderr.replace(/^.*ExperimentalWarning.*$/gm, '').trim()).toBe('');
    expect(result.stdout.trim()).toBe(printed);
    expect(result.code).toBe(0);
  });

  it('the Install section gives the commands these scratch apps were installed with', () => {
    expect(readmeInstallCommands()).toEqual([
      ['leasehold'], // the "app" app: leasehold and sqlite-wasm (plus vite and better-sqlite3, linked)
      ['--save-exact', `@sqlite.org/sqlite-wasm@${SQLITE_WASM_VERSION}`], // the peer is that one release
      ['--save-dev', 'vite'],
      ['leasehold', 'better-sqlite3@12'], // linked from this repository: 12.x, checked below
      ['leasehold', 'pg@8'], // linked too, as is PGlite
      ['leasehold', '@electric-sql/pglite@0.5'],
      ['leasehold'], // the "bare" app
    ]);
    const linked = (pkg: string) => (JSON.parse(readFileSync(join(app, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
    expect(linked('better-sqlite3')).toMatch(/^12\./);
    expect(linked('pg')).toMatch(/^8\./);
    expect(linked('@electric-sql/pglite')).toMatch(/^0\.5\./);
  });
});

describe('installed from the tarball, in Node', () => {
  it('publishes, claims and acks on leasehold/sqlite-wasm and leasehold/better-sqlite3', async () => {
    const result = await node(app, ['roundtrip.mjs', join(app, 'queue.db')]);
    expect(result.stderr.replace(/^.*ExperimentalWarning.*$/gm, '').trim()).toBe('');
    expect(lastJson(result.stdout)).toEqual({
      'sqlite-wasm': { seq: 1, event: { driver: 'sqlite-wasm', n: 1 }, leaseSeq: 1, emptyAfterAck: true },
      'better-sqlite3': { seq: 1, event: { driver: 'better-sqlite3', n: 1 }, leaseSeq: 1, emptyAfterAck: true },
    });
  });

  it('leasehold/postgres on PGlite: publishes, claims, acks, and consume() handles a message', async () => {
    const result = await node(app, ['postgres.mjs']);
    expect(result.stderr.replace(/^.*ExperimentalWarning.*$/gm, '').trim()).toBe('');
    expect(lastJson(result.stdout)).toEqual({
      seq: 1,
      event: { n: 1 },
      emptyAfterAck: true,
      consumed: [{ n: 2 }],
      stats: { queued: 0, leased: 0 },
    });
  });

  it('without a driver installed, opening one rejects with a LeaseholdError naming the package and the install command', async () => {
    const result = await node(bare, ['missing-peers.mjs']);
    const out = lastJson(result.stdout) as Record<string, { leaseholdError: boolean; code: string; message: string }>;
    expect(out['better-sqlite3']).toMatchObject({ leaseholdError: true, code: 'DRIVER_MISSING' });
    expect(out['better-sqlite3']!.message).toContain('npm install better-sqlite3@12');
    expect(out['sqlite-wasm']).toMatchObject({ leaseholdError: true, code: 'DRIVER_MISSING' });
    expect(out['sqlite-wasm']!.message).toContain(`npm install @sqlite.org/sqlite-wasm@${SQLITE_WASM_VERSION}`);
  });

  it('a CommonJS require() of every entry loads it on a Node that can require() an ES module', async () => {
    const result = await node(app, ['commonjs.cjs']);
    const loaded = lastJson(result.stdout) as Record<string, { loaded?: boolean; exports?: string[] }>;
    expect(Object.keys(loaded)).toHaveLength(5);
    for (const [entry, outcome] of Object.entries(loaded)) expect(outcome.loaded, entry).toBe(true);
    expect(loaded.leasehold!.exports).toContain('InMemoryTransport');
    expect(loaded['leasehold/vite']!.exports).toEqual(['leasehold']);
  });

  it('on a Node that cannot (before 20.19 and 22.12; here with require(esm) turned off), it fails with the message that says what to do', async () => {
    const result = await node(app, ['--no-experimental-require-module', 'commonjs.cjs']);
    const { 'leasehold/vite': _vite, ...library } = lastJson(result.stdout) as Record<string, { code?: string; message?: string }>;
    expect(Object.keys(library)).toHaveLength(4);
    for (const [entry, outcome] of Object.entries(library)) {
      expect(outcome.code, entry).toBe('ERR_LEASEHOLD_ESM_ONLY');
      expect(outcome.message).toContain("await import('leasehold')");
      expect(outcome.message).toContain('Node 20.19+ and 22.12+');
    }
  });
});

describe('installed from the tarball, built with Vite and leasehold()', () => {
  it('without sqlite-wasm installed, vite build fails saying what to install', async () => {
    const result = await node(bare, ['node_modules/vite/bin/vite.js', 'build', '--outDir', 'out']);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain(`npm install @sqlite.org/sqlite-wasm@${SQLITE_WASM_VERSION}`);
  });

  it('without sqlite-wasm and without the plugin, openBrowserDatabase on the built page rejects with DRIVER_MISSING', async () => {
    const build = await node(bare, ['node_modules/vite/bin/vite.js', 'build', '--config', 'vite.plain.config.js', '--outDir', 'out-plain']);
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const [result] = await inChromium(join(bare, 'out-plain'), ['publish']);
    expect(result).toMatchObject({ ok: false, name: 'LeaseholdError', code: 'DRIVER_MISSING' });
    expect((result as { message: string }).message).toContain(`npm install @sqlite.org/sqlite-wasm@${SQLITE_WASM_VERSION}`);
  });

  it('builds a page without Worker1 or the opfs proxy, which round-trips a message through OPFS in Chromium', async () => {
    const build = await node(app, ['node_modules/vite/bin/vite.js', 'build', '--outDir', 'out']);
    expect(build.code, build.stdout + build.stderr).toBe(0);
    const emitted = readdirSync(join(app, 'out/assets'));
    expect(emitted.some((f) => f.endsWith('.wasm'))).toBe(true);
    expect(emitted.filter((f) => /sqlite3-worker1|opfs-async-proxy/.test(f))).toEqual([]);
    // The same plugin from a CommonJS config (a project that is not "type": "module").
    const cjs = await node(app, ['node_modules/vite/bin/vite.js', 'build', '--config', 'vite.config.cjs', '--outDir', 'out-cjs']);
    expect(cjs.code, cjs.stdout + cjs.stderr).toBe(0);
    expect(readdirSync(join(app, 'out-cjs/assets')).filter((f) => /sqlite3-worker1|opfs-async-proxy/.test(f))).toEqual([]);
    // The second page load can only get the message back from the OPFS file.
    expect(await inChromium(join(app, 'out'), ['publish', 'claim'])).toEqual([
      { ok: true, step: 'publish', seq: 1 },
      { ok: true, step: 'claim', event: { hello: 'opfs', at: 1 }, seq: 1, emptyAfterAck: true },
    ]);
  });
});

/**
 * Serves `root` on a free loopback port and loads the page once per step (`?step=<name>`) in
 * one Chromium context, returning what each load reported. Uncaught page errors fail the test.
 */
async function inChromium(root: string, steps: string[]): Promise<unknown[]> {
  const server = await serve(root);
  const browser = await chromium.launch({ executablePath: await findChromium(), args: chromiumArgs });
  try {
    const page = await (await browser.newContext()).newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const results: unknown[] = [];
    for (const step of steps) {
      await page.goto(`${base}?step=${step}`);
      await page.waitForFunction(() => 'packResult' in globalThis, undefined, { timeout: 30_000 });
      results.push(await page.evaluate(() => (globalThis as unknown as { packResult: unknown }).packResult));
    }
    expect(errors).toEqual([]);
    return results;
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

/** A static file server on a free loopback port (no special headers: the page needs none). */
async function serve(root: string): Promise<Server> {
  const server = createServer((request, response) => {
    const path = normalize(join(root, decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)));
    const file = path.endsWith('/') ? join(path, 'index.html') : path;
    if (!file.startsWith(root) || !existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
