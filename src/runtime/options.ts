/**
 * Validation and defaults of the `Runtime` options, so a misconfigured runtime fails at
 * construction with an error naming the option, never later in the middle of a step.
 * @internal
 */
import type { Clock } from '../clock.js';
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import { checkDuration, checkId, checkInteger, checkObject, checkOptions } from '../validate.js';
import { hostClone, hostNewId, hostScheduler } from './host.js';
import type { EventBase, Handler, RuntimeOptions, Scheduler } from './types.js';

/** The keys of RuntimeOptions: any other is a misspelling (checkOptions). */
const RUNTIME_OPTIONS = [
  'store', 'transport', 'handler', 'workerId', 'visibilityMs', 'clock', 'scheduler', 'renewEveryMs', 'retryBaseMs', 'retryMaxMs',
  'suspendHoldMs', 'idleMinMs', 'idleMaxMs', 'relayBatch', 'relayEvery', 'newId', 'clone', 'onUntargeted',
];

/** How long a claim holds an event when `visibilityMs` is not given: 30 s, as in `consume()`. */
export const DEFAULT_VISIBILITY_MS = 30_000;

/** Every option resolved: defaults filled in, all checked. */
export interface Config<X extends Execution> {
  store: ExecutionStore<X>;
  transport: Transport;
  handler: Handler<X>;
  workerId: string;
  visibilityMs: number;
  clock: Clock;
  scheduler: Scheduler;
  renewEveryMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  suspendHoldMs: number;
  idleMinMs: number;
  idleMaxMs: number;
  relayBatch: number;
  relayEvery: number;
  newId: () => string;
  clone: (execution: X) => X;
  onUntargeted: ((event: unknown) => void | Promise<void>) | undefined;
}

/** The methods the runtime calls, checked up front (names of the contracts, so a renamed method is a compile error). */
const STORE_METHODS = ['load', 'save', 'commit', 'isProcessed', 'pendingOutbox', 'ackOutbox', 'pendingSpawns', 'ackSpawn', 'dueTimers', 'deleteTimer', 'appendTrace'] as const satisfies readonly (keyof ExecutionStore)[];
const TRANSPORT_METHODS = ['publish', 'claim', 'ack', 'nack', 'extend'] as const satisfies readonly (keyof Transport)[];

function checkMethods(name: string, value: unknown, methods: readonly string[]): void {
  checkObject(name, value);
  for (const method of methods) {
    if (typeof value[method] !== 'function') throw new TypeError(`${name} must implement ${method}()`);
  }
}

function checkFunction(name: string, value: unknown, optional: boolean): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function, got ${value === null ? 'null' : typeof value}`);
}

function duration(name: string, value: unknown, fallback: number, positive: boolean): number {
  if (value === undefined) return fallback;
  checkDuration(`options.${name}`, value, positive);
  return value;
}

function count(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  checkInteger(`options.${name}`, value, 1, Number.MAX_SAFE_INTEGER);
  return value;
}

/** @throws TypeError / RangeError naming the first bad option. */
export function resolveOptions<X extends Execution, E extends EventBase>(options: RuntimeOptions<X, E>): Config<X> {
  checkOptions('options', options, RUNTIME_OPTIONS);
  checkMethods('options.store', options.store, STORE_METHODS);
  checkMethods('options.transport', options.transport, TRANSPORT_METHODS);
  checkFunction('options.handler', options.handler, false);
  checkId('options.workerId', options.workerId);
  // The same default as consume()'s, so the two loops agree when neither is told.
  const visibilityMs = duration('visibilityMs', options.visibilityMs, DEFAULT_VISIBILITY_MS, true);
  checkFunction('options.clock', options.clock, true);
  if (options.scheduler !== undefined) {
    checkMethods('options.scheduler', options.scheduler, ['setTimeout', 'clearTimeout']);
  }
  checkFunction('options.newId', options.newId, true);
  checkFunction('options.clone', options.clone, true);
  checkFunction('options.onUntargeted', options.onUntargeted, true);

  const renewEveryMs = duration('renewEveryMs', options.renewEveryMs, visibilityMs / 2, true);
  if (renewEveryMs >= visibilityMs) {
    throw new RangeError(`options.renewEveryMs must be less than options.visibilityMs (${visibilityMs}), got ${renewEveryMs}`);
  }
  const retryBaseMs = duration('retryBaseMs', options.retryBaseMs, 1000, false);
  const retryMaxMs = duration('retryMaxMs', options.retryMaxMs, Math.max(60_000, retryBaseMs), false);
  if (retryMaxMs < retryBaseMs) {
    throw new RangeError(`options.retryMaxMs must be ≥ options.retryBaseMs (${retryBaseMs}), got ${retryMaxMs}`);
  }
  const idleMinMs = duration('idleMinMs', options.idleMinMs, 50, true);
  const idleMaxMs = duration('idleMaxMs', options.idleMaxMs, Math.max(1000, idleMinMs), true);
  if (idleMaxMs < idleMinMs) {
    throw new RangeError(`options.idleMaxMs must be ≥ options.idleMinMs (${idleMinMs}), got ${idleMaxMs}`);
  }

  return {
    store: options.store,
    // From here on events are handled as plain objects with an id: `E` is the caller's promise
    // about what its transport carries, checked by the compiler at the call site only.
    transport: options.transport as unknown as Transport,
    handler: options.handler as unknown as Handler<X>,
    workerId: options.workerId,
    visibilityMs,
    clock: options.clock ?? Date.now,
    scheduler: options.scheduler ?? hostScheduler(),
    renewEveryMs,
    retryBaseMs,
    retryMaxMs,
    suspendHoldMs: duration('suspendHoldMs', options.suspendHoldMs, 3_600_000, true),
    idleMinMs,
    idleMaxMs,
    relayBatch: count('relayBatch', options.relayBatch, 100),
    relayEvery: count('relayEvery', options.relayEvery, 16),
    newId: options.newId ?? hostNewId,
    clone: options.clone ?? hostClone,
    onUntargeted: options.onUntargeted,
  };
}
