/** Measuring helpers shared by the benchmarks: medians of several runs after a warm-up. */

/** One measured figure: the median rate over `runs` runs and how far the runs spread. */
export interface BenchRow {
  workload: string;
  backend: string;
  opsPerSec: number;
  /** min–max of the runs, as a percentage around the median, e.g. "±4%". */
  spread: string;
  /** Optional note (e.g. "what the seed achieves"). */
  note?: string;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spreadOf(values: number[]): string {
  const m = median(values);
  const worst = Math.max(...values.map((v) => Math.abs(v - m)));
  return `±${Math.round((worst / m) * 100)}%`;
}

/**
 * Runs `measure` (which returns operations per second for one run) `runs` times after one
 * warm-up run, and returns the median and spread.
 */
export async function repeat(runs: number, measure: () => Promise<number> | number): Promise<{ opsPerSec: number; spread: string }> {
  await measure();
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) rates.push(await measure());
  return { opsPerSec: median(rates), spread: spreadOf(rates) };
}

export function formatRate(opsPerSec: number): string {
  if (opsPerSec >= 100) return Math.round(opsPerSec).toLocaleString('en-US');
  return opsPerSec.toPrecision(3);
}

/** Prints rows as a Markdown table (the format docs/BENCHMARKS.md uses). */
export function table(rows: BenchRow[]): string {
  const lines = ['| workload | backend | ops/s (median) | spread | note |', '| --- | --- | ---: | ---: | --- |'];
  for (const r of rows) lines.push(`| ${r.workload} | ${r.backend} | ${formatRate(r.opsPerSec)} | ${r.spread} | ${r.note ?? ''} |`);
  return lines.join('\n');
}
