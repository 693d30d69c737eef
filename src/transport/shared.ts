/**
 * What every transport backend shares so they behave identically: the argument checks (the same
 * inputs rejected with the same errors, before any data is touched) and how a message's lock
 * fields read as a state.
 * @internal
 */
import { checkDuration, checkId, checkInteger, checkObject } from '../validate.js';
import type { ClaimOptions, Lease, MessageSnapshot, PublishOptions, TransportOptions } from './contract.js';

export const MIN_PRIORITY = 0;
export const MAX_PRIORITY = 4;

export function checkPublish(groupId: unknown, options: PublishOptions | undefined): { priority: number; key: string | null } {
  checkId('groupId', groupId);
  checkObject('options', options, true);
  const priority = options?.priority ?? 0;
  checkInteger('options.priority', priority, MIN_PRIORITY, MAX_PRIORITY);
  const key = options?.key;
  if (key !== undefined) checkId('options.key', key);
  return { priority, key: key ?? null };
}

export function checkClaim(workerId: unknown, visibilityMs: unknown, options: ClaimOptions | undefined): number {
  checkId('workerId', workerId);
  checkDuration('visibilityMs', visibilityMs, true);
  checkObject('options', options, true);
  const minPriority = options?.minPriority ?? 0;
  checkInteger('options.minPriority', minPriority, MIN_PRIORITY, MAX_PRIORITY);
  return minPriority;
}

/** A lease must at least look like one this library handed out. */
export function checkLease(lease: unknown): asserts lease is Lease<unknown> {
  checkObject('lease', lease);
  const { seq, attempt, workerId, groupId } = lease as Record<string, unknown>;
  checkInteger('lease.seq', seq, 1, Number.MAX_SAFE_INTEGER);
  checkInteger('lease.attempt', attempt, 1, Number.MAX_SAFE_INTEGER);
  checkId('lease.workerId', workerId);
  checkId('lease.groupId', groupId);
}

export function checkSeq(seq: unknown): asserts seq is number {
  checkInteger('seq', seq, 1, Number.MAX_SAFE_INTEGER);
}

export function checkTransportOptions(options: TransportOptions | undefined): { clock: () => number; maxAttempts: number } {
  checkObject('options', options, true);
  const clock: unknown = options?.clock ?? Date.now;
  if (typeof clock !== 'function') throw new TypeError('options.clock must be a function returning milliseconds');
  const maxAttempts = options?.maxAttempts;
  if (maxAttempts !== undefined) checkInteger('options.maxAttempts', maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  return { clock: clock as () => number, maxAttempts: maxAttempts ?? Infinity };
}

/** A queued message's state at `now`, from its holder and the end of its lease or park. */
export function messageState(holder: string | null, expiry: number | null, now: number): MessageSnapshot['state'] {
  if (expiry === null) return 'ready';
  if (holder !== null) return expiry >= now ? 'leased' : 'expired';
  return expiry >= now ? 'parked' : 'ready';
}
