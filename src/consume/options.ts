/**
 * Validation and defaults of `consume()`'s options: a misconfigured consumer throws before it
 * claims anything, with an error naming the option.
 * @internal
 */
import { Events } from './events.js';
import type { Clock } from '../clock.js';
import { hostNewId, hostScheduler } from '../runtime/host.js';
import type { AbortSignalLike, Scheduler } from '../runtime/types.js';
import { isChangeNotifier, type Transport } from '../transport/contract.js';
import { checkDuration, checkId, checkInteger, checkObject, checkOptions } from '../validate.js';
import type { ConsumeErrorInfo, ConsumeHandler, ConsumeOptions } from './types.js';

/** The keys of ConsumeOptions: any other is a misspelling (checkOptions). */
const CONSUME_OPTIONS = ['workerId', 'visibilityMs', 'concurrency', 'minPriority', 'signal', 'graceMs', 'backoff', 'onError', 'idleMinMs', 'idleMaxMs', 'clock', 'scheduler', 'random', 'rate', 'onEvent'];

/** The retry back-off, resolved. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  factor: number;
  jitter: number;
}

/** Every option resolved: defaults filled in, all checked. */
export interface ConsumeConfig<E> {
  transport: Transport<E>;
  handler: ConsumeHandler<E>;
  workerId: string;
  visibilityMs: number;
  concurrency: number;
  minPriority: number;
  signal: AbortSignalLike | undefined;
  graceMs: number;
  backoff: Backoff;
  onError: (error: unknown, info: ConsumeErrorInfo<E>) => void;
  /** The `onEvent` reporter, or null when no listener was given (then no clock is read for it). */
  events: Events<E> | null;
  idleMinMs: number;
  idleMaxMs: number;
  clock: Clock;
  scheduler: Scheduler;
  random: () => number;
  /** At most `max` handler starts per `perMs`; null: no bound. */
  rate: { max: number; perMs: number } | null;
}

export const MAX_CONCURRENCY = 1000;
/** The transport methods consume() calls: checked up front, so a wrong object fails at the call, not mid-run. */
const TRANSPORT_METHODS = ['claim', 'claimMany', 'ack', 'ackAndClaim', 'ackMany', 'ackAndClaimMany', 'nack', 'release', 'reject', 'extend', 'stats'] as const satisfies readonly (keyof Transport)[];

function checkFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, got ${value === null ? 'null' : typeof value}`);
}

function duration(name: string, value: unknown, fallback: number, positive: boolean): number {
  if (value === undefined) return fallback;
  checkDuration(name, value, positive);
  return value;
}

/** A grace period: like a duration, but `Infinity` (wait for every handler) is allowed. */
export function checkGrace(name: string, value: unknown): asserts value is number {
  if (value === Infinity) return;
  checkDuration(name, value, false);
}

function factorOf(value: unknown): number {
  if (value === undefined) return 2;
  if (typeof value !== 'number') throw new TypeError(`options.backoff.factor must be a number, got ${typeof value}`);
  if (!Number.isFinite(value) || value < 1) throw new RangeError(`options.backoff.factor must be a finite number ≥ 1, got ${String(value)}`);
  return value;
}

function jitterOf(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number') throw new TypeError(`options.backoff.jitter must be a number from 0 to 1, got ${typeof value}`);
  if (!(value >= 0 && value <= 1)) throw new RangeError(`options.backoff.jitter must be a number from 0 to 1, got ${String(value)}`);
  return value;
}

function resolveBackoff(value: unknown): Backoff {
  checkOptions('options.backoff', value, ['baseMs', 'maxMs', 'factor', 'jitter'], true);
  const b = (value ?? {}) as Record<string, unknown>;
  const baseMs = duration('options.backoff.baseMs', b.baseMs, 1000, false);
  const maxMs = duration('options.backoff.maxMs', b.maxMs, Math.max(60_000, baseMs), false);
  if (maxMs < baseMs) throw new RangeError(`options.backoff.maxMs must be ≥ options.backoff.baseMs (${baseMs}), got ${maxMs}`);
  return { baseMs, maxMs, factor: factorOf(b.factor), jitter: jitterOf(b.jitter) };
}

function defaultOnError(error: unknown, info: ConsumeErrorInfo): void {
  const console = (globalThis as { console?: { error?: (...args: unknown[]) => void } }).console;
  const where = info.lease ? ` (message ${info.lease.seq}, attempt ${info.lease.attempt}, group ${JSON.stringify(info.lease.groupId)})` : '';
  console?.error?.(`leasehold consume: ${info.phase} failed${where}:`, error);
}

/** A reporter that cannot break the consumer: what it throws surfaces as an unhandled rejection. */
function guarded<E>(report: ConsumeConfig<E>['onError']): ConsumeConfig<E>['onError'] {
  return (error, info) => {
    try {
      report(error, info);
    } catch (thrown) {
      void Promise.reject(thrown);
    }
  };
}

/** @throws TypeError / RangeError naming the first bad argument or option. */
export function resolveConsume<E>(transport: Transport<E>, handler: ConsumeHandler<E>, options: ConsumeOptions<E> | undefined): ConsumeConfig<E> {
  checkObject('transport', transport);
  for (const method of TRANSPORT_METHODS) {
    if (typeof (transport as unknown as Record<string, unknown>)[method] !== 'function') throw new TypeError(`transport must implement ${method}()`);
  }
  checkFunction('handler', handler);
  checkOptions('options', options, CONSUME_OPTIONS, true);
  const o = (options ?? {}) as ConsumeOptions<E>;
  if (o.workerId !== undefined) checkId('options.workerId', o.workerId);
  const visibilityMs = duration('options.visibilityMs', o.visibilityMs, 30_000, true);
  const concurrency = o.concurrency ?? 1;
  checkInteger('options.concurrency', concurrency, 1, MAX_CONCURRENCY);
  const minPriority = o.minPriority ?? 0;
  checkInteger('options.minPriority', minPriority, 0, 4);
  const signal = o.signal;
  if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function' || typeof signal.aborted !== 'boolean')) {
    throw new TypeError('options.signal must be an AbortSignal');
  }
  const graceMs = o.graceMs ?? 10_000;
  checkGrace('options.graceMs', graceMs);
  const backoff = resolveBackoff(o.backoff);
  if (o.onError !== undefined) checkFunction('options.onError', o.onError);
  if (o.onEvent !== undefined) checkFunction('options.onEvent', o.onEvent);
  const idleMinMs = duration('options.idleMinMs', o.idleMinMs, 50, true);
  // With change notices a poll only backs them up (and stats() says when leases and parks end).
  const idleMaxMs = duration('options.idleMaxMs', o.idleMaxMs, Math.max(isChangeNotifier(transport) ? 10_000 : 1000, idleMinMs), true);
  if (idleMaxMs < idleMinMs) throw new RangeError(`options.idleMaxMs must be ≥ options.idleMinMs (${idleMinMs}), got ${idleMaxMs}`);
  if (o.clock !== undefined) checkFunction('options.clock', o.clock);
  if (o.scheduler !== undefined) {
    checkObject('options.scheduler', o.scheduler);
    checkFunction('options.scheduler.setTimeout', o.scheduler.setTimeout);
    checkFunction('options.scheduler.clearTimeout', o.scheduler.clearTimeout);
  }
  if (o.random !== undefined) checkFunction('options.random', o.random);
  checkOptions('options.rate', o.rate, ['max', 'perMs'], true);
  if (o.rate !== undefined) {
    checkInteger('options.rate.max', o.rate.max, 1, Number.MAX_SAFE_INTEGER);
    checkDuration('options.rate.perMs', o.rate.perMs, true);
  }
  return {
    transport,
    handler,
    workerId: o.workerId ?? `consume-${hostNewId()}`,
    visibilityMs,
    concurrency,
    minPriority,
    signal,
    graceMs,
    backoff,
    onError: guarded((o.onError as ConsumeConfig<E>['onError'] | undefined) ?? defaultOnError),
    events: o.onEvent === undefined ? null : new Events<E>(o.onEvent, o.clock ?? Date.now),
    idleMinMs,
    idleMaxMs,
    clock: o.clock ?? Date.now,
    scheduler: o.scheduler ?? hostScheduler(),
    random: o.random ?? Math.random,
    rate: o.rate === undefined ? null : { max: o.rate.max, perMs: o.rate.perMs },
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
