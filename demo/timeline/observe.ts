/**
 * The transport as this tab's workers use it, with every lease call told to the timeline: a
 * claim starts a bar (at the lease's own start, `expiresAt − visibilityMs`), an ack, nack, park,
 * release or reject ends it, and a `LeaseLostError` is a refused mark at the moment the late call was made. The
 * calls themselves pass through unchanged, results and errors included.
 */
import { type ChangeNotifier, type Lease, LeaseLostError, type Transport } from 'leasehold';
import type { TimelineModel } from './model.ts';

export function observe(transport: Transport & ChangeNotifier, model: TimelineModel, now: () => number): Transport & ChangeNotifier {
  const claimed = <L extends Lease | null>(visibilityMs: number) => (lease: L): L => {
    if (lease) model.claimed(lease, visibilityMs);
    return lease;
  };
  /** Runs a call that may be refused for `lease`; a refusal is marked, then rethrown. */
  const fenced = async <T>(lease: Lease, what: 'ack' | 'nack', at: number, call: Promise<T>): Promise<T> => {
    try {
      return await call;
    } catch (error) {
      if (error instanceof LeaseLostError) model.refused(lease, at, what);
      throw error;
    }
  };
  return {
    ...transport,
    publish: async (groupId, event, options) => {
      const at = now();
      const seq = await transport.publish(groupId, event, options);
      const delayMs = options?.delayMs ?? 0;
      if (delayMs > 0) model.waited('delay', groupId, seq, at, at + delayMs);
      return seq;
    },
    claim: (workerId, visibilityMs, options) => transport.claim(workerId, visibilityMs, options).then(claimed(visibilityMs)),
    claimMany: async (workerId, visibilityMs, options) => {
      const leases = await transport.claimMany(workerId, visibilityMs, options);
      for (const lease of leases) model.claimed(lease, visibilityMs);
      return leases;
    },
    ack: async (lease) => {
      const at = now();
      await fenced(lease, 'ack', at, transport.ack(lease));
      model.ended(lease, at, 'acked');
    },
    ackMany: async (leases) => {
      const at = now();
      const result = await transport.ackMany(leases);
      for (const lease of result.acked) model.ended(lease, at, 'acked');
      for (const lease of result.lost) model.refused(lease, at, 'ack');
      return result;
    },
    ackAndClaimMany: async (leases, workerId, visibilityMs, options) => {
      const at = now();
      const result = await transport.ackAndClaimMany(leases, workerId, visibilityMs, options);
      for (const lease of result.acked) model.ended(lease, at, 'acked');
      for (const lease of result.lost) model.refused(lease, at, 'ack');
      for (const lease of result.claimed) model.claimed(lease, visibilityMs);
      return result;
    },
    ackAndClaim: async (lease, workerId, visibilityMs, options) => {
      const at = now();
      const next = await fenced(lease, 'ack', at, transport.ackAndClaim(lease, workerId, visibilityMs, options));
      model.ended(lease, at, 'acked');
      return claimed(visibilityMs)(next);
    },
    nack: async (lease, delayMs = 0, reason) => {
      const at = now();
      await fenced(lease, 'nack', at, transport.nack(lease, delayMs, reason));
      model.ended(lease, at, delayMs > 0 ? 'parked' : 'released', delayMs);
    },
    // A release gives the message back like a nack, without spending an attempt: the bar ends the same way.
    release: async (lease, delayMs = 0, reason) => {
      const at = now();
      await fenced(lease, 'nack', at, transport.release(lease, delayMs, reason));
      model.ended(lease, at, delayMs > 0 ? 'parked' : 'released', delayMs);
    },
    reject: async (lease, reason) => {
      const at = now();
      await fenced(lease, 'nack', at, transport.reject(lease, reason));
      model.ended(lease, at, 'rejected');
    },
    extend: async (lease, visibilityMs) => {
      const renewed = await transport.extend(lease, visibilityMs);
      model.extended(renewed);
      return renewed;
    },
  };
}
