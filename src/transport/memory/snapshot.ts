/**
 * What the in-memory transport reports of itself: `stats()` counted from the heaps and sets the
 * queue keeps anyway (no pass over the messages), and `inspect()`'s full picture. Apart from the
 * queue's state because they only read it (but for the lapsed leases `stats()` first releases,
 * as a claim would), and every message state they name is the contract's, not the heaps'.
 * @internal
 */
import { headState, waitingState } from '../shared.js';
import type { GroupSnapshot, MessageSnapshot, TransportSnapshot, TransportStats } from '../contract.js';
import { deadLetters } from './dead.js';
import type { MemoryQueue, Message } from './queue.js';

/** The queue's counts at clock reading `now` (see Transport.stats). */
export function statsOf<E>(queue: MemoryQueue<E>, now: number): TransportStats {
  queue.releaseLapsed(now);
  // After the release, the locked heap holds exactly the groups (not paused) whose head is
  // held at `now`, and the free heaps the groups a claim could take.
  let leased = 0;
  let ready = 0;
  const blocked = queue.blockedGroups.size;
  for (const group of queue.locked.items()) if (group.fifo[group.head]!.holder !== null) leased++;
  for (const group of queue.pausedGroups) {
    const head = group.fifo[group.head];
    if (group.heldBy === null && head?.holder != null && head.expiry! >= now) leased++;
  }
  if (!queue.paused) for (const heap of queue.free) ready += heap.size;
  const soonest = queue.paused ? undefined : queue.locked.peek();
  return {
    queued: queue.queued,
    groups: queue.groups.size,
    ready,
    leased,
    waiting: queue.groups.size - ready - leased - queue.heldCount - blocked,
    dead: queue.dead.size,
    held: queue.heldCount,
    blocked,
    paused: queue.paused,
    pausedGroups: queue.pausedNames.size,
    nextReadyAt: soonest ? soonest.lockedUntil + 1 : null,
  };
}

/** Every group and message, and the dead letters, at clock reading `now` (see Transport.inspect). */
export function inspectOf<E>(queue: MemoryQueue<E>, now: number): TransportSnapshot<E> {
  const groups: GroupSnapshot<E>[] = [];
  for (const group of queue.groups.values()) {
    const messages: MessageSnapshot<E>[] = [];
    const held = group.heldBy !== null;
    const paused = queue.paused || group.paused;
    for (let i = group.head; i < group.fifo.length; i++) messages.push(snapshotOf(group.fifo[i]!, i === group.head, held, paused, now));
    const head = group.fifo[group.head];
    groups.push({
      groupId: group.id,
      priority: group.priority,
      claimOrder: group.claimOrder,
      inFlight: !held && head?.expiry != null && head.expiry >= now,
      heldBy: group.heldBy,
      paused: group.paused,
      messages,
    });
  }
  // An empty held group sorts by its dead letter, which was its head.
  const first = (g: GroupSnapshot<E>) => g.messages[0]?.seq ?? g.heldBy!;
  groups.sort((a, b) => a.claimOrder - b.claimOrder || first(a) - first(b));
  return { now, paused: queue.paused, groups, deadLetters: deadLetters(queue) };
}

function snapshotOf<E>(message: Message<E>, isHead: boolean, held: boolean, paused: boolean, now: number): MessageSnapshot<E> {
  const { seq, groupId, event, attempt, holder, key, lastError } = message;
  if (held) return { seq, groupId, event, state: 'held', attempt, holder: null, expiresAt: null, key, lastError };
  if (paused && !(isHead && holder !== null && message.expiry! >= now)) return { seq, groupId, event, state: 'paused', attempt, holder: null, expiresAt: null, key, lastError };
  if (message.waits > 0) return { seq, groupId, event, state: 'blocked', attempt, holder: null, expiresAt: null, key, lastError };
  const state = isHead ? headState(holder, message.expiry, attempt, now) : waitingState(message.notBefore, now);
  const expiry = isHead ? message.expiry : message.notBefore;
  return { seq, groupId, event, state, attempt, holder, expiresAt: state === 'ready' ? null : expiry, key, lastError };
}
