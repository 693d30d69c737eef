/**
 * The options of a leasehold Durable Object, and their check. The object's calls are served by
 * the SQL host of remote/host.ts; nothing here touches the Workers runtime.
 * @internal
 */
import type { DeadLetterPolicy } from '../transport/contract.js';
import { checkTransportOptions } from '../transport/shared.js';
import { checkInteger, checkObject, checkOptions } from '../validate.js';

/** Options of a leasehold Durable Object. */
export interface ObjectOptions {
  /** The transport's `maxAttempts` (dead letters); default unlimited. */
  maxAttempts?: number;
  /** The transport's `maxEventBytes`: the largest event, in bytes of JSON; default 1 MiB. */
  maxEventBytes?: number;
  /** The store's `traceMax`; default 200. */
  traceMax?: number;
  /** The queues' `onDeadLetter` (see `TransportOptions`); left out, each queue keeps its own (`'continue'` for a new one). */
  onDeadLetter?: DeadLetterPolicy;
}

/** Checks `options` as the constructors would, naming the bad field. */
export function checkObjectOptions(options: unknown): ObjectOptions {
  checkOptions('options', options, ['maxAttempts', 'maxEventBytes', 'traceMax', 'onDeadLetter'], true);
  const { maxAttempts, maxEventBytes, traceMax, onDeadLetter } = (options ?? {}) as ObjectOptions;
  if (maxAttempts !== undefined) checkInteger('options.maxAttempts', maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  if (maxEventBytes !== undefined) checkInteger('options.maxEventBytes', maxEventBytes, 1, Number.MAX_SAFE_INTEGER);
  if (traceMax !== undefined) checkInteger('options.traceMax', traceMax, 0, Number.MAX_SAFE_INTEGER);
  if (onDeadLetter !== undefined) checkTransportOptions({ onDeadLetter });
  return {
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
    ...(traceMax === undefined ? {} : { traceMax }),
    ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
  };
}
