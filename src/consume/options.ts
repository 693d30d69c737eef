/**
 * Validation and defaults of `consume()`'s options: a misconfigured consumer throws before it
 * claims anything, with an error naming the option.
 * @internal
 */
import { Events } from './events.js';
import { isChangeNotifier, type Transport } from '../transport/contract.js';
import { checkDuration, checkInteger, checkObject, checkOptions } from '../validate.js';
import { checkFunction, LOOP_OPTIONS, resolveLoop, type LoopConfig } from '../worker/options.js';
import type { AbortSignalLike } from '../worker/types.js';
import type { ConsumeErrorInfo, ConsumeHandler, ConsumeOptions } from './types.js';

/** The keys of ConsumeOptions: any other is a misspelling (checkOptions). */
const CONSUME_OPTIONS = [...LOOP_OPTIONS, 'concurrency', 'minPriority', 'signal', 'graceMs', 'onError', 'rate', 'onEvent'];

/** Every option resolved: defaults filled in, all checked. */
export interface ConsumeConfig<E> extends LoopConfig {
  transport: Transport<E>;
  handler: ConsumeHandler<E>;
  concurrency: number;
  minPriority: number;
  signal: AbortSignalLike | undefined;
  graceMs: number;
  onError: (error: unknown, info: ConsumeErrorInfo<E>) => void;
  /** The `onEvent` reporter, or null when no listener was given (then no clock is read for it). */
  events: Events<E> | null;
  /** At most `max` handler starts per `perMs`; null: no bound. */
  rate: { max: number; perMs: number } | null;
}

export const MAX_CONCURRENCY = 1000;
/** The transport methods consume() calls: checked up front, so a wrong object fails at the call, not mid-run. */
const TRANSPORT_METHODS = ['claim', 'claimMany', 'ack', 'ackAndClaim', 'ackMany', 'ackAndClaimMany', 'nack', 'release', 'reject', 'extend', 'stats'] as const satisfies readonly (keyof Transport)[];

/** A grace period: like a duration, but `Infinity` (wait for every handler) is allowed. */
export function checkGrace(name: string, value: unknown): asserts value is number {
  if (value === Infinity) return;
  checkDuration(name, value, false);
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
  // With change notices a poll only backs them up (and stats() says when leases and parks end).
  const loop = resolveLoop(o, 'consume', isChangeNotifier(transport));
  if (loop.reclaimOwnLeases) checkFunction('transport.expireLeases', (transport as Partial<Transport<E>>).expireLeases);
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
  checkFunction('options.onError', o.onError, true);
  checkFunction('options.onEvent', o.onEvent, true);
  checkOptions('options.rate', o.rate, ['max', 'perMs'], true);
  if (o.rate !== undefined) {
    checkInteger('options.rate.max', o.rate.max, 1, Number.MAX_SAFE_INTEGER);
    checkDuration('options.rate.perMs', o.rate.perMs, true);
  }
  return {
    ...loop,
    transport,
    handler,
    concurrency,
    minPriority,
    signal,
    graceMs,
    onError: guarded((o.onError as ConsumeConfig<E>['onError'] | undefined) ?? defaultOnError),
    events: o.onEvent === undefined ? null : new Events<E>(o.onEvent, loop.clock),
    rate: o.rate === undefined ? null : { max: o.rate.max, perMs: o.rate.perMs },
  };
}
