/** Measuring helpers shared by the benchmarks: medians of several runs after a warm-up. */

/** One measured figure: the median rate over several runs and how far the runs spread. */
export interface BenchRow {
  workload: string;
  backend: string;
  opsPerSec: number;
  /** min–max of the runs, as a percentage around the median, e.g. "±4%". */
  spread: string;
  /** Every timed run's rate, for the JSON record. */
  rates?: number[];
  /** Optional note: a ratio measured in the same run, or what the row stands for. */
  note?: string;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spreadOf(values: number[]): string {
  const m = median(values);
  if (m === 0) return '–';
  const worst = Math.max(...values.map((v) => Math.abs(v - m)));
  return `±${Math.round((worst / m) * 100)}%`;
}

/**
 * Runs `measure` (which returns operations per second for one run) `runs` times after one
 * warm-up run, and returns the median and spread.
 */
export async function repeat(runs: number, measure: () => Promise<number> | number): Promise<{ opsPerSec: number; spread: string; rates: number[] }> {
  await measure();
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) rates.push(await measure());
  return { opsPerSec: median(rates), spread: spreadOf(rates), rates };
}

/** One contender's timed run within a workload: returns operations per second. */
export interface Entrant {
  name: string;
  measure(): Promise<number> | number;
}

/**
 * Measures several contenders of one workload in turns — a warm-up round, then `runs` rounds in
 * which every contender runs once — so that drift on a shared machine (another process starting,
 * thermal throttling) hits all of them alike and their ratios stay honest.
 */
export async function alternate(runs: number, entrants: Entrant[]): Promise<Map<string, { opsPerSec: number; spread: string; rates: number[] }>> {
  const rates = new Map<string, number[]>(entrants.map((e) => [e.name, []]));
  for (let round = 0; round <= runs; round++) {
    for (const entrant of entrants) {
      const rate = await entrant.measure();
      if (round > 0) rates.get(entrant.name)!.push(rate);
    }
  }
  return new Map([...rates].map(([name, r]) => [name, { opsPerSec: median(r), spread: spreadOf(r), rates: r }]));
}

export function formatRate(opsPerSec: number): string {
  if (opsPerSec >= 100) return Math.round(opsPerSec).toLocaleString('en-US');
  return opsPerSec.toPrecision(3);
}

/** `a / b` as "2.3×" (one decimal; two below 1.1 so small gaps stay visible). */
export function times(a: number, b: number): string {
  const r = a / b;
  return `${r >= 10 ? Math.round(r).toLocaleString('en-US') : r < 1.1 ? r.toFixed(2) : r.toFixed(1)}×`;
}

/** Prints rows as a Markdown table (the format docs/BENCHMARKS.md uses), grouped by workload. */
export function table(rows: BenchRow[], unit = 'ops/s'): string {
  const lines: string[] = [];
  let workload: string | undefined;
  for (const r of rows) {
    if (r.workload !== workload) {
      workload = r.workload;
      lines.push('', `**${workload}**`, '', `| contender | ${unit} (median) | spread | same-run ratio / note |`, '| --- | ---: | ---: | --- |');
    }
    lines.push(`| ${r.backend} | ${formatRate(r.opsPerSec)} | ${r.spread} | ${r.note ?? ''} |`);
  }
  return lines.join('\n').trimStart();
}
