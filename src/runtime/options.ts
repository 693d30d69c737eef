/**
 * Validation and defaults of the `Runtime` options, so a misconfigured runtime fails at
 * construction with an error naming the option, never later in the middle of a step. The
 * options both worker loops take are checked by the shared `resolveLoop`.
 * @internal
 */
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import { checkDuration, checkInteger, checkObject, checkOptions } from '../validate.js';
import { hostClone, hostNewId } from '../worker/host.js';
import { LeaseKeeper } from '../worker/keeper.js';
import { checkFunction, LOOP_OPTIONS, resolveLoop, type LoopConfig } from '../worker/options.js';
import type { EventBase, Handler, RuntimeOptions } from './types.js';

/** The keys of RuntimeOptions (but `handler`, which Workflows supplies itself): any other is a misspelling. */
export const RUNTIME_OPTIONS = [...LOOP_OPTIONS, 'store', 'transport', 'suspendHoldMs', 'relayBatch', 'relayEvery', 'newId', 'clone', 'onUntargeted', 'onError', 'onEvent'];

/** Every option resolved: defaults filled in, all checked; and the runtime's lease keeper. */
export interface Config<X extends Execution> extends LoopConfig {
  store: ExecutionStore<X>;
  transport: Transport;
  handler: Handler<X>;
  suspendHoldMs: number;
  relayBatch: number;
  relayEvery: number;
  newId: () => string;
  clone: (execution: X) => X;
  onUntargeted: ((event: unknown) => void | Promise<void>) | undefined;
  onError: RuntimeOptions['onError'];
  onEvent: RuntimeOptions['onEvent'];
  /** Extends the lease of the event being handled. */
  keeper: LeaseKeeper;
}

/** The methods the runtime calls, checked up front (names of the contracts, so a renamed method is a compile error). */
const STORE_METHODS = ['load', 'save', 'commit', 'isProcessed', 'pendingOutbox', 'ackOutbox', 'pendingSpawns', 'ackSpawn', 'dueTimers', 'deleteTimer', 'appendTrace'] as const satisfies readonly (keyof ExecutionStore)[];
const TRANSPORT_METHODS = ['publish', 'claim', 'ack', 'ackAndClaim', 'nack', 'release', 'extend', 'stats'] as const satisfies readonly (keyof Transport)[];

function checkMethods(name: string, value: unknown, methods: readonly string[]): void {
  checkObject(name, value);
  for (const method of methods) {
    if (typeof value[method] !== 'function') throw new TypeError(`${name} must implement ${method}()`);
  }
}

function count(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  checkInteger(`options.${name}`, value, 1, Number.MAX_SAFE_INTEGER);
  return value;
}

/** @throws TypeError / RangeError naming the first bad option. */
export function resolveOptions<X extends Execution, E extends EventBase>(options: RuntimeOptions<X, E>): Config<X> {
  checkObject('options', options);
  // Renamed in 0.3, when the Runtime took consume()'s back-off: say where the value goes now.
  for (const [old, now] of [['retryBaseMs', 'baseMs'], ['retryMaxMs', 'maxMs']]) {
    if (old! in options) throw new TypeError(`options.${old} is now options.backoff.${now}`);
  }
  checkOptions('options', options, [...RUNTIME_OPTIONS, 'handler']);
  checkMethods('options.store', options.store, STORE_METHODS);
  checkMethods('options.transport', options.transport, TRANSPORT_METHODS);
  checkFunction('options.handler', options.handler);
  const loop = resolveLoop(options, 'runtime', false);
  if (loop.reclaimOwnLeases) checkFunction('options.transport.expireLeases', (options.transport as { expireLeases?: unknown }).expireLeases);
  checkFunction('options.newId', options.newId, true);
  checkFunction('options.clone', options.clone, true);
  checkFunction('options.onUntargeted', options.onUntargeted, true);
  checkFunction('options.onError', options.onError, true);
  checkFunction('options.onEvent', options.onEvent, true);
  let suspendHoldMs = 3_600_000;
  if (options.suspendHoldMs !== undefined) {
    checkDuration('options.suspendHoldMs', options.suspendHoldMs, true);
    suspendHoldMs = options.suspendHoldMs;
  }
  // From here on events are handled as plain objects with an id: `E` is the caller's promise
  // about what its transport carries, checked by the compiler at the call site only.
  const transport = options.transport as unknown as Transport;
  return {
    ...loop,
    store: options.store,
    transport,
    handler: options.handler as unknown as Handler<X>,
    suspendHoldMs,
    relayBatch: count('relayBatch', options.relayBatch, 100),
    relayEvery: count('relayEvery', options.relayEvery, 16),
    newId: options.newId ?? hostNewId,
    clone: options.clone ?? hostClone,
    onUntargeted: options.onUntargeted,
    onError: options.onError,
    onEvent: options.onEvent,
    keeper: new LeaseKeeper({ ...loop, transport }),
  };
}
