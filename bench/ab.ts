/**
 * `npm run bench:ab -- --base=<commit> [--only=transport] [--rounds=3] [--quick]`: an
 * interleaved A/B of the Node benchmarks between a base commit and this working tree. The base
 * is checked out in a scratch worktree (sharing this tree's node_modules, so it needs no
 * install) and the two sides run one section in turns — base, head, base, head, … — so a load
 * that comes and goes weighs on both alike. Prints, per row, the median of each side over the
 * rounds and the head ÷ base ratio; rows only one side has are left out. Quote the ratios, not
 * the rates: a shared machine moves rates more than it moves ratios.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { type BenchRow, median } from './lib.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const base = option('base');
if (!base) throw new TypeError('--base=<commit> is required: the commit to compare this tree with');
const only = option('only') ?? 'transport';
const rounds = Number(option('rounds') ?? 3);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new RangeError('--rounds must be an integer from 1 to 20');
const quick = process.argv.includes('--quick');

const head = new URL('..', import.meta.url).pathname;
const git = (...args: string[]) => execFileSync('git', args, { cwd: head, encoding: 'utf8' }).trim();
const baseCommit = git('rev-parse', '--verify', `${base}^{commit}`);
const scratch = mkdtempSync(join(os.tmpdir(), 'leasehold-ab-'));
const baseTree = join(scratch, 'base');
git('worktree', 'add', '--detach', baseTree, baseCommit);
symlinkSync(join(head, 'node_modules'), join(baseTree, 'node_modules'));

/** Runs one section in `tree` and reads back the rows its run wrote. */
function runIn(tree: string): BenchRow[] {
  const results = join(tree, 'bench', 'results');
  const before = new Set(safeList(results));
  const args = ['tsx', '--expose-gc', 'bench/run.ts', `--only=${only}`, ...(quick ? ['--quick'] : [])];
  execFileSync('npx', args, { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] });
  const written = safeList(results).filter((f) => f.startsWith('node-') && !before.has(f));
  if (written.length !== 1) throw new Error(`expected one new result file in ${results}, found ${written.length}`);
  const record = JSON.parse(readFileSync(join(results, written[0]!), 'utf8')) as { results: Record<string, BenchRow[]> };
  return record.results[only] ?? [];
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const key = (row: BenchRow) => `${row.workload} | ${row.backend}`;
const sides = { base: new Map<string, number[]>(), head: new Map<string, number[]>() };
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [side, tree] of [['base', baseTree], ['head', head]] as const) {
      process.stderr.write(`round ${round}/${rounds}: ${side}\n`);
      for (const row of runIn(tree)) {
        const list = sides[side].get(key(row)) ?? [];
        list.push(row.opsPerSec);
        sides[side].set(key(row), list);
      }
    }
  }
} finally {
  git('worktree', 'remove', '--force', baseTree);
  rmSync(scratch, { recursive: true, force: true });
}

console.log(`\n### A/B: ${only}, base ${baseCommit.slice(0, 7)} against head ${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? ' (with uncommitted changes)' : ''}, ${rounds} interleaved rounds${quick ? ', quick' : ''}\n`);
console.log('| workload | backend | base (median) | head (median) | head ÷ base |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const [name, baseRates] of sides.base) {
  const headRates = sides.head.get(name);
  if (!headRates) continue;
  const [workload, backend] = name.split(' | ');
  const b = median(baseRates);
  const h = median(headRates);
  console.log(`| ${workload} | ${backend} | ${Math.round(b).toLocaleString('en-US')} | ${Math.round(h).toLocaleString('en-US')} | ${(h / b).toFixed(2)} |`);
}
