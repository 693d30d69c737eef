/**
 * A contention driver: several workers on one queue (possibly through several connections),
 * with random stalls longer than the lease, late acks, parks and renewals, recording everything
 * into a history for the checker. Deterministic for a seed: the workers interleave at awaits in
 * an order the seeded generator picks, on a manual clock.
 */
import type { ManualClock } from '../../src/clock.js';
import { LeaseLostError } from '../../src/errors.js';
import type { Lease, Transport } from '../../src/transport/contract.js';
import type { HistoryEntry } from './history.js';

/** A small seeded generator (mulberry32): reproducible runs without a dependency. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ContentionOptions {
  /** One entry per worker; entries may be the same transport or connections to one database. */
  transports: Transport[];
  clock: ManualClock;
  seed: number;
  rounds: number;
  groups: number;
  visibilityMs: number;
  /**
   * Also the offline-first calls: workers release and reject, the producer publishes with
   * `after`, and an operator pauses and resumes groups and the queue and redrives or discards
   * dead letters. The transports must share a queue opened with `onDeadLetter: 'hold'`.
   */
  outbox?: boolean;
}

export async function runContention(o: ContentionOptions): Promise<{ history: HistoryEntry[]; remaining: number[] }> {
  const random = seeded(o.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const history: HistoryEntry[] = [];
  const held = new Map<number, Lease>(); // worker index → its lease
  const workers = o.transports.map((transport, i) => ({ transport, id: `w${i}` }));
  const producer = o.transports[0]!;
  let published = 0;

  const act = async (i: number) => {
    const { transport, id } = workers[i]!;
    const t = o.clock.now();
    const lease = held.get(i);
    if (!lease) {
      const claimed = await transport.claim(id, o.visibilityMs);
      if (claimed) {
        history.push({ op: 'claim', seq: claimed.seq, groupId: claimed.groupId, attempt: claimed.attempt, worker: id, t, expiresAt: claimed.expiresAt });
        held.set(i, claimed);
      }
      return;
    }
    const roll = random();
    if (roll < 0.25) return; // stalled: holds its lease and does nothing, maybe past its expiry
    const op = o.outbox
      ? roll < 0.65 ? 'ack' : roll < 0.73 ? 'nack' : roll < 0.81 ? 'release' : roll < 0.86 ? 'reject' : 'extend'
      : roll < 0.8 ? 'ack' : roll < 0.9 ? 'nack' : 'extend';
    const delay = (op === 'nack' || op === 'release') && random() < 0.5 ? Math.floor(random() * o.visibilityMs) : 0;
    try {
      if (op === 'extend') {
        const renewed = await transport.extend(lease, o.visibilityMs);
        history.push({ op, seq: lease.seq, attempt: lease.attempt, worker: id, t, ok: true, expiresAt: renewed.expiresAt });
        return;
      }
      if (op === 'reject') {
        await transport.reject(lease, 'refused');
        history.push({ op, seq: lease.seq, attempt: lease.attempt, worker: id, t, ok: true, held: true });
      } else {
        await (op === 'ack' ? transport.ack(lease) : op === 'nack' ? transport.nack(lease, delay) : transport.release(lease, delay));
        history.push({ op, seq: lease.seq, attempt: lease.attempt, worker: id, t, ok: true, delay });
      }
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      history.push(op === 'reject' ? { op, seq: lease.seq, attempt: lease.attempt, worker: id, t, ok: false, held: true } : { op, seq: lease.seq, attempt: lease.attempt, worker: id, t, ok: false });
    }
    held.delete(i);
  };

  // The operator: one call at a time, between the workers' turns, so the history's order is
  // the order of the commits.
  const paused = new Set<string | null>();
  const issued: number[] = [];
  const operate = async () => {
    const roll = random();
    const t = o.clock.now();
    if (roll < 0.05) {
      const letters = await producer.deadLetters();
      if (letters.length === 0) return;
      const { seq } = pick(letters);
      const op = random() < 0.6 ? 'redrive' : 'discard';
      // A holding dead letter comes back under its own seq.
      if (op === 'redrive') expectSame(await producer.redrive(seq), seq);
      else await producer.discard(seq);
      history.push({ op, seq, t });
    } else if (roll < 0.08) {
      const groupId = random() < 0.25 ? null : `g${Math.floor(random() * o.groups)}`;
      await producer.pause(groupId ?? undefined);
      paused.add(groupId);
      history.push({ op: 'pause', groupId, t });
    } else if (roll < 0.14 && paused.size > 0) {
      const groupId = pick([...paused]);
      await producer.resume(groupId ?? undefined);
      paused.delete(groupId);
      history.push({ op: 'resume', groupId, t });
    }
  };

  for (let round = 0; round < o.rounds; round++) {
    if (random() < 0.3) {
      const groupId = `g${Math.floor(random() * o.groups)}`;
      if (o.outbox && issued.length > 0 && random() < 0.2) {
        const after = [pick(issued)];
        const seq = await producer.publish(groupId, { n: ++published }, { after });
        history.push({ op: 'publish', seq, groupId, t: o.clock.now(), after });
        issued.push(seq);
      } else {
        const seq = await producer.publish(groupId, { n: ++published });
        history.push({ op: 'publish', seq, groupId, t: o.clock.now() });
        issued.push(seq);
      }
    }
    if (o.outbox) await operate();
    // Several workers act "at once": their calls interleave at awaits in a random order.
    const acting = Array.from({ length: 1 + Math.floor(random() * workers.length) }, () => Math.floor(random() * workers.length));
    await Promise.all([...new Set(acting)].map((i) => act(i)));
    o.clock.advance(pick([0, 0, 1, o.visibilityMs / 4, o.visibilityMs / 2, o.visibilityMs + 1]));
  }

  // Drain: every stalled worker is gone for good; the survivors take everything that is left,
  // once the operator has resumed everything and redriven or discarded every dead letter.
  held.clear();
  o.clock.advance(o.visibilityMs * 10);
  for (const groupId of paused) {
    await producer.resume(groupId ?? undefined);
    history.push({ op: 'resume', groupId, t: o.clock.now() });
  }
  for (const { seq } of o.outbox ? await producer.deadLetters() : []) {
    const op = random() < 0.5 ? 'redrive' : 'discard';
    if (op === 'redrive') expectSame(await producer.redrive(seq), seq);
    else await producer.discard(seq);
    history.push({ op, seq, t: o.clock.now() });
  }
  for (;;) {
    const worker = pick(workers);
    const t = o.clock.now();
    const lease = await worker.transport.claim(worker.id, o.visibilityMs);
    if (!lease) break;
    history.push({ op: 'claim', seq: lease.seq, groupId: lease.groupId, attempt: lease.attempt, worker: worker.id, t, expiresAt: lease.expiresAt });
    await worker.transport.ack(lease);
    history.push({ op: 'ack', seq: lease.seq, attempt: lease.attempt, worker: worker.id, t, ok: true });
    o.clock.advance(1);
  }
  const snapshot = await producer.inspect();
  return { history, remaining: snapshot.groups.flatMap((g) => g.messages.map((m) => m.seq)) };
}

function expectSame(actual: number, expected: number): void {
  if (actual !== expected) throw new Error(`a holding dead letter ${expected} was redriven as ${actual}, not under its own seq`);
}
