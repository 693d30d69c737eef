/**
 * The public-API rows of the browser benchmark: a database opened with `openBrowserDatabase` in
 * an owner tab and a second, forwarding tab (and a third forwarding over the BroadcastChannel only,
 * the fallback where there is no SharedWorker, for the single-call rows), at a 100,000-message backlog (10,000 with --quick)
 * that is topped up after every run; each workload measured in both lanes in turns, for both
 * durabilities. Then fair service: 8 loops forwarding from the second tab while the owner tab
 * publishes one call at a time, and how long the owner's close() takes meanwhile.
 */
import type { Page } from 'playwright';
import { alternate, type BenchRow, times } from '../lib.js';
import type { Lane } from './run.js';
import type { Latency, LoopMode, Timed } from './workloads.js';

export interface ApiSetup {
  lane: Lane;
  durability: 'normal' | 'full';
  name: string;
  owner: Page;
  second: Page;
  /** Forwards over the BroadcastChannel only (opened without the link broker). */
  third: Page;
}

interface Shape {
  title: string;
  mode: LoopMode | 'publish' | 'publishMany';
  tabs: 'owner' | 'second' | 'third' | 'both';
  loops: number;
  /** Operations per run in the profile lane, durability normal. */
  base: number;
  batches?: boolean;
}

const SHAPES: Shape[] = [
  { title: 'publish, one at a time, owner tab', mode: 'publish', tabs: 'owner', loops: 1, base: 1_500 },
  { title: 'publishMany of 32, owner tab', mode: 'publishMany', tabs: 'owner', loops: 1, base: 8_000, batches: true },
  { title: 'claim + ack, 1 consumer, owner tab', mode: 'claim+ack', tabs: 'owner', loops: 1, base: 1_000 },
  { title: 'claim + ack, 1 consumer, second tab (forwarded)', mode: 'claim+ack', tabs: 'second', loops: 1, base: 1_000 },
  { title: 'claim + ack, 1 consumer, third tab (forwarded, BroadcastChannel only)', mode: 'claim+ack', tabs: 'third', loops: 1, base: 1_000 },
  { title: 'ackAndClaim, 1 consumer, owner tab', mode: 'ackAndClaim', tabs: 'owner', loops: 1, base: 1_500 },
  { title: 'ackAndClaim, 1 consumer, second tab (forwarded)', mode: 'ackAndClaim', tabs: 'second', loops: 1, base: 1_500 },
  { title: 'ackAndClaim, 1 consumer, third tab (forwarded, BroadcastChannel only)', mode: 'ackAndClaim', tabs: 'third', loops: 1, base: 1_500 },
  { title: 'ackAndClaim, 4 consumers, owner tab', mode: 'ackAndClaim', tabs: 'owner', loops: 4, base: 3_000 },
  { title: 'ackAndClaim, 16 consumers, owner tab', mode: 'ackAndClaim', tabs: 'owner', loops: 16, base: 4_000 },
  { title: 'ackAndClaim, 4 consumers across two tabs (2 + 2)', mode: 'ackAndClaim', tabs: 'both', loops: 4, base: 3_000 },
  { title: 'ackAndClaim, 16 consumers across two tabs (8 + 8)', mode: 'ackAndClaim', tabs: 'both', loops: 16, base: 4_000 },
  { title: 'claimMany + ackMany of 32, owner tab', mode: 'batch32', tabs: 'owner', loops: 1, base: 8_000, batches: true },
  { title: 'claimMany + ackMany of 32, second tab (forwarded)', mode: 'batch32', tabs: 'second', loops: 1, base: 8_000, batches: true },
  { title: 'ackAndClaimMany of 32, owner tab', mode: 'ackAndClaimMany32', tabs: 'owner', loops: 1, base: 8_000, batches: true },
  { title: 'ackAndClaimMany of 32, second tab (forwarded)', mode: 'ackAndClaimMany32', tabs: 'second', loops: 1, base: 8_000, batches: true },
  { title: 'consume(), concurrency 16, owner tab', mode: 'consume', tabs: 'owner', loops: 16, base: 6_000 },
  { title: 'consume(), concurrency 16, second tab (forwarded)', mode: 'consume', tabs: 'second', loops: 16, base: 6_000 },
  { title: 'consume(), concurrency 8 in each of two tabs', mode: 'consume', tabs: 'both', loops: 16, base: 6_000 },
];

interface Context {
  runs: number;
  quick: boolean;
  ops(lane: Lane, n: number): number;
  openPage(lane: Lane): Promise<Page>;
  /** Floor pair rates from the worker rows, by `${lane.key} durability ${durability}`. */
  floors: Map<string, number>;
  /** Only the shapes whose title contains this text. */
  only?: string | undefined;
}

export async function apiRows(lanes: Lane[], ctx: Context): Promise<{ rows: BenchRow[]; setups: ApiSetup[] }> {
  const backlog = ctx.quick ? 10_000 : 100_000;
  const setups: ApiSetup[] = [];
  for (const lane of lanes) {
    for (const durability of ['normal', 'full'] as const) {
      const name = `api-${lane.key}-${durability}-${Date.now().toString(36)}`;
      const owner = await ctx.openPage(lane);
      const second = await ctx.openPage(lane);
      const third = await ctx.openPage(lane);
      await owner.evaluate((r) => (window as any).bench.fill(r), { fill: name, backlog, groups: 100 });
      // The owner tab opens first, so it owns the file.
      for (const page of [owner, second, third]) {
        await page.evaluate(async ({ name, durability, noBroker }) => {
          const w = window as any;
          w.dbs ??= {};
          w.dbs[name] = await (noBroker ? w.bench.openWithoutBroker : w.bench.openBrowserDatabase)({ name, durability });
        }, { name, durability, noBroker: page === third });
      }
      // The port to the owner is paired a moment after open; the rows measure the path users get.
      const via = await second.evaluate(async (name) => {
        const db = (window as any).dbs[name];
        for (let i = 0; i < 50 && (await db.owner()).via !== 'port'; i++) await new Promise((r) => setTimeout(r, 20));
        return (await db.owner()).via;
      }, name);
      process.stderr.write(`${lane.label}, ${durability}: the second tab forwards via ${via}\n`);
      setups.push({ lane, durability, name, owner, second, third });
    }
  }
  const batches = await setups[0]!.owner.evaluate((name) => (window as any).bench.hasBatches((window as any).dbs[name]), setups[0]!.name);

  const byWorkload = new Map<string, BenchRow[]>();
  const workload = (s: ApiSetup) => `through openBrowserDatabase, ${s.lane.label}, backlog ~${backlog.toLocaleString('en-US')}, durability ${s.durability}`;
  for (const setup of setups) byWorkload.set(workload(setup), []);
  for (const durability of ['normal', 'full'] as const) {
    for (const shape of SHAPES) {
      if (shape.batches && !batches) continue;
      if (ctx.only !== undefined && !shape.title.includes(ctx.only)) continue;
      process.stderr.write(`api, ${durability}: ${shape.title}… `);
      const entrants = setups
        .filter((s) => s.durability === durability)
        .map((s) => ({ name: workload(s), measure: () => measure(s, shape, ctx.ops(s.lane, shape.base * (durability === 'full' ? 0.3 : 1))) }));
      for (const [name, result] of await alternate(ctx.runs, entrants)) {
        byWorkload.get(name)!.push({ workload: name, backend: shape.title, ...result });
      }
      process.stderr.write('done\n');
    }
  }
  for (const setup of setups) {
    const rows = byWorkload.get(workload(setup))!;
    const floor = ctx.floors.get(`${setup.lane.key} durability ${setup.durability}`);
    for (const r of rows) {
      const own = rows.find((o) => o.backend === r.backend.replace(/(second|third) tab \(forwarded.*\)$/, 'owner tab'));
      if (r.backend.includes('forwarded') && own) r.note = `${times(own.opsPerSec, r.opsPerSec)} the owner tab's cost`;
      else if (floor && !r.backend.startsWith('publish')) r.note = `${times(r.opsPerSec, floor)} the floor pair rate`;
    }
  }
  return { rows: [...byWorkload.values()].flat(), setups };
}

/** One timed run of `shape` on `setup`, then an untimed top-up of what it consumed. */
async function measure(setup: ApiSetup, shape: Shape, ops: number): Promise<number> {
  const run = (page: Page, loops: number, n: number, worker: string) =>
    page.evaluate(
      ({ name, mode, loops, n, worker }) => {
        const w = window as any;
        const db = w.dbs[name];
        if (mode === 'publish') return w.bench.publishSerially(db, n);
        if (mode === 'publishMany') return w.bench.publishBatches(db, n);
        if (mode === 'consume') return w.bench.consumeBench(db, loops, n, worker);
        return w.bench.runLoops(db, loops, n, mode, worker);
      },
      { name: setup.name, mode: shape.mode, loops, n, worker },
    ) as Promise<Timed>;
  let timed: Timed[];
  if (shape.tabs === 'both') {
    timed = await Promise.all([run(setup.owner, shape.loops / 2, ops / 2, 'owner'), run(setup.second, shape.loops / 2, ops / 2, 'second')]);
  } else {
    timed = [await run(setup[shape.tabs], shape.loops, ops, shape.tabs)];
  }
  const done = timed.reduce((n, t) => n + t.done, 0);
  const elapsed = Math.max(...timed.map((t) => t.end)) - Math.min(...timed.map((t) => t.start));
  if (!shape.mode.startsWith('publish')) await setup.owner.evaluate(({ name, done }) => (window as any).bench.topUp((window as any).dbs[name], done), { name: setup.name, done });
  return (done / elapsed) * 1000;
}

export interface FairnessFigures {
  lane: string;
  ownP50: number;
  ownP99: number;
  forwardedP50: number;
  forwardedP99: number;
  closeMs: number;
}

/** 8 loops forwarding from the second tab; the owner publishes 200 calls one at a time, then closes. */
export async function fairness(lane: Lane, setup: ApiSetup): Promise<FairnessFigures> {
  process.stderr.write(`fair service, ${lane.key}… `);
  const { name } = setup;
  await setup.second.evaluate((name) => ((window as any).stopLoops = (window as any).bench.forwardLoops((window as any).dbs[name], 8)), name);
  await setup.second.waitForTimeout(300);
  const own: Latency[] = await setup.owner.evaluate((name) => (window as any).bench.ownCalls((window as any).dbs[name], 200), name);
  const closeMs: number = await setup.owner.evaluate(async (name) => {
    const start = performance.now();
    await (window as any).dbs[name].close();
    return performance.now() - start;
  }, name);
  const forwarded: Latency[] = await setup.second.evaluate(() => (window as any).stopLoops());
  const from = own[0]!.at - own[0]!.ms;
  const during = forwarded.filter((f) => f.at >= from && f.at <= own.at(-1)!.at).map((f) => f.ms);
  process.stderr.write('done\n');
  const ms = own.map((o) => o.ms);
  return { lane: lane.label, ownP50: pct(ms, 0.5), ownP99: pct(ms, 0.99), forwardedP50: pct(during, 0.5), forwardedP99: pct(during, 0.99), closeMs: Math.round(closeMs) };
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN) * 10) / 10;
}


