/**
 * Transport workloads in Node, every contender of bench/contenders.ts side by side, measured in
 * turns (see `alternate`): claim+ack at a steady backlog (1k, 10k, 100k messages over 100 or
 * 10,000 groups; ~100 B and 10 KB events), by one consumer and by four, and publish.
 *
 * Single consumer: each timed claim+ack is followed by an untimed publish of a replacement, so
 * every claim sees the stated backlog; only claim and ack are timed. Four consumers: before each
 * run the backlog is topped up (untimed), then four consumers claim+ack concurrently and the
 * wall time is what counts; the backlog drifts down by the run's operations (at most 4%).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Contender, contenders, type Queue, references } from './contenders.js';
import { alternate, type BenchRow, type Entrant, times } from './lib.js';

export const EVENT_100B = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };
export const EVENT_10KB = { type: 'document.uploaded', size: 10_000, body: 'x'.repeat(10_000) };

export interface TransportBenchOptions {
  quick: boolean;
}

interface Workload {
  title: string;
  backlog: number;
  groups: number;
  event: object;
  consumers: 1 | 4;
  /** Database bytes per queued message are recorded after filling this workload's queues. */
  recordBytes?: boolean;
}

/** Operations per timed run: enough for ~50–300 ms each, whatever the contender's speed. */
function opsFor(contender: Contender, backlog: number): number {
  if (contender.family === 'seed') return Math.max(8, Math.min(400, Math.round(1e6 / backlog / (contender.driver === 'memory' ? 2 : 4))));
  if (contender.driver === 'memory') return 40_000;
  return 1_500;
}

const groupIds = (groups: number): string[] => Array.from({ length: groups }, (_, i) => `g${i}`);

async function fill(queue: Queue, count: number, ids: string[], event: object, start = 0): Promise<void> {
  for (let i = 0; i < count; i++) await queue.publish(ids[(start + i) % ids.length]!, event);
}

/** One consumer, backlog held steady; returns claim+ack/s. */
async function steadyRun(queue: Queue, ops: number, ids: string[], event: object, clock: { t: number }): Promise<number> {
  let elapsed = 0;
  for (let i = 0; i < ops; i++) {
    clock.t += 1;
    const start = performance.now();
    const done = await queue.claimAck(clock.t, 'bench');
    elapsed += performance.now() - start;
    if (!done) throw new Error('bench: queue ran dry');
    await queue.publish(ids[(clock.t * 7919) % ids.length]!, event);
  }
  return (ops / elapsed) * 1000;
}

/** Four consumers at once; returns claim+ack/s over the wall time. */
async function concurrentRun(queues: Queue[], ops: number, ids: string[], event: object, clock: { t: number }): Promise<number> {
  await fill(queues[0]!, ops * queues.length, ids, event, clock.t);
  const start = performance.now();
  await Promise.all(
    queues.map(async (queue, n) => {
      for (let i = 0; i < ops; i++) {
        if (!(await queue.claimAck(++clock.t, `worker-${n}`))) throw new Error('bench: queue ran dry');
      }
    }),
  );
  return ((ops * queues.length) / (performance.now() - start)) * 1000;
}

/** Notes each row with the ratios that matter, all from this one run. */
function annotate(rows: BenchRow[], byName: Map<string, Contender>): void {
  const rate = (c: Contender | undefined) => rows.find((r) => r.backend === c?.name)?.opsPerSec;
  for (const row of rows) {
    const c = byName.get(row.backend)!;
    const floor = rate(references(c.driver, 'floor')[0]);
    const ours: [string, number][] = [];
    for (const o of references(c.driver, 'leasehold')) {
      const r = rate(o);
      if (r !== undefined) ours.push([o.name.includes('ackAndClaim') ? 'with ackAndClaim ' : '', r]);
    }
    const faster = () => ours.map(([how, r]) => `${how}${times(r, row.opsPerSec)}`).join(', ');
    const notes: string[] = [];
    if (c.family === 'leasehold' && floor) notes.push(`cost ${times(floor, row.opsPerSec)} the floor`);
    if (c.family === 'seed' && ours.length) notes.push(`what the seed achieves; leasehold ${faster()} faster`);
    if (c.family === 'peer' && ours.length) notes.push(`leasehold ${faster()} this`);
    if (c.family === 'floor') notes.push('two write transactions per op');
    if (notes.length) row.note = notes.join('; ');
  }
}

export async function benchTransport(options: TransportBenchOptions): Promise<{ rows: BenchRow[]; bytes: BenchRow[]; parameters: object }> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-'));
  const runs = options.quick ? 3 : 5;
  const backlogs = options.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const workloads: Workload[] = [];
  for (const groups of options.quick ? [100] : [100, 10_000]) {
    for (const backlog of backlogs) {
      if (groups > backlog) continue;
      workloads.push({ title: `claim+ack, 1 consumer, backlog ${backlog.toLocaleString('en-US')}, ${groups.toLocaleString('en-US')} groups, ~100 B event`, backlog, groups, event: EVENT_100B, consumers: 1, recordBytes: groups === 100 && backlog === backlogs.at(-1) });
    }
  }
  const mid = options.quick ? 1_000 : 10_000;
  workloads.push({ title: `claim+ack, 1 consumer, backlog ${mid.toLocaleString('en-US')}, 100 groups, 10 KB event`, backlog: mid, groups: 100, event: EVENT_10KB, consumers: 1, recordBytes: true });
  workloads.push({ title: `claim+ack, 4 consumers, backlog ${mid.toLocaleString('en-US')}, 100 groups, ~100 B event`, backlog: mid, groups: 100, event: EVENT_100B, consumers: 4 });

  const byName = new Map(contenders.map((c) => [c.name, c]));
  const rows: BenchRow[] = [];
  const bytes: BenchRow[] = [];
  try {
    for (const w of workloads) {
      const ids = groupIds(w.groups);
      const entrants: Entrant[] = [];
      const open: Queue[] = [];
      for (const c of contenders) {
        // The seeds sort every message per claim: with 10 KB events that would take minutes.
        if (c.family === 'seed' && (w.consumers > 1 || w.event === EVENT_10KB)) continue;
        const queue = await c.open(dir);
        open.push(queue);
        if (c.family !== 'floor') await fill(queue, w.backlog, ids, w.event);
        if (w.recordBytes && queue.bytes) {
          const perMessage = queue.bytes() / w.backlog;
          bytes.push({ workload: `database bytes per queued message, ${w.event === EVENT_10KB ? '10 KB' : '~100 B'} event, ${w.backlog.toLocaleString('en-US')} queued`, backend: c.name, opsPerSec: perMessage, spread: '' });
        }
        const clock = { t: 1 };
        const ops = opsFor(c, w.backlog) / (w.event === EVENT_10KB ? 2 : 1);
        if (w.consumers === 1 || c.family === 'floor') {
          entrants.push({ name: c.name, measure: () => steadyRun(queue, ops, ids, w.event, clock) });
        } else {
          const queues = [queue, ...(await Promise.all([1, 2, 3].map(() => queue.consumer())))];
          open.push(...queues.slice(1).filter((q) => q !== queue));
          entrants.push({ name: c.name, measure: () => concurrentRun(queues, Math.round(ops / 4), ids, w.event, clock) });
        }
      }
      const results = await alternate(runs, entrants);
      const workloadRows: BenchRow[] = [...results].map(([backend, r]) => ({ workload: w.title, backend, ...r }));
      annotate(workloadRows, byName);
      rows.push(...workloadRows);
      for (const queue of new Set(open)) queue.close();
      process.stderr.write('.');
    }

    for (const [label, event] of [['~100 B', EVENT_100B], ['10 KB', EVENT_10KB]] as const) {
      const ids = groupIds(100);
      const entrants: Entrant[] = [];
      const open: Queue[] = [];
      for (const c of contenders.filter((k) => k.family !== 'seed' && !k.name.includes('ackAndClaim'))) {
        const queue = await c.open(dir);
        open.push(queue);
        const ops = (c.driver === 'memory' ? 50_000 : 2_000) / (event === EVENT_10KB ? 4 : 1);
        let n = 0;
        entrants.push({
          name: c.name,
          async measure() {
            const start = performance.now();
            for (let i = 0; i < ops; i++) await queue.publish(ids[n++ % ids.length]!, event);
            return (ops / (performance.now() - start)) * 1000;
          },
        });
      }
      const results = await alternate(runs, entrants);
      const workloadRows: BenchRow[] = [...results].map(([backend, r]) => ({ workload: `publish, ${label} event, 100 groups`, backend, ...r }));
      annotate(workloadRows, byName);
      for (const r of workloadRows) if (byName.get(r.backend)!.family === 'floor') r.note = 'one write transaction per op';
      rows.push(...workloadRows);
      for (const queue of open) queue.close();
      process.stderr.write('.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, bytes, parameters: { runs, backlogs, workloads: workloads.map(({ event: _, ...w }) => w), visibilityMs: 30_000 } };
}
