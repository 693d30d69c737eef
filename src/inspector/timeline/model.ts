/**
 * What the timeline draws: every lease (who held which message, from when, until it was acked,
 * given back, parked or ran out), every wait (a park or a delayed publish), and the moments that
 * matter (a late ack or nack refused by fencing, a message sent to the dead letters).
 *
 * Fed two ways. This tab's workers' calls are observed as they are made (see observe.ts): exact
 * times, from the lease itself. Other tabs' workers and the dead letters are read from snapshots
 * as they arrive (`reconcile`): a lease first seen in a snapshot starts where it was first seen.
 */
import type { Lease, TransportSnapshot } from '../../transport/contract.js';

export type LeaseEnd = 'acked' | 'released' | 'parked' | 'rejected' | 'expired' | 'gone';

export interface LeaseSpan {
  kind: 'lease';
  group: string;
  seq: number;
  attempt: number;
  worker: string;
  start: number;
  expiresAt: number;
  /** When its holder acked, nacked or parked it; null while held (or once it ran out unacked). */
  end: number | null;
  how: LeaseEnd | null;
  /** Observed from this tab's calls (exact), or first seen in a snapshot (another tab's worker). */
  local: boolean;
}

export interface WaitSpan {
  kind: 'park' | 'delay';
  group: string;
  seq: number;
  start: number;
  until: number;
}

export interface Mark {
  kind: 'refused' | 'dead';
  group: string;
  seq: number;
  at: number;
  /** The refused worker; for a dead letter, the attempts it had. */
  worker?: string;
  attempt: number;
  /** What was refused: 'ack' or 'nack'. */
  what?: string;
}

export type Item = LeaseSpan | WaitSpan | Mark;

export class TimelineModel {
  readonly leases: LeaseSpan[] = [];
  readonly waits: WaitSpan[] = [];
  readonly marks: Mark[] = [];
  /** Groups and workers in order of first appearance: the lanes. */
  readonly groups: string[] = [];
  readonly workers: string[] = [];
  /** Bumped on every change, so views redraw only when something moved. */
  version = 0;
  readonly #byLease = new Map<string, LeaseSpan>();
  readonly #dead = new Set<number>();
  readonly #seenWaits = new Set<string>();
  readonly #groupSet = new Set<string>();
  readonly #workerSet = new Set<string>();

  clear(): void {
    this.leases.length = 0;
    this.waits.length = 0;
    this.marks.length = 0;
    this.groups.length = 0;
    this.workers.length = 0;
    this.#byLease.clear();
    this.#dead.clear();
    this.#seenWaits.clear();
    this.#groupSet.clear();
    this.#workerSet.clear();
    this.version++;
  }

  claimed(lease: Lease, visibilityMs: number, local = true): void {
    const key = `${lease.seq}:${lease.attempt}`;
    const known = this.#byLease.get(key);
    // A release gives the attempt back, so the next lease of its message has the same attempt:
    // a span that has ended is an earlier lease, and this claim starts a new one.
    if (known && (known.how === null || !local)) {
      // Seen in a snapshot before this tab's call answered: the call knows the exact start.
      if (local) Object.assign(known, { start: lease.expiresAt - visibilityMs, local: true });
      return this.#bump();
    }
    const span: LeaseSpan = { kind: 'lease', group: lease.groupId, seq: lease.seq, attempt: lease.attempt, worker: lease.workerId, start: lease.expiresAt - visibilityMs, expiresAt: lease.expiresAt, end: null, how: null, local };
    this.#byLease.set(key, span);
    this.leases.push(span);
    this.#lane(span.group, span.worker);
  }

  extended(lease: Lease): void {
    const span = this.#byLease.get(`${lease.seq}:${lease.attempt}`);
    if (span) span.expiresAt = lease.expiresAt;
    this.#bump();
  }

  ended(lease: Lease, at: number, how: LeaseEnd, parkMs = 0): void {
    const span = this.#byLease.get(`${lease.seq}:${lease.attempt}`);
    if (span && span.end === null) Object.assign(span, { end: at, how });
    if (how === 'parked' && parkMs > 0) this.waited('park', lease.groupId, lease.seq, at, at + parkMs);
    this.#bump();
  }

  refused(lease: Lease, at: number, what: 'ack' | 'nack'): void {
    this.marks.push({ kind: 'refused', group: lease.groupId, seq: lease.seq, at, worker: lease.workerId, attempt: lease.attempt, what });
    this.#lane(lease.groupId, lease.workerId);
  }

  waited(kind: WaitSpan['kind'], group: string, seq: number, start: number, until: number): void {
    const key = `${kind}:${seq}:${until}`;
    if (this.#seenWaits.has(key)) return;
    this.#seenWaits.add(key);
    this.waits.push({ kind, group, seq, start, until });
    this.#lane(group);
  }

  /** Adds what only a snapshot can tell: other tabs' leases, delays, parks, dead letters. */
  reconcile(snapshot: TransportSnapshot): void {
    const heads = new Map<number, number>();
    for (const group of snapshot.groups) {
      // Every queued group gets its lane, so a waiting group is visible before its first lease.
      if (!this.#groupSet.has(group.groupId)) this.#lane(group.groupId);
      for (const m of group.messages) {
        heads.set(m.seq, m.attempt);
        if ((m.state === 'leased' || m.state === 'expired') && m.holder && m.expiresAt !== null && !this.#byLease.has(`${m.seq}:${m.attempt}`)) {
          this.claimed({ seq: m.seq, groupId: m.groupId, attempt: m.attempt, workerId: m.holder, expiresAt: m.expiresAt, event: null }, m.expiresAt - snapshot.now, false);
          this.#byLease.get(`${m.seq}:${m.attempt}`)!.start = snapshot.now;
        }
        if ((m.state === 'parked' || m.state === 'delayed') && m.expiresAt !== null) {
          this.waited(m.state === 'parked' ? 'park' : 'delay', m.groupId, m.seq, snapshot.now, m.expiresAt);
        }
      }
    }
    // Another tab's lease whose message moved on ended unseen: claimed again after it ran out
    // (expired), or acked or given back there (gone, last seen before this snapshot).
    for (const span of this.leases) {
      if (span.local || span.how !== null) continue;
      const attempt = heads.get(span.seq);
      if (attempt !== undefined && attempt <= span.attempt) continue;
      if (attempt !== undefined && snapshot.now > span.expiresAt) Object.assign(span, { end: span.expiresAt, how: 'expired' as const });
      else Object.assign(span, { end: Math.min(snapshot.now, Math.max(span.start, span.expiresAt)), how: 'gone' as const });
    }
    for (const letter of snapshot.deadLetters) {
      if (this.#dead.has(letter.seq)) continue;
      this.#dead.add(letter.seq);
      this.marks.push({ kind: 'dead', group: letter.groupId, seq: letter.seq, at: letter.deadAt, attempt: letter.attempt });
      this.#lane(letter.groupId);
    }
    this.#bump();
  }

  /** The dead letters already marked: the demo logs each new one once. */
  isDeadMarked(seq: number): boolean {
    return this.#dead.has(seq);
  }

  #lane(group: string, worker?: string): void {
    if (!this.#groupSet.has(group)) {
      this.#groupSet.add(group);
      this.groups.push(group);
    }
    if (worker && !this.#workerSet.has(worker)) {
      this.#workerSet.add(worker);
      this.workers.push(worker);
    }
    this.#bump();
  }

  #bump(): void {
    this.version++;
  }
}
