#!/usr/bin/env node
// Runs `npm test`'s layers two at a time, as CI's 2 cores allow: a layer alone leaves much of the
// machine idle (a browser layer waits on its browser, workers and the disk; Node's suites on
// fsync, PostgreSQL and workerd), so two at once finish well before one after the other would.
// Every layer still runs, exactly as `npm run <layer>` runs it. Each line a layer prints is
// prefixed with its name; the first failure stops the run (the other running layer is ended)
// and the run ends with a table of what ran, when, how long, and how it ended.
//
//   node scripts/test-layers.mjs              two at a time
//   node scripts/test-layers.mjs --serial     one after another (to time a layer alone)
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * The layers, in the order they are started: whenever one of the two slots is free it takes the
 * first layer here whose `after` have passed and that shares no `uses` with a running one. The
 * long layers come first (Node's suites ~320 s, e2e ~340, Chromium's ~260, Firefox's ~155,
 * WebKit's ~150 at d881494 on this machine, one after another), so the last to start are short.
 * A fixed split into two lanes was measured first: on a shared, loaded machine one lane ended
 * 15 minutes before the other; taking work as slots free up keeps both busy to the end.
 */
const LAYERS = [
  { name: 'typecheck', uses: ['dist'] }, // builds dist/ (and checks every export of it)
  { name: 'lint' },
  // One apt-get for all three engines on a fresh Debian machine; two at once would collide.
  { name: 'browsers', command: ['node', ['scripts/ensure-browsers.mjs']] },
  { name: 'size', after: ['typecheck'], uses: ['dist'] }, // rebuilds dist/
  { name: 'test:node' },
  { name: 'test:e2e', after: ['browsers'] },
  { name: 'test:browser', after: ['browsers'] },
  { name: 'test:firefox', after: ['browsers'] },
  { name: 'test:webkit', after: ['browsers'] },
  { name: 'test:pack', after: ['browsers', 'size'], uses: ['dist'] }, // npm pack rebuilds dist/
];

const serial = process.argv.includes('--serial');
const slots = serial ? 1 : 2;
const width = Math.max(...LAYERS.map(({ name }) => name.length));
const started = Date.now();
const since = (time) => Math.round((time - started) / 1000);
/** @type {{ name: string, start: number, status: string, seconds: number }[]} */
const results = [];
/** Layers running, by name: their process (a group of its own) and what they use. */
const running = new Map();
const passed = new Set();
let failed = false;

/** Runs one layer in a process group of its own (so a failure elsewhere can end all of it). */
function runLayer(layer) {
  const [command, args] = layer.command ?? ['npm', ['run', '--silent', layer.name]];
  const begin = Date.now();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.set(layer.name, { child, uses: layer.uses ?? [] });
  const prefix = `${layer.name.padEnd(width)} │ `;
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => console.log(prefix + line));
  console.log(`${prefix}▶ started at +${since(begin)} s`);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(layer.name);
      const seconds = Math.round((Date.now() - begin) / 1000);
      const status = code === 0 ? 'passed' : failed ? 'stopped' : `failed (${signal ?? `exit ${code}`})`;
      console.log(`${prefix}■ ${status} in ${seconds} s`);
      results.push({ name: layer.name, start: since(begin), status, seconds });
      resolve(code === 0);
    });
  });
}

function stopAll(signal) {
  for (const { child } of running.values()) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  }
}

const waiting = [...LAYERS];
/** The next layer a free slot may start now, taken out of the waiting list; undefined if none may. */
function next() {
  const busy = new Set([...running.values()].flatMap(({ uses }) => uses));
  const index = waiting.findIndex((layer) => (layer.after ?? []).every((name) => passed.has(name)) && !(layer.uses ?? []).some((use) => busy.has(use)));
  return index === -1 ? undefined : waiting.splice(index, 1)[0];
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (stopAll(signal), process.exit(1)));

await new Promise((resolve, reject) => {
  const fill = () => {
    if (failed || (waiting.length === 0 && running.size === 0)) {
      if (running.size === 0) resolve();
      return;
    }
    for (let layer = running.size < slots ? next() : undefined; layer; layer = running.size < slots ? next() : undefined) {
      void runLayer(layer).then((ok) => {
        if (ok) passed.add(layer.name);
        else if (!failed) {
          failed = true;
          // Whatever else runs now would be thrown away: end it (its whole process group).
          stopAll('SIGTERM');
        }
        fill();
      });
    }
    if (running.size === 0) reject(new Error(`no layer can start: ${waiting.map(({ name }) => name).join(', ')} wait for each other`));
  };
  fill();
});

const total = since(Date.now());
console.log(`\n| layer | started | time | result |\n| --- | ---: | ---: | --- |`);
for (const { name, start, status, seconds } of results) console.log(`| ${name} | +${start} s | ${seconds} s | ${status} |`);
for (const { name } of waiting) console.log(`| ${name} | | | not run |`);
console.log(`| **all, ${slots === 1 ? 'one after another' : 'two at a time'}** | | **${total} s** | ${failed ? 'FAILED' : 'passed'} |`);
process.exitCode = failed ? 1 : 0;
