/**
 * What the in-memory transport reports of itself: `stats()` counted from the heaps and sets the
 * queue keeps anyway (no pass over the messages), and `inspect()`'s full picture. Apart from the
 * queue's state because they only read it (but for the lapsed leases `stats()` first releases,
 * as a claim would), and every message state they name is the contract's, not the heaps'.
 * @internal
 */
import { NO_DEADLINE } from '../../locks.js';
import { headState, waitingState } from '../shared.js';
import type { GroupInspection, GroupSnapshot, MessageSnapshot, MessageWindow, TransportSnapshot, TransportStats } from '../contract.js';
import { deadLetters } from './dead.js';
import type { Group, MemoryQueue, Message } from './queue.js';

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
  const named = queue.after.named();
  const groups = [...queue.groups.values()].map((group) => groupOf(queue, group, named, now));
  // An empty held group sorts by its dead letter, which was its head.
  const first = (g: GroupSnapshot<E>) => g.messages[0]?.seq ?? g.heldBy!;
  groups.sort((a, b) => a.claimOrder - b.claimOrder || first(a) - first(b));
  return { now, paused: queue.paused, groups, deadLetters: deadLetters(queue) };
}

/** Group `groupId` at clock reading `now` (see Transport.inspectGroup). */
export function inspectGroupOf<E>(queue: MemoryQueue<E>, groupId: string, now: number): GroupInspection<E> {
  const group = queue.groups.get(groupId);
  return {
    groupId,
    now,
    queuePaused: queue.paused,
    group: group ? groupOf(queue, group, queue.after.named(), now) : null,
    deadLetters: deadLetters(queue).filter((letter) => letter.groupId === groupId),
  };
}

function groupOf<E>(queue: MemoryQueue<E>, group: Group<E>, named: Map<Message<E>, number[]>, now: number): GroupSnapshot<E> {
  const messages: MessageSnapshot<E>[] = [];
  const held = group.heldBy !== null;
  const paused = queue.paused || group.paused;
  for (let i = group.head; i < group.fifo.length; i++) {
    const message = group.fifo[i]!;
    messages.push(snapshotOf(message, i === group.head, held, paused, named.get(message) ?? [], now));
  }
  const head = group.fifo[group.head];
  return {
    groupId: group.id,
    priority: group.priority,
    claimOrder: group.claimOrder,
    inFlight: !held && head?.expiry != null && head.expiry >= now,
    heldBy: group.heldBy,
    paused: group.paused,
    messages,
  };
}

/** A message's running coalescing window: it has a bound and has not reached its wait's end. */
function windowOf(message: Message<unknown>, now: number): MessageWindow | null {
  if (message.deadline === null || message.notBefore === null || message.notBefore < now) return null;
  return { endsAt: message.notBefore, latestEndAt: message.deadline === NO_DEADLINE ? null : message.deadline };
}

function snapshotOf<E>(message: Message<E>, isHead: boolean, held: boolean, paused: boolean, waitsFor: number[], now: number): MessageSnapshot<E> {
  const { seq, groupId, event, attempt, holder, key, lastError } = message;
  const window = windowOf(message, now);
  if (held) return { seq, groupId, event, state: 'held', attempt, holder: null, expiresAt: null, key, lastError, waitsFor, window };
  if (paused && !(isHead && holder !== null && message.expiry! >= now)) return { seq, groupId, event, state: 'paused', attempt, holder: null, expiresAt: null, key, lastError, waitsFor, window };
  if (message.waits > 0) return { seq, groupId, event, state: 'blocked', attempt, holder: null, expiresAt: null, key, lastError, waitsFor, window };
  const state = isHead ? headState(holder, message.expiry, attempt, now) : waitingState(message.notBefore, now);
  const expiry = isHead ? message.expiry : message.notBefore;
  return { seq, groupId, event, state, attempt, holder, expiresAt: state === 'ready' ? null : expiry, key, lastError, waitsFor, window };
}
