/**
 * `npm run bench [-- --quick] [-- --only=transport|queue|consume|store|memory|edge|receiver]`: runs the Node benchmarks,
 * prints Markdown tables and writes one JSON file per run to bench/results/ with the machine,
 * versions and parameters. `npm run bench` starts Node with `--expose-gc` for the memory figures.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchConsume } from './consume.js';
import { benchEdge } from './edge.js';
import { benchMemory } from './memory.js';
import { benchQueue } from './queue.js';
import { benchReceiver } from './receiver.js';
import { benchStore } from './store.js';
import { benchTransport } from './transport.js';
import { type BenchRow, table } from './lib.js';

const quick = process.argv.includes('--quick');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const started = new Date();
const loadAtStart = os.loadavg();
const parameters: Record<string, object> = {};

const sections: [string, string, () => Promise<BenchRow[]>][] = [
  ['transport', 'ops/s', async () => {
    const { rows, bytes, parameters: p } = await benchTransport({ quick });
    parameters.transport = p;
    results['database size'] = bytes;
    return rows;
  }],
  ['queue', 'ops/s', () => benchQueue({ quick })],
  ['consume', 'messages/s', () => benchConsume({ quick })],
  ['store', 'ops/s', () => benchStore({ quick })],
  ['memory', 'bytes', () => benchMemory({ quick })],
  ['edge', 'messages/s', () => benchEdge({ quick })],
  ['receiver', 'deliveries/s', () => benchReceiver({ quick })],
];

const results: Record<string, BenchRow[]> = {};
for (const [name, unit, run] of sections) {
  if (only && only !== name) continue;
  const t0 = performance.now();
  process.stderr.write(`${name} `);
  results[name] = await run();
  process.stderr.write(` ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  console.log(`\n### ${name}\n\n${table(results[name]!, unit)}`);
  if (name === 'transport' && results['database size']?.length) console.log(`\n### database size\n\n${table(results['database size'], 'bytes')}`);
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
  seconds: Math.round((Date.now() - started.getTime()) / 1000),
  quick,
  machine: {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    loadAverageAtStart: loadAtStart,
  },
  versions: Object.fromEntries(['@sqlite.org/sqlite-wasm', 'better-sqlite3', 'plainjob'].map((p) => [p, version(p)])),
  parameters,
  results,
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL(`./results/node-${started.toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(record, null, 2));
console.log(`\nwrote ${file.pathname}`);
