/**
 * Status words for a page: what each group of a queue is waiting for, and what the queue as a
 * whole shows, read from one `inspect()` snapshot (no read of its own). The words are the
 * project's one vocabulary, the same in the docs and the hooks: a group is `pending`, `sending`,
 * `retrying`, `held`, `blocked`, `paused`, `dead` or `delivered`; a consumer adds `offline`.
 *
 * Computed on demand and kept per snapshot, so asking twice of one snapshot costs nothing and
 * gives the same object (what `useSyncExternalStore` needs).
 */
import type { ConsumerStatus } from '../consume/types.js';
import type { DeadLetter, GroupInspection, GroupSnapshot, MessageWindow, TransportSnapshot } from '../transport/contract.js';

/**
 * What one group is waiting for (the state of its head message, in a page's words):
 * - `pending`: queued and waiting its turn, or ready (also a head delayed by `delayMs`, or one
 *   whose retry time has come: see `lastError`);
 * - `sending`: its head is under a live lease (a handler has it);
 * - `retrying`: its head was given back with a delay (a `RetryLaterError`'s release, a failed
 *   handler's nack) and has a reason (`lastError`), and is not due yet: see `nextTryAt`;
 * - `held`: it is held at a dead letter (`onDeadLetter: 'hold'`): see `heldBy`; nothing more is
 *   delivered until that dead letter is redriven or discarded;
 * - `blocked`: its head waits for messages it names in `after`;
 * - `paused`: its group or the whole queue is paused;
 * - `dead`: nothing is queued, but dead letters of the group remain (queues with
 *   `onDeadLetter: 'continue'`): something it sent was refused or ran out of attempts;
 * - `delivered`: nothing queued and no dead letter: everything it had was acked (or cancelled).
 *
 * Never `delivered` while a dead letter of the group remains, so a page never shows "all sent"
 * for a record whose change was refused. The union may gain words in a minor release; show an
 * unknown one as `pending`.
 */
export type GroupState = 'pending' | 'sending' | 'retrying' | 'held' | 'blocked' | 'paused' | 'dead' | 'delivered';

/** All the group states, for code that iterates over them (legends, counters). */
export const GROUP_STATES: readonly GroupState[] = Object.freeze(['pending', 'sending', 'retrying', 'held', 'blocked', 'paused', 'dead', 'delivered']);

/** The dead letter holding a group, with why. */
export interface HeldBy {
  readonly groupId: string;
  /** The dead letter's seq: what `redrive` and `discard` take. */
  readonly seq: number;
  /** Its reason (a `RejectError`'s, the last nack's…), or null. */
  readonly reason: string | null;
}

/** One group's status, from {@link groupStatus}. Times are the transport's clock. */
export interface GroupStatus {
  readonly groupId: string;
  readonly state: GroupState;
  /** Messages queued in the group (ready, leased, waiting, held behind a dead letter…). */
  readonly queued: number;
  /** Dead letters of the group (the one holding it included). */
  readonly deadLetters: number;
  /**
   * `retrying`: when its head is due again (the park's end + 1, by the inclusive rule); also
   * for a `pending` head delayed by `delayMs`, when it is due. Null otherwise.
   */
  readonly nextTryAt: number | null;
  /**
   * The head's `lastError` (the reason of its last nack or release that gave one: a
   * `RetryLaterError`'s message, a failed handler's) in any state but `held`, `dead` and
   * `delivered`; null when it has none.
   */
  readonly lastError: string | null;
  /** `held`: the dead letter holding it; null otherwise. */
  readonly heldBy: HeldBy | null;
  /**
   * `blocked`: the seqs its head waits for through `after` (queued messages, or dead letters,
   * which block until redriven or discarded), ascending; [] otherwise.
   */
  readonly blockedBy: readonly number[];
  /**
   * The head's running coalescing window (`debounceMs`): the record is still being edited and
   * its change waits until `endsAt` (never past `latestEndAt`); its state reads `pending`. Null
   * when none runs.
   */
  readonly window: MessageWindow | null;
}

/**
 * One word for a whole queue (and, with a consumer, its delivery): the first that applies of
 * - `offline` / `retrying`: the consumer's latest `RetryLaterError` (see `ConsumerStatus`), or
 *   (`retrying`) a group is retrying;
 * - `held`: a group is held at a dead letter;
 * - `dead`: dead letters remain that hold nothing (`onDeadLetter: 'continue'`);
 * - `paused`: the queue is paused, or every group with messages is;
 * - `sending`: a group's head is under a lease;
 * - `pending`: messages are queued (waiting, ready, delayed or blocked);
 * - `delivered`: nothing queued and no dead letter.
 * The union may gain words in a minor release; show an unknown one as `pending`.
 */
export type SyncState = 'offline' | 'retrying' | 'held' | 'dead' | 'paused' | 'sending' | 'pending' | 'delivered';

/** A queue's status, from {@link queueStatus}: the same object for the same snapshot. */
export interface QueueStatus {
  /** The snapshot's clock reading (the transport's clock). */
  readonly now: number;
  /** The queue's word (see {@link SyncState}); never `offline`, which only a consumer knows. */
  readonly state: Exclude<SyncState, 'offline'>;
  /** Groups in each state (`delivered` counts nothing: a delivered group is not in the queue). */
  readonly counts: Readonly<Record<Exclude<GroupState, 'delivered'>, number>>;
  /** Messages queued. */
  readonly queued: number;
  /** Dead letters, holding their group or not. */
  readonly deadLetters: number;
  /** The held groups, each with the dead letter holding it, in the snapshot's group order. */
  readonly held: readonly HeldBy[];
  /** The earliest `nextTryAt` of a retrying group, or null when none is retrying. */
  readonly nextTryAt: number | null;
  /** The `lastError` of that group (the one due first), or null. */
  readonly lastError: string | null;
  /** Every group with messages or a hold, in the snapshot's order (claim order). */
  readonly groups: readonly GroupStatus[];
}

/** What a page shows for its delivery: {@link syncStatus}. */
export interface SyncStatus {
  /**
   * The one word ({@link syncState}); null until the queue's first read (never a made-up
   * `delivered`), unless the consumer already knows it is offline or retrying.
   */
  readonly state: SyncState | null;
  /** The queue's status, or null until the first read. */
  readonly queue: QueueStatus | null;
  /** The consumer's status, when a consumer was given; else null. */
  readonly consumer: ConsumerStatus | null;
}

/** A status per snapshot: the same snapshot gives the same object, and reads nothing again. */
const computed = new WeakMap<TransportSnapshot<unknown>, { status: QueueStatus; byGroup: Map<string, GroupStatus> }>();

function statusOf(group: GroupSnapshot<unknown>, allDeadLetters: readonly DeadLetter<unknown>[]): GroupStatus {
  const { groupId, messages } = group;
  const deadLetters = allDeadLetters.filter((letter) => letter.groupId === groupId);
  const base = { groupId, queued: messages.length, deadLetters: deadLetters.length, nextTryAt: null, lastError: null, heldBy: null, blockedBy: NONE, window: null };
  if (group.heldBy !== null) {
    const reason = deadLetters.find((letter) => letter.seq === group.heldBy)?.reason ?? null;
    return Object.freeze({ ...base, state: 'held', heldBy: Object.freeze({ groupId, seq: group.heldBy, reason }) });
  }
  const head = messages[0];
  if (!head) return Object.freeze({ ...base, state: deadLetters.length > 0 ? 'dead' : 'delivered' });
  const lastError = head.lastError;
  // Older snapshots (a remote host of an earlier leasehold) carry neither field.
  const window = head.window ? Object.freeze({ ...head.window }) : null;
  switch (head.state) {
    case 'leased':
      return Object.freeze({ ...base, state: 'sending', lastError });
    case 'parked':
    case 'delayed':
      // Waiting its time after a try that gave a reason: a retry (a release of a first delivery
      // reads as a delay, having spent no attempt). Without one it is a hold for its own sake
      // (`delayMs`, a coalescing window, a suspended execution), not a retry.
      return Object.freeze({ ...base, state: lastError === null ? 'pending' : 'retrying', nextTryAt: head.expiresAt! + 1, lastError, window });
    case 'blocked':
      return Object.freeze({ ...base, state: 'blocked', lastError, blockedBy: Object.freeze([...(head.waitsFor ?? [])]), window });
    case 'paused':
      return Object.freeze({ ...base, state: 'paused', lastError, window });
    case 'held':
      // A hold always names its dead letter (heldBy, above); kept for a snapshot that does not.
      return Object.freeze({ ...base, state: 'held', lastError });
    default:
      // ready, or expired (its lease ran out: the next claim takes it)
      return Object.freeze({ ...base, state: 'pending', lastError });
  }
}

const NONE: readonly number[] = Object.freeze([]);

function compute<E>(snapshot: TransportSnapshot<E>): { status: QueueStatus; byGroup: Map<string, GroupStatus> } {
  const counts = { pending: 0, sending: 0, retrying: 0, held: 0, blocked: 0, paused: 0, dead: 0 };
  const byGroup = new Map<string, GroupStatus>();
  const held: HeldBy[] = [];
  let queued = 0;
  let due: GroupStatus | null = null;
  for (const group of snapshot.groups as GroupSnapshot<unknown>[]) {
    const status = statusOf(group, snapshot.deadLetters as DeadLetter<unknown>[]);
    byGroup.set(group.groupId, status);
    queued += status.queued;
    if (status.state !== 'delivered') counts[status.state] += 1;
    if (status.heldBy) held.push(status.heldBy);
    if (status.state === 'retrying' && (due === null || status.nextTryAt! < due.nextTryAt!)) due = status;
  }
  // Groups whose dead letters outlived their messages (no hold): not delivered.
  for (const letter of snapshot.deadLetters) {
    if (byGroup.has(letter.groupId)) continue;
    const status = statusOf({ groupId: letter.groupId, priority: letter.priority, claimOrder: 0, inFlight: false, heldBy: null, paused: false, messages: [] }, snapshot.deadLetters as DeadLetter<unknown>[]);
    byGroup.set(letter.groupId, status);
    counts.dead += 1;
  }
  const deadLetters = snapshot.deadLetters.length;
  const waiting = snapshot.groups.length - counts.held;
  const state: QueueStatus['state'] =
    counts.retrying > 0
      ? 'retrying'
      : counts.held > 0
        ? 'held'
        : deadLetters > 0
          ? 'dead'
          : snapshot.paused || (waiting > 0 && counts.paused === waiting)
            ? 'paused'
            : counts.sending > 0
              ? 'sending'
              : queued > 0
                ? 'pending'
                : 'delivered';
  const status: QueueStatus = Object.freeze({
    now: snapshot.now,
    state,
    counts: Object.freeze(counts),
    queued,
    deadLetters,
    held: Object.freeze(held),
    nextTryAt: due?.nextTryAt ?? null,
    lastError: due?.lastError ?? null,
    groups: Object.freeze([...byGroup.values()]),
  });
  return { status, byGroup };
}

function entry<E>(snapshot: TransportSnapshot<E>): { status: QueueStatus; byGroup: Map<string, GroupStatus> } {
  if (typeof snapshot !== 'object' || snapshot === null || !Array.isArray(snapshot.groups) || !Array.isArray(snapshot.deadLetters)) {
    throw new TypeError('snapshot must be a TransportSnapshot (from inspect())');
  }
  const key = snapshot as TransportSnapshot<unknown>;
  let found = computed.get(key);
  if (!found) computed.set(key, (found = compute(snapshot)));
  return found;
}

/**
 * The status of a queue, from one `inspect()` snapshot (a watch made with `inspect: true` keeps
 * one current): each group's {@link GroupStatus}, counts per state, the held groups with their
 * reasons, the earliest next try. Reads nothing; the same snapshot gives the same object.
 * @throws TypeError if `snapshot` is not a TransportSnapshot.
 */
export function queueStatus<E>(snapshot: TransportSnapshot<E>): QueueStatus {
  return entry(snapshot).status;
}

/**
 * The status of group `groupId` in `snapshot`: `delivered` for a group the queue no longer
 * holds and that left no dead letter (also one it never held: the queue keeps no history).
 * Reads nothing; the same snapshot and group give the same object.
 * @throws TypeError if `snapshot` is not a TransportSnapshot or `groupId` not a string.
 */
export function groupStatus<E>(snapshot: TransportSnapshot<E>, groupId: string): GroupStatus {
  if (typeof groupId !== 'string') throw new TypeError('groupId must be a string');
  const { byGroup } = entry(snapshot);
  let found = byGroup.get(groupId);
  if (!found) byGroup.set(groupId, (found = delivered(groupId)));
  return found;
}

function delivered(groupId: string): GroupStatus {
  return Object.freeze({ groupId, state: 'delivered', queued: 0, deadLetters: 0, nextTryAt: null, lastError: null, heldBy: null, blockedBy: NONE, window: null });
}

/** A status per inspection, as per snapshot. */
const ofInspection = new WeakMap<GroupInspection<unknown>, GroupStatus>();

/**
 * The status of one group from its own read, `transport.inspectGroup(groupId)` (a watch made by
 * {@link watchGroup} keeps one current): the same words and fields as {@link groupStatus} gives
 * from a whole snapshot, at the cost of what the group holds. Reads nothing; the same
 * inspection gives the same object.
 * @throws TypeError if `inspection` is not a GroupInspection.
 */
export function groupStatusOf<E>(inspection: GroupInspection<E>): GroupStatus {
  if (typeof inspection !== 'object' || inspection === null || typeof inspection.groupId !== 'string' || !Array.isArray(inspection.deadLetters) || typeof inspection.group !== 'object') {
    throw new TypeError('inspection must be a GroupInspection (from inspectGroup())');
  }
  const key = inspection as GroupInspection<unknown>;
  let found = ofInspection.get(key);
  if (!found) {
    const { groupId, group, deadLetters } = key;
    found = statusOf(group ?? { groupId, priority: 0, claimOrder: 0, inFlight: false, heldBy: null, paused: false, messages: [] }, deadLetters);
    ofInspection.set(key, found);
  }
  return found;
}

/**
 * The one word a page shows for its delivery ({@link SyncState}), from the queue's status and,
 * when given, the consumer's: the consumer's `offline` or `retrying` comes first (it knows of an
 * outage before any group shows it), then the queue's word. An idle, delivering or stopped
 * consumer adds nothing. Null when the queue was not read yet (`queue` null) and the consumer
 * is neither offline nor retrying.
 */
export function syncState(queue: QueueStatus | null, consumer?: ConsumerStatus | null): SyncState | null {
  if (consumer?.state === 'offline' || consumer?.state === 'retrying') return consumer.state;
  return queue?.state ?? null;
}
