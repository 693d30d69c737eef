/**
 * A queue history checker, in the spirit of Jepsen's total-queue check: given what every worker
 * saw (publishes, claims, acks, nacks, extends, each with the outcome it got) and what is left in
 * the queue at the end, it reports
 * - lost messages: published (and acknowledged to the publisher) but neither acked nor left;
 * - unexpected ones: claimed or acked but never published;
 * - duplicates: acked successfully more than once;
 * - overlapping leases: two leases of one group held at the same instant;
 * - FIFO breaks: a message claimed while an older message of its group was still queued;
 * - stale acks: an ack, nack or extend accepted from a lease whose message was claimed again;
 * - stop breaks: a claim in a group held at its dead letter (`onDeadLetter: 'hold'`, between the
 *   reject and the redrive or discard), in a paused group or queue, or of a message published
 *   with `after` while a message it names is still queued or dead.
 * Times are the clock the transport measured leases with.
 */
export type HistoryEntry =
  | { op: 'publish'; seq: number; groupId: string; t: number; after?: number[] }
  | { op: 'claim'; seq: number; groupId: string; attempt: number; worker: string; t: number; expiresAt: number }
  | { op: 'ack' | 'nack'; seq: number; attempt: number; worker: string; t: number; ok: boolean; delay?: number }
  /** A nack that spends no attempt. */
  | { op: 'release'; seq: number; attempt: number; worker: string; t: number; ok: boolean; delay?: number }
  | { op: 'extend'; seq: number; attempt: number; worker: string; t: number; ok: boolean; expiresAt?: number }
  | { op: 'dead'; seq: number; t: number }
  /** A dead letter now (`reject`); `held`: the queue holds the group at it. */
  | { op: 'reject'; seq: number; attempt: number; worker: string; t: number; ok: boolean; held: boolean }
  /** A holding dead letter back at its group's head under its own seq. */
  | { op: 'redrive'; seq: number; t: number }
  | { op: 'discard'; seq: number; t: number }
  /** `groupId` null: the whole queue. */
  | { op: 'pause' | 'resume'; groupId: string | null; t: number };

export interface Verdict {
  lost: number[];
  unexpected: number[];
  duplicated: number[];
  overlapping: string[];
  fifoBreaks: string[];
  staleAccepted: string[];
  stopBreaks: string[];
}

export function isClean(v: Verdict): boolean {
  return Object.values(v).every((list) => list.length === 0);
}

interface LeaseSpan {
  groupId: string;
  seq: number;
  attempt: number;
  worker: string;
  from: number;
  /** Held through this instant (inclusive): a lease is in flight while expiresAt >= now. */
  until: number;
}

/**
 * Checks `history` against `remaining`, the seqs still queued (ready, leased or parked) at the
 * end. `history` must be in an order consistent with the commits of each group: the order one
 * caller made its calls in, or, for truly concurrent clients, an order taken on the server
 * under the group's row lock (see pg-history.ts). Only the order within a group matters, and
 * times are only compared with lease expiries: a lease ends when an accepted ack or nack of it
 * comes earlier in the history, or when its expiry is earlier than a later claim's time.
 */
export function checkHistory(history: HistoryEntry[], remaining: Iterable<number>): Verdict {
  const verdict: Verdict = { lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] };
  const published = new Map<number, { groupId: string; t: number }>();
  const acks = new Map<number, number>();
  const dead = new Set<number>();
  const lastAttempt = new Map<number, number>();
  const done = new Set<number>(); // acked or dead: no longer queued
  const live = new Map<string, LeaseSpan[]>(); // groupId → leases not ended by an ack or nack
  const spanOf = new Map<string, LeaseSpan>(); // `${seq}#${attempt}`
  // Per group, its seqs in publish order and how many at the front are done: the FIFO head.
  const pending = new Map<string, { seqs: number[]; head: number }>();
  const heldGroups = new Map<string, number>(); // group → the dead letter holding it
  const paused = new Set<string | null>(); // null: the queue
  const waitsFor = new Map<number, number[]>(); // seq → the seqs its `after` names
  const discarded = new Set<number>();

  const end = (seq: number, attempt: number) => {
    const span = spanOf.get(`${seq}#${attempt}`);
    const spans = span && live.get(span.groupId);
    if (!spans) return;
    const i = spans.indexOf(span!);
    if (i >= 0) spans.splice(i, 1);
    if (spans.length === 0) live.delete(span!.groupId);
  };

  for (const e of history) {
    switch (e.op) {
      case 'publish': {
        published.set(e.seq, { groupId: e.groupId, t: e.t });
        if (e.after) waitsFor.set(e.seq, e.after);
        const queue = pending.get(e.groupId) ?? { seqs: [], head: 0 };
        queue.seqs.push(e.seq);
        pending.set(e.groupId, queue);
        break;
      }
      case 'claim': {
        if (!published.has(e.seq)) verdict.unexpected.push(e.seq);
        lastAttempt.set(e.seq, e.attempt);
        const group = live.get(e.groupId) ?? [];
        for (const other of group) {
          const same = other.seq === e.seq && other.attempt === e.attempt;
          if (same) verdict.overlapping.push(`${e.groupId}: ${e.seq}#${e.attempt} claimed by ${e.worker} at ${e.t} and already by ${other.worker}`);
          else if (e.t <= other.until) verdict.overlapping.push(`${e.groupId}: ${e.seq}#${e.attempt} claimed at ${e.t} while ${other.seq}#${other.attempt} was held until ${other.until}`);
        }
        const queue = pending.get(e.groupId);
        if (queue) {
          while (queue.head < queue.seqs.length && done.has(queue.seqs[queue.head]!)) queue.head++;
          const head = queue.seqs[queue.head];
          if (head !== undefined && head < e.seq) verdict.fifoBreaks.push(`${e.groupId}: ${e.seq} claimed at ${e.t} before older ${head}`);
        }
        const holder = heldGroups.get(e.groupId);
        if (holder !== undefined) verdict.stopBreaks.push(`${e.groupId}: ${e.seq} claimed at ${e.t} while held at dead letter ${holder}`);
        if (paused.has(null) || paused.has(e.groupId)) verdict.stopBreaks.push(`${e.groupId}: ${e.seq} claimed at ${e.t} while ${paused.has(null) ? 'the queue' : 'the group'} was paused`);
        for (const named of waitsFor.get(e.seq) ?? []) {
          if (!acks.has(named) && !discarded.has(named)) verdict.stopBreaks.push(`${e.groupId}: ${e.seq} claimed at ${e.t} before ${named}, which it waits for, was gone`);
        }
        const span: LeaseSpan = { groupId: e.groupId, seq: e.seq, attempt: e.attempt, worker: e.worker, from: e.t, until: e.expiresAt };
        group.push(span);
        live.set(e.groupId, group);
        spanOf.set(`${e.seq}#${e.attempt}`, span);
        break;
      }
      case 'ack':
      case 'nack':
      case 'release':
      case 'reject':
      case 'extend': {
        if (!e.ok) break;
        if (!published.has(e.seq)) verdict.unexpected.push(e.seq);
        if ((lastAttempt.get(e.seq) ?? 0) !== e.attempt) verdict.staleAccepted.push(`${e.op} of ${e.seq}#${e.attempt} accepted after attempt ${lastAttempt.get(e.seq)}`);
        if (e.op === 'extend') {
          const span = spanOf.get(`${e.seq}#${e.attempt}`);
          if (span && e.expiresAt !== undefined) span.until = e.expiresAt;
        } else {
          end(e.seq, e.attempt);
        }
        if (e.op === 'ack') {
          acks.set(e.seq, (acks.get(e.seq) ?? 0) + 1);
          done.add(e.seq);
        }
        if (e.op === 'reject') {
          dead.add(e.seq);
          // A holding dead letter stays at its group's head for FIFO: nothing behind it may go.
          if (e.held) heldGroups.set(published.get(e.seq)?.groupId ?? '', e.seq);
          else done.add(e.seq);
        }
        break;
      }
      case 'redrive':
      case 'discard': {
        const groupId = published.get(e.seq)?.groupId;
        if (groupId !== undefined && heldGroups.get(groupId) === e.seq) heldGroups.delete(groupId);
        dead.delete(e.seq);
        // Its attempts start again: leases of it from before (run out, never settled) no longer
        // name it, and a new claim may carry the same attempt number as one of them.
        for (const [group, spans] of live) {
          const kept = spans.filter((span) => span.seq !== e.seq);
          if (kept.length > 0) live.set(group, kept);
          else live.delete(group);
        }
        if (e.op === 'discard') {
          discarded.add(e.seq);
          done.add(e.seq);
        }
        break;
      }
      case 'pause':
        paused.add(e.groupId);
        break;
      case 'resume':
        paused.delete(e.groupId);
        break;
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
    if (count === 0 && !left.has(seq) && !dead.has(seq) && !discarded.has(seq)) verdict.lost.push(seq);
  }
  return verdict;
}
