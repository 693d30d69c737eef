/**
 * The batch calls the consumer makes: `claimMany` for its free slots, `ackAndClaimMany` for
 * handlers that finished together (`ackMany` once stopping).
 * @internal
 */
import { LeaseLostError } from '../errors.js';
import type { Lease, Transport } from '../transport/contract.js';

/** Up to `max` leases in one call (`claim` for one: the same result, a smaller call). */
export async function claimUpTo<E>(transport: Transport<E>, workerId: string, visibilityMs: number, max: number, minPriority: number): Promise<Lease<E>[]> {
  if (max > 1) return transport.claimMany(workerId, visibilityMs, { max, minPriority });
  const lease = await transport.claim(workerId, visibilityMs, { minPriority });
  return lease ? [lease] : [];
}

/**
 * Acks `leases` in one call and counts what landed and what was lost; every lost lease and a
 * failed call are reported (after a failed call nothing was acked: `failure` holds its error,
 * for the caller to try again or let the leases run out).
 */
export async function ackAll<E>(
  transport: Transport<E>,
  leases: Lease<E>[],
  report: (error: unknown, lease?: Lease<E>) => void,
): Promise<{ acked: Lease<E>[]; lost: number; failure: { error: unknown } | null }> {
  try {
    const { acked, lost } = await transport.ackMany(leases);
    for (const lease of lost) report(new LeaseLostError(lease.seq, lease.attempt, lease.groupId), lease);
    return { acked, lost: lost.length, failure: null };
  } catch (error) {
    report(error);
    return { acked: [], lost: 0, failure: { error } };
  }
}

/**
 * Acks `leases` and claims up to `max` in one call (`ackAndClaimMany`), counting and reporting as
 * {@link ackAll}. `claimed` is null when the call failed: then nothing was acked or claimed.
 */
export async function ackAllAndClaim<E>(
  transport: Transport<E>,
  leases: Lease<E>[],
  claim: { workerId: string; visibilityMs: number; max: number; minPriority: number },
  report: (error: unknown, lease?: Lease<E>) => void,
): Promise<{ acked: Lease<E>[]; lost: number; claimed: Lease<E>[] | null; failure: { error: unknown } | null }> {
  try {
    const { workerId, visibilityMs, max, minPriority } = claim;
    const { acked, lost, claimed } = await transport.ackAndClaimMany(leases, workerId, visibilityMs, { max, minPriority });
    for (const lease of lost) report(new LeaseLostError(lease.seq, lease.attempt, lease.groupId), lease);
    return { acked, lost: lost.length, claimed, failure: null };
  } catch (error) {
    report(error);
    return { acked: [], lost: 0, claimed: null, failure: { error } };
  }
}
