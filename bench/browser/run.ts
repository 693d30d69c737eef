/**
 * `npm run bench:browser [-- --quick]`: the browser benchmarks, in headless Chromium driven by
 * Playwright. In the host worker's shoes (SqliteTransport straight on opfs-sahpool) beside the
 * floor, and through the public API from the owner tab and from a second, forwarding tab.
 * Prints Markdown tables and writes bench/results/browser-<time>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { chromium, type Page } from 'playwright';
import { build, preview } from 'vite';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';
import { sharedAliases } from '../../vite.config.ts';
import { type BenchRow, median, spreadOf, table } from '../lib.js';

const quick = process.argv.includes('--quick');
const runs = quick ? 3 : 5;
const root = new URL('.', import.meta.url).pathname;
const outDir = new URL('../../.tmp/bench-browser/', import.meta.url).pathname;

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  resolve: { alias: sharedAliases },
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['@sqlite.org/sqlite-wasm'] },
  build: { outDir, emptyOutDir: true, target: 'es2022' },
});
const server = await preview({ configFile: false, root, logLevel: 'warn', build: { outDir }, preview: { host: '127.0.0.1', port: 4180, strictPort: true } });
const url = 'http://127.0.0.1:4180/';
const browser = await chromium.launch({ executablePath: await findChromium(), args: chromiumArgs });
const rows: BenchRow[] = [];
const row = (workload: string, backend: string, rates: number[], note?: string) =>
  rows.push({ workload, backend, opsPerSec: median(rates), spread: spreadOf(rates), ...(note ? { note } : {}) });

// One context: pages of one context share OPFS, Web Locks and BroadcastChannel, like tabs.
const context = await browser.newContext();
async function openPage(): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('#status', { hasText: 'ready' }).waitFor();
  return page;
}

try {
  const page = await openPage();
  // --quick (under two minutes): one backlog and fewer operations, most of all with `full`,
  // where every commit waits for the disk.
  for (const backlog of process.argv.includes('--api-only') ? [] : quick ? [1_000] : [1_000, 10_000, 100_000]) {
    process.stderr.write(`in-worker, backlog ${backlog}… `);
    const request = { backlog, groups: 100, ops: quick ? 300 : 500, fullOps: quick ? 40 : 100, runs };
    const results = await page.evaluate((r) => (window as any).bench.inWorker(r), request);
    for (const r of results as { label: string; rates: number[] }[]) row(`backlog ${backlog.toLocaleString('en-US')}, 100 groups`, r.label, r.rates);
    process.stderr.write('done\n');
  }

  // Through the public API: the owner tab's calls go page → its host worker; the second tab's go
  // page → its host → BroadcastChannel → the owner's host and back.
  process.stderr.write('through openBrowserDatabase… ');
  const second = await openPage();
  const name = `rpc-${Date.now().toString(36)}`;
  const open = (p: Page) => p.evaluate(async (name) => ((window as any).db = await (window as any).bench.openBrowserDatabase({ name })), name);
  await open(page);
  await open(second);
  const publishOps = quick ? 1_000 : 2_000;
  const rpcBacklog = `~${((runs + 1) * publishOps).toLocaleString('en-US')}`;
  const publishRates: number[] = await page.evaluate(async ({ runs, ops }) => {
    const { db } = window as any;
    const rates = [];
    for (let run = 0; run <= runs; run++) {
      const start = performance.now();
      for (let i = 0; i < ops; i++) await db.transport.publish(`g${i % 100}`, { n: i, note: 'x'.repeat(60) });
      if (run > 0) rates.push((ops / (performance.now() - start)) * 1000);
    }
    return rates;
  }, { runs, ops: publishOps });
  row(`publish, backlog ≥ ${quick ? '1,000' : '2,000'}`, 'openBrowserDatabase, owner tab', publishRates);
  const claimAck = (p: Page) =>
    p.evaluate(async (ops) => {
      const { db } = window as any;
      let elapsed = 0;
      for (let i = 0; i < ops; i++) {
        const start = performance.now();
        const lease = await db.transport.claim('bench', 30_000);
        if (!lease) throw new Error(`nothing to claim: ${JSON.stringify((await db.transport.inspect()).groups.slice(0, 2))}`);
        await db.transport.ack(lease);
        elapsed += performance.now() - start;
        await db.transport.publish(`g${i % 100}`, { n: i, note: 'x'.repeat(60) });
      }
      return (ops / elapsed) * 1000;
    }, quick ? 250 : 500);
  const local: number[] = [];
  const forwarded: number[] = [];
  await claimAck(page);
  await claimAck(second);
  for (let run = 0; run < runs; run++) {
    // Alternate the two so drift on a shared machine hits both alike.
    local.push(await claimAck(page));
    forwarded.push(await claimAck(second));
  }
  row(`claim+ack, backlog ${rpcBacklog}, 100 groups`, 'openBrowserDatabase, owner tab', local);
  row(`claim+ack, backlog ${rpcBacklog}, 100 groups`, 'openBrowserDatabase, second tab (forwarded)', forwarded, `${(median(local) / median(forwarded)).toFixed(2)}× the owner's cost`);
  process.stderr.write('done\n');
} finally {
  await browser.close();
  await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
}

console.log(`\n### browser (Chromium ${browser.version()})\n\n${table(rows)}`);
const started = new Date();
mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
const file = new URL(`../results/browser-${started.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(
  file,
  JSON.stringify({ started: started.toISOString(), quick, runs, machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, node: process.version }, chromium: browser.version(), rows }, null, 2),
);
console.log(`\nwrote ${file.pathname}`);
