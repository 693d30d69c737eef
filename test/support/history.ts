/**
 * A queue history checker, in the spirit of Jepsen's total-queue check: given what every worker
 * saw (publishes, claims, acks, nacks, extends, each with the outcome it got) and what is left in
 * the queue at the end, it reports
 * - lost messages: published (and acknowledged to the publisher) but neither acked nor left;
 * - unexpected ones: claimed or acked but never published;
 * - duplicates: acked successfully more than once;
 * - overlapping leases: two leases of one group held at the same instant;
 * - FIFO breaks: a message claimed while an older message of its group was still queued;
 * - stale acks: an ack, nack or extend accepted from a lease whose message was claimed again.
 * Times are the clock the transport measured leases with.
 */
export type HistoryEntry =
  | { op: 'publish'; seq: number; groupId: string; t: number }
  | { op: 'claim'; seq: number; groupId: string; attempt: number; worker: string; t: number; expiresAt: number }
  | { op: 'ack' | 'nack'; seq: number; attempt: number; worker: string; t: number; ok: boolean; delay?: number }
  | { op: 'extend'; seq: number; attempt: number; worker: string; t: number; ok: boolean; expiresAt?: number }
  | { op: 'dead'; seq: number; t: number };

export interface Verdict {
  lost: number[];
  unexpected: number[];
  duplicated: number[];
  overlapping: string[];
  fifoBreaks: string[];
  staleAccepted: string[];
}

export function isClean(v: Verdict): boolean {
  return Object.values(v).every((list) => list.length === 0);
}

interface LeaseSpan {
  seq: number;
  attempt: number;
  from: number;
  /** Held through this instant (inclusive): a lease is in flight while expiresAt >= now. */
  until: number;
  /** Ended by ack/nack at this instant (exclusive), if it was. */
  endedAt?: number;
}

/**
 * Checks `history` (in the order things happened) against `remaining`, the seqs still queued
 * (ready, leased or parked) at the end.
 */
export function checkHistory(history: HistoryEntry[], remaining: Iterable<number>): Verdict {
  const verdict: Verdict = { lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [] };
  const published = new Map<number, { groupId: string; t: number }>();
  const acks = new Map<number, number>();
  const dead = new Set<number>();
  const lastAttempt = new Map<number, number>();
  const done = new Set<number>(); // acked or dead: no longer queued
  const spans = new Map<string, LeaseSpan[]>(); // groupId → leases
  const spanOf = new Map<string, LeaseSpan>(); // `${seq}#${attempt}`

  for (const e of history) {
    switch (e.op) {
      case 'publish':
        published.set(e.seq, { groupId: e.groupId, t: e.t });
        break;
      case 'claim': {
        if (!published.has(e.seq)) verdict.unexpected.push(e.seq);
        lastAttempt.set(e.seq, e.attempt);
        const group = spans.get(e.groupId) ?? [];
        for (const other of group) {
          const end = other.endedAt ?? other.until + 1;
          if (other.seq !== e.seq || other.attempt !== e.attempt) {
            if (e.t >= other.from && e.t < end) verdict.overlapping.push(`${e.groupId}: ${e.seq}#${e.attempt} claimed at ${e.t} while ${other.seq}#${other.attempt} was held`);
          }
        }
        for (const [seq, p] of published) {
          if (p.groupId === e.groupId && seq < e.seq && !done.has(seq)) verdict.fifoBreaks.push(`${e.groupId}: ${e.seq} claimed at ${e.t} before older ${seq}`);
        }
        const span: LeaseSpan = { seq: e.seq, attempt: e.attempt, from: e.t, until: e.expiresAt };
        group.push(span);
        spans.set(e.groupId, group);
        spanOf.set(`${e.seq}#${e.attempt}`, span);
        break;
      }
      case 'ack':
      case 'nack':
      case 'extend': {
        if (!e.ok) break;
        if (!published.has(e.seq)) verdict.unexpected.push(e.seq);
        if ((lastAttempt.get(e.seq) ?? 0) !== e.attempt) verdict.staleAccepted.push(`${e.op} of ${e.seq}#${e.attempt} accepted after attempt ${lastAttempt.get(e.seq)}`);
        const span = spanOf.get(`${e.seq}#${e.attempt}`);
        if (e.op === 'extend') {
          if (span && e.expiresAt !== undefined) span.until = e.expiresAt;
        } else if (span) {
          span.endedAt = e.t;
        }
        if (e.op === 'ack') {
          acks.set(e.seq, (acks.get(e.seq) ?? 0) + 1);
          done.add(e.seq);
        }
        break;
      }
      case 'dead':
        dead.add(e.seq);
        done.add(e.seq);
        break;
    }
  }
  const left = new Set(remaining);
  for (const seq of left) if (!published.has(seq)) verdict.unexpected.push(seq);
  for (const seq of published.keys()) {
    const count = acks.get(seq) ?? 0;
    if (count > 1) verdict.duplicated.push(seq);
    if (count === 0 && !left.has(seq) && !dead.has(seq)) verdict.lost.push(seq);
  }
  return verdict;
}
