/**
 * `npm run size`: what leasehold costs a web app, built the way an app would build it (Vite 8,
 * minified, sizes gzipped at level 9):
 *  - the core entry: an app importing InMemoryTransport, InMemoryStore and Runtime from 'leasehold';
 *  - a one-page app calling openBrowserDatabase from 'leasehold/browser': the page's own script
 *    (the browser entry, without sqlite-wasm), the host worker (which carries sqlite-wasm's
 *    JavaScript) and every other emitted file, with the package's own Vite plugin (`leasehold()`
 *    from 'leasehold/vite', as an app adds it) and with a plain Vite config.
 * Exits non-zero if a target is missed or sqlite-wasm's Worker1 or OPFS async proxy is emitted
 * with the plugin. Runs under tsx (it imports vite.config.ts and the plugin's TypeScript source).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { leasehold } from '../src/vite/index.ts';
import { sharedAliases } from '../vite.config.ts';

// The core was budgeted at 8 kB before the queue API (publishMany, claimMany, ackMany, stats,
// cancel, delays, named queues) added 0.9 kB to InMemoryTransport. We kept that API and every
// error message whole rather than shave them, and moved the budget to 9 kB; `npm test` runs this
// script, so growing past it is a decision someone makes, not a drift nobody sees.
const TARGETS = { core: 9_000, browserEntry: 15_000 };
const UNUSED = /sqlite3-worker1|sqlite3-opfs-async-proxy/;
const root = fileURLToPath(new URL('../.tmp/size/', import.meta.url));
rmSync(root, { recursive: true, force: true });
mkdirSync(root, { recursive: true });

const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
const kB = (n) => `${(n / 1000).toFixed(1)} kB`;

/** Builds `files` (written into a scratch folder) and returns every emitted file with its sizes. */
async function buildApp(name, files, input, trim) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  const result = await build({
    configFile: false,
    root: dir,
    logLevel: 'warn',
    resolve: { alias: sharedAliases },
    // Without the plugin, the least a plain config needs: a module worker.
    ...(trim ? { plugins: [leasehold()] } : { worker: { format: 'es' } }),
    build: { write: false, target: 'es2022', minify: true, modulePreload: false, rollupOptions: { input: join(dir, input) } },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
  return outputs
    .map((o) => {
      const bytes = o.type === 'chunk' ? Buffer.from(o.code) : Buffer.from(o.source);
      return { file: o.fileName, kind: o.type === 'chunk' ? 'entry chunk' : o.fileName.endsWith('.js') ? 'worker bundle' : 'asset', bytes: bytes.length, gzip: gz(bytes) };
    })
    .sort((a, b) => b.bytes - a.bytes);
}

function print(title, files) {
  console.log(`\n${title}\n`);
  console.log('| file | kind | bytes | gzip |\n| --- | --- | ---: | ---: |');
  for (const f of files) console.log(`| ${f.file.replace(/-[\w-]{8}\./, '-[hash].')} | ${f.kind} | ${f.bytes.toLocaleString('en-US')} | ${f.gzip.toLocaleString('en-US')} |`);
  const total = files.reduce((s, f) => ({ bytes: s.bytes + f.bytes, gzip: s.gzip + f.gzip }), { bytes: 0, gzip: 0 });
  console.log(`| **total** | | ${total.bytes.toLocaleString('en-US')} | ${total.gzip.toLocaleString('en-US')} |`);
  return total;
}

const failures = [];

const core = await buildApp(
  'core',
  { 'app.js': "import { InMemoryTransport, InMemoryStore, Runtime } from 'leasehold';\nglobalThis.app = { InMemoryTransport, InMemoryStore, Runtime };\n" },
  'app.js',
  true,
);
const coreTotal = print("Core entry: InMemoryTransport, InMemoryStore, Runtime from 'leasehold'", core);
if (coreTotal.gzip > TARGETS.core) failures.push(`core entry ${kB(coreTotal.gzip)} gzip > ${kB(TARGETS.core)}`);

const page = {
  'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body><script type="module" src="./main.js"></script></body></html>\n',
  'main.js': "import { openBrowserDatabase } from 'leasehold/browser';\nconst db = await openBrowserDatabase({ name: 'app' });\nawait db.transport.publish('g', { hello: 'world' });\n",
};
for (const trim of [true, false]) {
  const files = await buildApp(trim ? 'browser' : 'browser-untrimmed', page, 'index.html', trim);
  const label = trim ? "with `leasehold()` from 'leasehold/vite'" : 'without the plugin (plain Vite config)';
  print(`One-page app using openBrowserDatabase, ${label}: everything \`vite build\` emits`, files);
  const entry = files.filter((f) => f.kind === 'entry chunk');
  const entryGzip = entry.reduce((s, f) => s + f.gzip, 0);
  console.log(`\nbrowser entry (the page's own JavaScript, no sqlite-wasm): ${kB(entryGzip)} gzip`);
  const unused = files.filter((f) => UNUSED.test(f.file));
  console.log(`unused sqlite-wasm files emitted: ${unused.length ? unused.map((f) => f.file).join(', ') : 'none'}`);
  if (trim) {
    if (entryGzip > TARGETS.browserEntry) failures.push(`browser entry ${kB(entryGzip)} gzip > ${kB(TARGETS.browserEntry)}`);
    if (unused.length) failures.push(`emitted ${unused.map((f) => f.file).join(', ')}`);
  }
}

rmSync(root, { recursive: true, force: true });
console.log(failures.length ? `\nMISSED: ${failures.join('; ')}` : `\nall size targets met (core ≤ ${kB(TARGETS.core)}, browser entry ≤ ${kB(TARGETS.browserEntry)}, no unused sqlite-wasm files)`);
process.exitCode = failures.length ? 1 : 0;
