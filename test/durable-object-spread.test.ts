/**
 * spreadTransport over three LeaseholdObjects in workerd: groups stay whole in one object, so
 * three concurrent workers claiming across the objects keep FIFO and one-in-flight per group and
 * lose or repeat nothing (history checker); batches, stats, cancel and redrive route by group
 * and seq.
 */
import { describe, expect, it } from 'vitest';
import { groupHash, spreadTransport } from '../src/transport/spread.js';
import type { Lease, Transport } from '../src/transport/contract.js';
import { checkHistory, type HistoryEntry } from './support/history.js';
import { connect, freshObject } from './support/workerd-backends.js';
import { workerdUrl } from './support/servers.js';

// This file needs the run's workerd: started here, before any test (pools and sockets take its URL at once).
await workerdUrl();

const N = 3;

function spreadOver(n: number) {
  const clients = Array.from({ length: n }, () => connect('q', freshObject('spread'), undefined));
  return { clients, queue: spreadTransport(clients.map((c) => c.transport)) as Transport<{ n: number }> };
}

describe('spreadTransport over LeaseholdObjects', () => {
  it('keeps each group in one object: three workers lose nothing, repeat nothing, break no FIFO', async () => {
    const { clients, queue } = spreadOver(N);
    const history: HistoryEntry[] = [];
    let tick = 0;
    try {
      const items = Array.from({ length: 30 }, (_, n) => ({ groupId: `g${n % 10}`, event: { n } }));
      const seqs = await queue.publishMany(items);
      for (let n = 30; n < 60; n++) seqs.push(await queue.publish(`g${n % 10}`, { n }));
      seqs.forEach((seq, n) => history.push({ op: 'publish', seq, groupId: `g${n % 10}`, t: tick++ }));
      // Every part holds some groups, and each group sits in one part only.
      const perPart = await Promise.all(clients.map((c) => c.transport.inspect()));
      expect(perPart.every((s) => s.groups.length > 0)).toBe(true);
      for (let g = 0; g < 10; g++) expect(perPart.filter((s) => s.groups.some((x) => x.groupId === `g${g}`))).toHaveLength(1);

      const work = async (worker: string) => {
        // An ack's time is taken before it is sent, a claim's after its answer: a conservative
        // order that can only hide an overlap the objects did not allow, never invent one.
        let lease: Lease<{ n: number }> | null = await queue.claim(worker, 60_000);
        while (lease) {
          history.push({ op: 'claim', seq: lease.seq, groupId: lease.groupId, attempt: lease.attempt, worker, t: tick++, expiresAt: Number.MAX_SAFE_INTEGER });
          history.push({ op: 'ack', seq: lease.seq, attempt: lease.attempt, worker, t: tick++, ok: true });
          lease = await queue.ackAndClaim(lease, worker, 60_000);
        }
      };
      await Promise.all(['w1', 'w2', 'w3'].map(work));
      const remaining = (await queue.inspect()).groups.flatMap((g) => g.messages.map((m) => m.seq));
      expect(checkHistory(history, remaining)).toEqual({ lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] });
      expect(history.filter((e) => e.op === 'ack')).toHaveLength(60);
    } finally {
      await queue.close();
    }
  });

  it('routes ackMany, stats, cancel and redrive by group and seq', async () => {
    const { queue } = spreadOver(N);
    try {
      const groups = ['a', 'b', 'c', 'd', 'e', 'f'];
      expect(new Set(groups.map((g) => groupHash(g) % N)).size).toBeGreaterThan(1);
      const seqs = await queue.publishMany(groups.map((groupId, n) => ({ groupId, event: { n } })));
      expect(new Set(seqs).size).toBe(groups.length);
      expect(await queue.stats()).toMatchObject({ queued: 6, groups: 6, ready: 6 });
      const leases = await queue.claimMany('w', 60_000, { max: 4 });
      expect(leases).toHaveLength(4);
      const stale = { ...leases[0]!, attempt: 9 };
      const result = await queue.ackMany([leases[0]!, stale, leases[1]!]);
      expect(result.acked).toEqual([leases[0], leases[1]]);
      expect(result.lost).toEqual([stale]);
      expect(result.acked[0]).toBe(leases[0]);
      const free = (await queue.inspect()).groups.find((g) => g.messages[0]!.state === 'ready')!.messages[0]!;
      expect(await queue.cancel(free.seq)).toBe(true);
      expect(await queue.stats()).toMatchObject({ queued: 3, leased: 2 });
      await expect(queue.ack({ ...leases[2]!, seq: leases[2]!.seq + 1 })).rejects.toMatchObject({ code: 'LEASE_LOST' });
    } finally {
      await queue.close();
    }
  });

  it('ackAndClaimMany acks in each lease\'s own object, then claims across the objects, with global seqs', async () => {
    const { queue } = spreadOver(N);
    try {
      const groups = ['a', 'b', 'c', 'd', 'e', 'f'];
      await queue.publishMany(groups.flatMap((groupId, n) => [{ groupId, event: { n } }, { groupId, event: { n: n + 10 } }]));
      const [first, second] = await queue.claimMany('w', 60_000, { max: 6 });
      const misrouted = { ...second!, seq: second!.seq + 1 }; // a seq no object of its group hands out
      const result = await queue.ackAndClaimMany([first!, misrouted, first!, second!], 'w2', 60_000, { max: 10 });
      expect(result.acked).toEqual([first, second]);
      expect(result.acked[0]).toBe(first);
      expect(result.lost).toEqual([misrouted, first]);
      expect(result.lost[1]).toBe(first);
      expect(result.claimed.map((l) => [l.groupId, l.event.n, l.workerId])).toEqual(
        expect.arrayContaining([
          [first!.groupId, first!.event.n + 10, 'w2'],
          [second!.groupId, second!.event.n + 10, 'w2'],
        ]),
      );
      expect(result.claimed).toHaveLength(2);
      // The claimed leases carry global seqs: acking them through the spread finds their objects.
      expect((await queue.ackMany(result.claimed)).lost).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('ackAndClaimMany is two steps: when the claims fail, the call rejects with its acks done', async () => {
    const { clients, queue } = spreadOver(2);
    try {
      await queue.publish('a', { n: 1 });
      const lease = (await queue.claim('w', 60_000))!;
      await clients[1 - (groupHash('a') % 2)]!.transport.close(); // the object without group a refuses every call
      await expect(queue.ackAndClaimMany([lease], 'w', 60_000, { max: 2 })).rejects.toMatchObject({ name: 'ClosedError' });
      expect((await clients[groupHash('a') % 2]!.transport.inspect()).groups).toEqual([]);
    } finally {
      await queue.close();
    }
  });

  it('refuses a bad event before any object is called', async () => {
    const { queue } = spreadOver(2);
    try {
      await expect(queue.publishMany([{ groupId: 'a', event: { n: 1 } }, { groupId: 'b', event: { n: Number.NaN } }])).rejects.toThrow(TypeError);
      expect(await queue.stats()).toMatchObject({ queued: 0 });
    } finally {
      await queue.close();
    }
  });
});
