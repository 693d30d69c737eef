/**
 * Validation and defaults of the options both worker loops share ({@link WorkerLoopOptions}):
 * one check and one default for each, so `consume()` and the `Runtime` refuse the same values
 * with the same messages and mean the same thing by them.
 * @internal
 */
import type { Clock } from '../clock.js';
import { checkDuration, checkId, checkObject, checkOptions } from '../validate.js';
import { hostNewId, hostScheduler } from './host.js';
import type { Scheduler, WorkerLoopOptions } from './types.js';

/** The keys of {@link WorkerLoopOptions}, for each loop's misspelt-option check. */
export const LOOP_OPTIONS = ['workerId', 'reclaimOwnLeases', 'visibilityMs', 'renewEveryMs', 'backoff', 'random', 'idleMinMs', 'idleMaxMs', 'clock', 'scheduler'] as const;

/** The retry back-off, resolved. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
}

/** Every shared option resolved: defaults filled in, all checked. */
export interface LoopConfig {
  workerId: string;
  reclaimOwnLeases: boolean;
  visibilityMs: number;
  renewEveryMs: number;
  backoff: Backoff;
  random: () => number;
  idleMinMs: number;
  idleMaxMs: number;
  clock: Clock;
  scheduler: Scheduler;
}

export function checkFunction(name: string, value: unknown, optional = false): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, got ${value === null ? 'null' : typeof value}`);
}

function duration(name: string, value: unknown, fallback: number, positive: boolean): number {
  if (value === undefined) return fallback;
  checkDuration(name, value, positive);
  return value;
}

function bounded(name: string, value: unknown, fallback: number, min: number, max: number, rule: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${typeof value}`);
  if (!(value >= min && value <= max)) throw new RangeError(`${name} must be ${rule}, got ${String(value)}`);
  return value;
}

function resolveBackoff(value: unknown): Backoff {
  checkOptions('options.backoff', value, ['baseMs', 'maxMs', 'factor', 'jitter'], true);
  const b = (value ?? {}) as Record<string, unknown>;
  const baseMs = duration('options.backoff.baseMs', b.baseMs, 1000, false);
  const maxMs = duration('options.backoff.maxMs', b.maxMs, Math.max(60_000, baseMs), false);
  if (maxMs < baseMs) throw new RangeError(`options.backoff.maxMs must be ≥ options.backoff.baseMs (${baseMs}), got ${maxMs}`);
  return {
    baseMs,
    maxMs,
    factor: bounded('options.backoff.factor', b.factor, 2, 1, Number.MAX_VALUE, 'a finite number ≥ 1'),
    jitter: bounded('options.backoff.jitter', b.jitter, 0, 0, 1, 'a number from 0 to 1'),
  };
}

/**
 * Checks and resolves the shared options of `o` (whose unknown keys the caller has refused).
 * `name` prefixes the default worker id; `announced` says whether every wake-up of the loop
 * comes with a notice (then the idle poll may back off further: see `idleMaxMs`).
 * @throws TypeError / RangeError naming the first bad option.
 */
export function resolveLoop(o: WorkerLoopOptions, name: string, announced: boolean): LoopConfig {
  if (o.workerId !== undefined) checkId('options.workerId', o.workerId);
  if (o.reclaimOwnLeases !== undefined && typeof o.reclaimOwnLeases !== 'boolean') throw new TypeError('options.reclaimOwnLeases must be a boolean');
  if (o.reclaimOwnLeases && o.workerId === undefined) throw new RangeError('options.reclaimOwnLeases needs options.workerId: a random id has no earlier run whose leases it could take back');
  const visibilityMs = duration('options.visibilityMs', o.visibilityMs, 30_000, true);
  const renewEveryMs = duration('options.renewEveryMs', o.renewEveryMs, visibilityMs / 2, true);
  if (renewEveryMs >= visibilityMs) {
    throw new RangeError(`options.renewEveryMs must be less than options.visibilityMs (${visibilityMs}), got ${renewEveryMs}`);
  }
  const backoff = resolveBackoff(o.backoff);
  checkFunction('options.random', o.random, true);
  const idleMinMs = duration('options.idleMinMs', o.idleMinMs, 50, true);
  const idleMaxMs = duration('options.idleMaxMs', o.idleMaxMs, Math.max(announced ? 10_000 : 1000, idleMinMs), true);
  if (idleMaxMs < idleMinMs) throw new RangeError(`options.idleMaxMs must be ≥ options.idleMinMs (${idleMinMs}), got ${idleMaxMs}`);
  checkFunction('options.clock', o.clock, true);
  if (o.scheduler !== undefined) {
    checkObject('options.scheduler', o.scheduler);
    checkFunction('options.scheduler.setTimeout', o.scheduler.setTimeout);
    checkFunction('options.scheduler.clearTimeout', o.scheduler.clearTimeout);
  }
  return {
    workerId: o.workerId ?? `${name}-${hostNewId()}`,
    reclaimOwnLeases: o.reclaimOwnLeases ?? false,
    visibilityMs,
    renewEveryMs,
    backoff,
    random: o.random ?? Math.random,
    idleMinMs,
    idleMaxMs,
    clock: o.clock ?? Date.now,
    scheduler: o.scheduler ?? hostScheduler(),
  };
}

/** The retry delay after failed delivery `attempt`: see {@link BackoffOptions}. */
export function retryDelay(backoff: Backoff, attempt: number, random: () => number): number {
  const grown = backoff.baseMs * backoff.factor ** Math.max(0, attempt - 1);
  // baseMs 0 × a factor grown to Infinity is NaN: no delay, as baseMs 0 says.
  const full = Number.isNaN(grown) ? 0 : Math.min(backoff.maxMs, grown);
  if (backoff.jitter === 0) return full;
  const r = random();
  // A bad random source must not make the delay negative, NaN or longer than the cap.
  const share = Number.isFinite(r) ? Math.min(1, Math.max(0, r)) : 0;
  return Math.round(full * (1 - backoff.jitter) + full * backoff.jitter * share);
}
