/**
 * `npm run bench [-- --quick]`: runs the Node benchmarks, prints Markdown tables and writes
 * one JSON file per run to bench/results/ with the machine, versions and parameters.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchStore } from './store.js';
import { benchTransport } from './transport.js';
import { type BenchRow, table } from './lib.js';

const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const started = new Date();

const sections: [string, () => Promise<BenchRow[]>][] = [
  ['transport', () => benchTransport({ quick })],
  ['store', () => benchStore({ quick })],
];

const results: Record<string, BenchRow[]> = {};
for (const [name, run] of sections) {
  if (only && only !== name) continue;
  process.stderr.write(`${name} `);
  results[name] = await run();
  process.stderr.write('\n');
  console.log(`\n### ${name}\n\n${table(results[name]!)}`);
}

const version = (pkg: string): string => {
  try {
    return JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
  } catch {
    return 'not installed';
  }
};
const record = {
  started: started.toISOString(),
  quick,
  machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}`, node: process.version },
  versions: Object.fromEntries(['@sqlite.org/sqlite-wasm', 'better-sqlite3'].map((p) => [p, version(p)])),
  results,
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL(`./results/node-${started.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(record, null, 2));
console.log(`\nwrote ${file.pathname}`);
