/**
 * Dead letters and holds of the in-memory transport: burying a head that ran out of attempts or
 * was rejected, and bringing a letter back (redrive) or dropping it (discard), which lifts the
 * hold of a group held at it (`onDeadLetter: 'hold'`). Apart from the queue's state because only
 * these moves take a message out of the queue and put it back, under its old counter or its old
 * place at the head of a held group.
 * @internal
 */
import { LeaseholdError } from '../../errors.js';
import type { DeadLetter, DeadLetterPolicy } from '../contract.js';
import type { Buried, Group, MemoryQueue, Message } from './queue.js';

/** Moves a group's head to the dead letters; with the hold policy, the group is held at it. */
export function bury<E>(queue: MemoryQueue<E>, policy: DeadLetterPolicy, group: Group<E>, message: Message<E>, now: number, reason: string | null): void {
  if (policy === 'hold') {
    group.heldBy = message.seq;
    queue.heldCount++;
  }
  queue.removeHead(group, true);
  queue.dead.set(message.seq, { seq: message.seq, groupId: group.id, priority: group.priority, event: message.event, attempt: message.attempt, deadAt: now, reason: reason ?? message.lastError, counter: message.counter, revision: message.revision });
}

/** The dead letters in the order they died, without their counters and revisions. */
export function deadLetters<E>(queue: MemoryQueue<E>): DeadLetter<E>[] {
  return Array.from(queue.dead.values(), ({ counter, revision, ...letter }) => letter);
}

/** Brings dead letter `seq` back to the queue (see Transport.redrive); returns its seq there. */
export function redrive<E>(queue: MemoryQueue<E>, seq: number): number {
  const letter = deadLetter(queue, seq);
  queue.dead.delete(seq);
  const { counter, revision } = letter;
  // Back in the queue under its old number, which may be below the mark.
  queue.queuedCounters.add(counter);
  queue.lowWater = Math.min(queue.lowWater, counter);
  const group = queue.groups.get(letter.groupId);
  if (group?.heldBy !== seq) {
    const newSeq = queue.append(letter.groupId, letter.event, letter.priority, null, null, [], { counter, revision });
    // What waited for the dead letter waits for the message it became.
    queue.after.move(seq, newSeq);
    return newSeq;
  }
  // Back to the head it held, with its own seq: every message behind it has a later one.
  const message: Message<E> = { seq, counter, revision, groupId: group.id, event: letter.event, key: null, notBefore: null, deadline: null, attempt: 0, lastError: null, holder: null, expiry: null, waits: 0, gone: false };
  if (group.head > 0) group.fifo[--group.head] = message;
  else group.fifo.unshift(message);
  if (group.claimOrder === 0) group.firstSeq = seq;
  queue.queued++;
  unhold(queue, group);
  return seq;
}

/** Drops dead letter `seq` for good (see Transport.discard). */
export function discard<E>(queue: MemoryQueue<E>, seq: number): void {
  const letter = deadLetter(queue, seq);
  queue.dead.delete(seq);
  queue.satisfy(seq);
  const group = queue.groups.get(letter.groupId);
  if (group?.heldBy !== seq) return;
  if (group.head === group.fifo.length) {
    queue.groups.delete(group.id);
    queue.pausedGroups.delete(group);
    queue.heldCount--;
    queue.listeners.notify();
    return;
  }
  if (group.claimOrder === 0) group.firstSeq = group.fifo[group.head]!.seq;
  unhold(queue, group);
}

function deadLetter<E>(queue: MemoryQueue<E>, seq: number): Buried<E> {
  const letter = queue.dead.get(seq);
  if (!letter) throw new LeaseholdError('NOT_FOUND', `message ${seq} is not a dead letter`);
  return letter;
}

/** Lifts a non-empty group's hold: its head is free, or held by its own delay. */
function unhold<E>(queue: MemoryQueue<E>, group: Group<E>): void {
  group.heldBy = null;
  queue.heldCount--;
  // The head was never delivered (a redriven letter comes back at attempt 0, and messages
  // behind a head are untouched until they become it): only its own delay can hold it.
  queue.headChanged(group);
  queue.listeners.notify();
}
