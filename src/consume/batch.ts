/**
 * The batch calls the consumer makes, over the transport's `claimMany`, `ackMany` and `stats`.
 * @internal
 */
import { LeaseLostError } from '../errors.js';
import type { Lease, Transport } from '../transport/contract.js';

interface BatchTransport<E> {
  claimMany?(workerId: string, visibilityMs: number, options: { max: number; minPriority?: number }): Promise<Lease<E>[]>;
  ackMany?(leases: readonly Lease<E>[]): Promise<{ acked: Lease<E>[]; lost: Lease<E>[] }>;
  stats?(): Promise<{ nextReadyAt: number | null }>;
}

export function batchOps<E>(transport: Transport<E>) {
  const t = transport as Transport<E> & BatchTransport<E>;
  return {
    /** Up to `max` leases, in one call where the transport has `claimMany`. */
    async claimMany(workerId: string, visibilityMs: number, max: number, minPriority: number): Promise<Lease<E>[]> {
      if (max > 1 && typeof t.claimMany === 'function') return t.claimMany(workerId, visibilityMs, { max, minPriority });
      const leases: Lease<E>[] = [];
      while (leases.length < max) {
        const lease = await t.claim(workerId, visibilityMs, { minPriority });
        if (!lease) break;
        leases.push(lease);
      }
      return leases;
    },

    /** Acks `leases` (in one call where the transport has `ackMany`); counts what landed and what was lost. */
    async ackMany(leases: Lease<E>[], report: (error: unknown, lease?: Lease<E>) => void): Promise<{ acked: number; lost: number }> {
      if (typeof t.ackMany === 'function') {
        try {
          const { acked, lost } = await t.ackMany(leases);
          for (const lease of lost) report(new LeaseLostError(lease.seq, lease.attempt, lease.groupId), lease);
          return { acked: acked.length, lost: lost.length };
        } catch (error) {
          report(error); // nothing was acked: the messages come back when their leases run out
          return { acked: 0, lost: 0 };
        }
      }
      let acked = 0;
      let lost = 0;
      for (const lease of leases) {
        try {
          await t.ack(lease);
          acked += 1;
        } catch (error) {
          report(error, lease);
          if (error instanceof LeaseLostError) lost += 1;
        }
      }
      return { acked, lost };
    },
  };
}

/** When the transport says a lease or park next runs out, or null (unknown, or none). */
export async function nextReadyAt<E>(transport: Transport<E>, report: (error: unknown) => void): Promise<number | null> {
  const t = transport as Transport<E> & BatchTransport<E>;
  if (typeof t.stats !== 'function') return null;
  try {
    return (await t.stats()).nextReadyAt;
  } catch (error) {
    report(error);
    return null;
  }
}
