/**
 * `npm run bench:browser [-- --quick] [-- --engine=firefox]`: the browser benchmarks, in headless
 * Chromium (or Firefox ESR over WebDriver BiDi) driven by Playwright, in two lanes measured in turns: a normal profile kept on disk (what users have:
 * `launchPersistentContext` with a user-data dir outside the repository) — the headline — and a
 * private (incognito) context, where Chromium keeps OPFS in memory and every file call is a
 * round trip to the browser process. For each: what one file-handle call costs; SqliteTransport
 * straight on opfs-sahpool in a worker beside the floor; and the public API from the owner tab
 * and from a second, forwarding tab, with 1, 4 and 16 consumers (group commit), batches, both
 * durabilities; and fair service with 8 loops forwarding from another tab.
 * Prints Markdown tables and writes bench/results/browser-<time>.json.
 *
 * Firefox: the profile on disk is a user-data directory as in Chromium; a private window has no
 * OPFS at all in Firefox (getDirectory() throws SecurityError), so that lane is a probe that says
 * so instead of figures.
 *
 * While working on one figure: `--lane=profile|incognito` keeps one lane, and `--api=<text>` runs
 * only the API rows whose title contains <text> (and the in-worker rows at one backlog, for the
 * floor), skipping the file-handle and fair-service sections; `--worker` runs only the
 * in-worker rows, at the backlogs of `--backlogs=1000,100000` (default all three);
 * `--checkpoint-costs=1000,4000,8000` only what a WAL of that many frames costs at `close()` and
 * when the database is opened after a crash (bench/browser/checkpoint.ts). Quote only full runs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, firefox, type Page } from 'playwright';
import { build, preview } from 'vite';
import { firefoxLaunchOptions } from '../../scripts/browsers.mjs';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';
import { sharedAliases } from '../../vite.config.ts';
import { type BenchRow, median, spreadOf, table, times } from '../lib.js';
import { apiRows, type ApiSetup, fairness, type FairnessFigures } from './api.js';
import type { CheckpointResult } from './checkpoint.js';
import { freePort } from '../../scripts/ports.mjs';

const quick = process.argv.includes('--quick');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const onlyLane = option('lane');
const onlyApi = option('api');
const workerOnly = process.argv.includes('--worker');
/** `--name=N,…` as positive integers, or undefined when the option is absent. */
const positiveIntegers = (name: string, what: string): number[] | undefined => {
  const values = option(name)?.split(',').map(Number);
  if (values?.some((n) => !Number.isInteger(n) || n < 1)) throw new RangeError(`--${name} must be ${what}`);
  return values;
};
const cacheOption = positiveIntegers('cache', 'a positive number of KiB')?.[0];
const checkpointOption = positiveIntegers('checkpoint', 'a positive number of pages')?.[0];
const backlogOption = positiveIntegers('backlogs', 'positive integers, comma-separated');
/** `--checkpoint-costs=1000,4000`: only what a WAL of that many frames costs at close() and after a crash. */
const checkpointCosts = positiveIntegers('checkpoint-costs', 'positive numbers of frames, comma-separated');
if (onlyLane !== undefined && onlyLane !== 'profile' && onlyLane !== 'incognito') throw new RangeError('--lane must be profile or incognito');
const engine = option('engine') ?? 'chromium';
if (engine !== 'chromium' && engine !== 'firefox') throw new RangeError('--engine must be chromium or firefox');
const runs = quick ? 3 : 5;
const port = process.env.BENCH_PORT ? Number(process.env.BENCH_PORT) : await freePort();
const root = new URL('.', import.meta.url).pathname;
const outDir = new URL('../../.tmp/bench-browser/', import.meta.url).pathname;

export interface Lane {
  key: 'profile' | 'incognito';
  label: string;
  context: BrowserContext;
  /** Operations per run relative to the profile lane: a private window is ~15× slower per commit. */
  scale: number;
  page?: Page;
}

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  resolve: { alias: sharedAliases },
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['@sqlite.org/sqlite-wasm'] },
  build: { outDir, emptyOutDir: true, target: 'es2022' },
});
const server = await preview({ configFile: false, root, logLevel: 'warn', build: { outDir }, preview: { host: '127.0.0.1', port, strictPort: true } });
const url = `http://127.0.0.1:${port}/`;
// Outside the repository tree: OPFS files inside the project make file watchers burn CPU.
const profileDir = mkdtempSync(join(os.tmpdir(), 'leasehold-bench-profile-'));
let persistent: BrowserContext;
let browser: Browser;
/** What a private window of this engine says when asked for OPFS, when it has none (Firefox). */
let privateWindowRefusal: string | undefined;
if (engine === 'chromium') {
  const executablePath = await findChromium();
  persistent = await chromium.launchPersistentContext(profileDir, { executablePath, args: chromiumArgs });
  browser = await chromium.launch({ executablePath, args: chromiumArgs });
} else {
  persistent = await firefox.launchPersistentContext(profileDir, firefoxLaunchOptions());
  const options = firefoxLaunchOptions();
  // Every window of this Firefox is private, as File > New Private Window makes one.
  browser = await firefox.launch({ ...options, firefoxUserPrefs: { ...options.firefoxUserPrefs, 'browser.privatebrowsing.autostart': true } });
  const probe = await browser.newPage();
  await probe.goto(url);
  privateWindowRefusal = await probe.evaluate(() => navigator.storage.getDirectory().then(() => undefined, (error: Error) => `${error.name}: ${error.message}`));
  await probe.close();
}
const lanes: Lane[] = [
  { key: 'profile' as const, label: 'profile on disk', context: persistent, scale: 1 },
  { key: 'incognito' as const, label: engine === 'chromium' ? 'private window (incognito)' : 'private window', context: await browser.newContext(), scale: 0.2 },
]
  .filter((lane) => onlyLane === undefined || lane.key === onlyLane)
  .filter((lane) => lane.key !== 'incognito' || privateWindowRefusal === undefined);
const version = engine === 'chromium' ? `Chromium ${browser.version()}` : `Firefox ${persistent.browser()?.version() ?? browser.version()}`;

export async function openPage(lane: Lane): Promise<Page> {
  const page = await lane.context.newPage();
  await page.goto(url);
  await page.locator('#status', { hasText: 'ready' }).waitFor();
  return page;
}

const handleRows: BenchRow[] = [];
/** The --checkpoint-costs rows: one per lane, frames and step, medians of the runs. */
const checkpointLines: string[] = [];
const workerRows: BenchRow[] = [];
let api: { rows: BenchRow[]; setups: ApiSetup[] } = { rows: [], setups: [] };
const fair: FairnessFigures[] = [];
const ops = (lane: Lane, n: number) => Math.max(20, Math.round(n * lane.scale * (quick ? 0.4 : 0.6)));

try {
  for (const lane of lanes) lane.page = await openPage(lane);

  if (checkpointCosts) {
    for (const lane of lanes) {
      for (const frames of checkpointCosts) {
        process.stderr.write(`checkpoint costs, ${lane.key}, ${frames} frames… `);
        const closes: CheckpointResult[] = [];
        const crashes: CheckpointResult[] = [];
        for (let round = 0; round < runs; round++) {
          closes.push((await lane.page!.evaluate(([f, b]) => (window as any).bench.checkpointCosts(f, b, false), [frames, 100_000])) as CheckpointResult);
          crashes.push((await lane.page!.evaluate(([f, b]) => (window as any).bench.checkpointCosts(f, b, true), [frames, 100_000])) as CheckpointResult);
        }
        const m = (values: (number | undefined)[]) => median(values.map(Number)).toFixed(1);
        checkpointLines.push(
          `| ${lane.label} | ${frames} | ${m(closes.map((r) => r.frames))} | ${m(closes.map((r) => r.closeMs))} | ${m(crashes.map((r) => r.frames))} | ${m(crashes.map((r) => r.poolMs))} | ${m(crashes.map((r) => r.openMs))} | ${m(crashes.map((r) => r.firstReadMs))} | ${m(crashes.map((r) => r.checkpointMs))} |`,
        );
        process.stderr.write('done\n');
      }
    }
  }

  const handleRates = new Map<string, number[]>();
  const handlesToo = onlyApi === undefined && !workerOnly && !checkpointCosts;
  if (handlesToo) process.stderr.write('file handles… ');
  for (let round = 0; round <= (handlesToo ? runs : -1); round++) {
    for (const lane of lanes) {
      const results = await lane.page!.evaluate((r) => (window as any).bench.handles(r), { calls: ops(lane, 2_000), runs: 1 });
      if (round === 0) continue;
      for (const r of results as { label: string; micros: number[] }[]) {
        const key = `${lane.label}: ${r.label}`;
        handleRates.set(key, [...(handleRates.get(key) ?? []), ...r.micros]);
      }
    }
  }
  for (const [key, micros] of handleRates) handleRows.push(row('one FileSystemSyncAccessHandle call', key, micros));
  if (handlesToo) process.stderr.write('done\n');

  const backlogs = checkpointCosts ? [] : (backlogOption ?? (quick || onlyApi !== undefined ? [1_000] : [1_000, 10_000, 100_000]));
  const floors = new Map<string, number>();
  for (const backlog of backlogs) {
    for (const lane of lanes) {
      // The private window only at the headline backlog: it is slow, and its cost does not grow with the backlog.
      if (lane.key === 'incognito' && backlog !== backlogs.at(-1)) continue;
      process.stderr.write(`in-worker, ${lane.key}, backlog ${backlog}… `);
      const request = { backlog, groups: 100, ops: ops(lane, 2_000), fullOps: ops(lane, 500), runs, ...(cacheOption === undefined ? {} : { cacheKiB: cacheOption }), ...(checkpointOption === undefined ? {} : { checkpointPages: checkpointOption }) };
      const results = (await lane.page!.evaluate((r) => (window as any).bench.inWorker(r), request)) as { label: string; rates: number[]; calls?: string }[];
      const batchFloors = new Map<string, number>();
      for (const r of results) {
        const durability = r.label.match(/durability \w+/)?.[0];
        const floorKey = `${lane.key} ${durability}`;
        if (r.label.startsWith('floor')) floors.set(floorKey, median(r.rates));
        if (r.label.startsWith('batch floor:')) batchFloors.set(floorKey, median(r.rates));
        const floor = floors.get(floorKey);
        // Issue 28's measure for batches: their rate beside the least SQL a batch can be, same durability.
        const batchFloor = /^(claimMany|ackAndClaimMany) .* in the worker/.test(r.label) ? batchFloors.get(floorKey) : undefined;
        const note = r.label.startsWith('floor') || !floor
          ? undefined
          : `${times(median(r.rates), floor)} the floor pair rate${batchFloor ? `, ${times(median(r.rates), batchFloor)} the batch floor` : ''}${r.calls ? `; ${r.calls}` : ''}`;
        workerRows.push(row(`in the worker, ${lane.label}, backlog ${backlog.toLocaleString('en-US')}, 100 groups`, r.label, r.rates, note));
      }
      process.stderr.write('done\n');
    }
  }

  if (!workerOnly && !checkpointCosts) api = await apiRows(lanes, { runs, quick, ops, openPage, floors, only: onlyApi });
  if (onlyApi === undefined && !workerOnly && !checkpointCosts) for (const lane of lanes) fair.push(await fairness(lane, api.setups.find((s) => s.lane === lane && s.durability === 'normal')!));
} finally {
  await persistent.close();
  await browser.close();
  rmSync(profileDir, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
}

function row(workload: string, backend: string, rates: number[], note?: string): BenchRow {
  return { workload, backend, opsPerSec: median(rates), spread: spreadOf(rates), rates, ...(note ? { note } : {}) };
}

const fairTable = [
  '| lane | owner\'s own publish p50 / p99 (ms) | forwarded publish p50 / p99 (ms) | own p99 ÷ forwarded p99 | close() (ms) |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...fair.map((f) => `| ${f.lane} | ${f.ownP50} / ${f.ownP99} | ${f.forwardedP50} / ${f.forwardedP99} | ${(f.ownP99 / f.forwardedP99).toFixed(2)} | ${f.closeMs} |`),
].join('\n');
console.log(`\n### browser (${version}${quick ? ', --quick' : ''})\n`);
if (privateWindowRefusal !== undefined) console.log(`private window: no figures, its OPFS is refused (navigator.storage.getDirectory(): ${privateWindowRefusal})\n`);
console.log(`${table(handleRows, 'µs per call')}\n\n${table(workerRows)}\n\n${table(api.rows, 'messages/s')}`);
if (checkpointLines.length > 0) {
  console.log(
    `\n**a WAL of N frames (ackAndClaimMany of 32 at backlog 100,000, automatic checkpoints off), ms, medians of ${runs}**\n\n` +
      '| lane | N | frames | close() | frames after the crash | pool install | open (WAL recovery) | first read | checkpoint of the recovered WAL |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n' +
      checkpointLines.join('\n'),
  );
}
if (fair.length > 0) console.log(`\n**fair service: 8 loops forwarding from a second tab, the owner tab publishing one at a time**\n\n${fairTable}`);
const started = new Date();
mkdirSync(new URL('../results/', import.meta.url), { recursive: true });
const file = new URL(`../results/browser-${started.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(
  file,
  JSON.stringify(
    {
      started: started.toISOString(),
      quick,
      runs,
      ...(onlyLane === undefined ? {} : { lane: onlyLane }),
      ...(onlyApi === undefined ? {} : { api: onlyApi }),
      ...(workerOnly ? { workerOnly } : {}),
      ...(checkpointCosts ? { checkpointCosts: checkpointLines } : {}),
      ...(backlogOption ? { backlogs: backlogOption } : {}),
      machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, load: os.loadavg(), node: process.version },
      browser: version,
      ...(privateWindowRefusal === undefined ? {} : { privateWindowRefusal }),
      handles: handleRows,
      worker: workerRows,
      api: api.rows,
      fairness: fair,
    },
    null,
    2,
  ),
);
console.log(`\nwrote ${file.pathname}`);

