#!/usr/bin/env node
// Runs `npm test`'s layers in two lanes side by side, as CI's 2 cores allow: each layer alone
// leaves much of the machine idle (a browser layer waits on its browser, workers and the disk;
// Node's suites on fsync, PostgreSQL and workerd), so two layers at once finish in well under
// the time of one after the other. Every layer still runs, exactly as `npm run <layer>` runs it.
// Each line a layer prints is prefixed with its name; the first failure stops the run (the other
// lane's layer is ended) and the run ends with a table of what ran, how long, and how it ended.
//
//   node scripts/test-layers.mjs              the lanes below
//   node scripts/test-layers.mjs --serial     every layer one after another (to time one alone)
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * The two lanes, balanced on this project's figures (at d881494, one after another: node 317 s,
 * Chromium 260, Firefox 155, e2e 342, pack ~60, the static checks ~130; WebKit's suites in memory
 * then came to ~150): the first has the Node suites, then Firefox's and WebKit's suites and the
 * package test; the second installs the browsers (one apt-get for all three engines on a fresh
 * Debian machine), then runs Chromium's suites and the end-to-end specs. dist/ is built by
 * typecheck and read by size and pack, all in the first lane, so nothing reads it while it is
 * rebuilt.
 */
const LANES = [
  ['typecheck', 'size', 'test:node', 'test:firefox', 'test:webkit', 'test:pack'],
  ['lint', 'browsers', 'test:browser', 'test:e2e'],
];

/** Layers that must wait for another, wherever it runs: the browsers' install (two apt-gets at once would collide). */
const NEEDS = { 'test:firefox': ['browsers'], 'test:webkit': ['browsers'], 'test:pack': ['browsers'] };

/** `--serial`: the order `npm test` ran them in before the lanes. */
const SERIAL = ['typecheck', 'lint', 'size', 'browsers', 'test:node', 'test:browser', 'test:firefox', 'test:webkit', 'test:e2e', 'test:pack'];

/** A layer's command: `npm run <name>`, except the browsers' install, which is a script. */
const COMMANDS = {
  browsers: ['node', ['scripts/ensure-browsers.mjs']],
};

const serial = process.argv.includes('--serial');
const lanes = serial ? [SERIAL] : LANES;
const width = Math.max(...LANES.flat().map((name) => name.length));
/** @type {{ name: string, status: string, seconds: number }[]} */
const results = [];
/** @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();
let failed = false;
const started = Date.now();

/** @type {Map<string, { promise: Promise<boolean>, resolve: (ok: boolean) => void }>} */
const done = new Map(LANES.flat().map((name) => {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return [name, { promise, resolve }];
}));

/** Runs one layer in a process group of its own (so a failure elsewhere can end all of it). */
function runLayer(name) {
  return new Promise((resolve) => {
    const [command, args] = COMMANDS[name] ?? ['npm', ['run', '--silent', name]];
    const begin = Date.now();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
    running.add(child);
    const prefix = `${name.padEnd(width)} │ `;
    for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => console.log(prefix + line));
    console.log(`${prefix}▶ started at +${Math.round((begin - started) / 1000)} s`);
    child.on('close', (code, signal) => {
      running.delete(child);
      const seconds = Math.round((Date.now() - begin) / 1000);
      const status = code === 0 ? 'passed' : failed ? 'stopped' : `failed (${signal ?? `exit ${code}`})`;
      console.log(`${prefix}■ ${status} in ${seconds} s`);
      results.push({ name, status, seconds });
      resolve(code === 0);
    });
  });
}

async function runLane(lane) {
  for (const name of lane) {
    for (const need of NEEDS[name] ?? []) await done.get(need).promise;
    if (failed) break;
    const ok = await runLayer(name);
    done.get(name).resolve(ok);
    if (!ok) {
      if (!failed) {
        failed = true;
        // Whatever the other lane runs now would be thrown away: end it (its whole group).
        for (const child of running) {
          try {
            process.kill(-child.pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
      }
      break;
    }
  }
  // A layer that never ran (after a failure) lets whatever waits on it go on to see the failure.
  for (const name of lane) done.get(name).resolve(false);
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
    process.exit(1);
  });
}

await Promise.all(lanes.map(runLane));
const total = Math.round((Date.now() - started) / 1000);
console.log(`\n| layer | time | result |\n| --- | ---: | --- |`);
for (const { name, status, seconds } of results) console.log(`| ${name} | ${seconds} s | ${status} |`);
console.log(`| **all, ${serial ? 'one after another' : `${lanes.length} lanes`}** | **${total} s** | ${failed ? 'FAILED' : 'passed'} |`);
process.exitCode = failed ? 1 : 0;
