/**
 * leasehold/react: hooks that show a queue in React components, on {@link watchQueue}: counts,
 * messages, dead letters, and status in words (`useSyncStatus`, `useGroupStatus`). Every
 * hook of one transport shares one watch (a count hook shares the cheap `stats()` reads; a hook
 * that needs messages shares one `inspect()` watch), so ten components showing "3 pending" cost
 * one read per change. React (18 or later: `useSyncExternalStore`) is the app's own, an
 * optional peer of leasehold.
 */
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import type { ConsumerStatus } from '../consume/types.js';
import type { DeadLetter, MessageSnapshot, Removed, RemoveOptions, Transport, TransportStats } from '../transport/contract.js';
import { type GroupStatus, type GroupWatch, queueStatus, type QueueState, type QueueWatch, syncState, type SyncStatus, watchGroup, watchQueue } from '../watch/watch.js';

export type { ConsumerState, ConsumerStatus, GroupState, GroupStatus, GroupWatch, GroupWatchState, HeldBy, QueueState, QueueStatus, QueueWatch, SyncState, SyncStatus, WatchOptions } from '../watch/watch.js';

/** One watch per transport and kind (and per group), made at first use and idle (no reads) while no component shows it. */
const watches = new WeakMap<object, { counts?: QueueWatch<unknown>; full?: QueueWatch<unknown>; groups?: Map<string, GroupWatch<unknown>> }>();

/**
 * The shared watch of `transport`: `inspect` false gives the counts-only watch, true the one
 * that also reads snapshots. Components may call it to `refresh()` after an action.
 * @throws TypeError if `transport` is not a leasehold Transport.
 */
export function sharedWatch<E>(transport: Transport<E>, inspect: boolean): QueueWatch<E> {
  if (typeof transport !== 'object' || transport === null) throw new TypeError('transport must be a leasehold Transport');
  let entry = watches.get(transport);
  if (!entry) watches.set(transport, (entry = {}));
  const key = inspect ? 'full' : 'counts';
  // watchQueue checks the transport's shape and throws a TypeError naming it.
  entry[key] ??= watchQueue(transport as Transport<unknown>, { inspect, pollMs: inspect ? 1_000 : undefined });
  return entry[key] as QueueWatch<E>;
}

function useWatch<E, T>(transport: Transport<E>, inspect: boolean, select: (state: QueueState<E> | undefined) => T): T {
  const watch = sharedWatch(transport, inspect);
  return useSyncExternalStore(watch.subscribe, () => select(watch.getSnapshot()));
}

const noConsumer = (): (() => void) => () => {};
const noStatus = (): null => null;

/**
 * Where the page's delivery stands, in one word and in detail: the queue's {@link QueueStatus}
 * (from the shared snapshot watch) and, given the page's `consumer`, its status, combined by
 * `syncState` (the consumer's `offline` or `retrying` first, then the queue's `retrying`,
 * `held`, `dead`, `paused`, `sending`, `pending`, `delivered`). `queue` is null until the first
 * read, and `state` too unless the consumer is offline or retrying: never a made-up "delivered".
 * The same object until the consumer's status or the queue's snapshot changes.
 * @throws TypeError if `transport` is not a leasehold Transport, or `consumer` is given and has no `subscribe`.
 */
export function useSyncStatus(transport: Transport, consumer?: { readonly status: ConsumerStatus; subscribe(listener: () => void): () => void }): SyncStatus {
  if (consumer !== undefined && (typeof consumer !== 'object' || consumer === null || typeof consumer.subscribe !== 'function')) {
    throw new TypeError('consumer must be what consume() returns');
  }
  const own = useSyncExternalStore(consumer ? consumer.subscribe : noConsumer, consumer ? () => consumer.status : noStatus);
  // queueStatus gives one object per snapshot, and the watch keeps its snapshot until it changes.
  const queue = useWatch(transport, true, (state) => (state?.snapshot ? queueStatus(state.snapshot) : null));
  return useMemo(() => ({ state: syncState(queue, own), queue, consumer: own }), [queue, own]);
}

/**
 * The status of one group (a record): `pending` (with its coalescing `window` while it is being
 * edited), `sending`, `retrying` (with `nextTryAt` and `lastError`), `held` (with the dead letter
 * and its reason), `blocked` (with the seqs it waits for), `paused`, `dead` or `delivered` —
 * never `delivered` while a dead letter of the group remains, or while a hold remains after its
 * last message. Read with `inspectGroup()` (see {@link sharedGroupWatch}), so it costs what the
 * group holds, not the whole queue. Null until the first read. The same object until the
 * group's status changes.
 * @throws TypeError if `transport` is not a leasehold Transport or `groupId` not a string.
 */
export function useGroupStatus(transport: Transport, groupId: string): GroupStatus | null {
  if (typeof groupId !== 'string') throw new TypeError('groupId must be a string');
  const watch = sharedGroupWatch(transport, groupId);
  // groupStatusOf gives one object per read, and the watch keeps its read until the group changes.
  return useSyncExternalStore(watch.subscribe, () => watch.getSnapshot()?.status ?? null);
}

/**
 * The shared watch of one group of `transport` ({@link watchGroup}, polling every second while
 * shown, as the snapshot watch does): what {@link useGroupStatus} reads. Kept for the
 * transport's life, idle while nothing shows the group.
 * @throws TypeError if `transport` is not a leasehold Transport or `groupId` not a non-empty string.
 */
export function sharedGroupWatch<E>(transport: Transport<E>, groupId: string): GroupWatch<E> {
  if (typeof transport !== 'object' || transport === null) throw new TypeError('transport must be a leasehold Transport');
  let entry = watches.get(transport);
  if (!entry) watches.set(transport, (entry = {}));
  const groups = (entry.groups ??= new Map());
  let watch = groups.get(groupId);
  // watchGroup checks the transport and the id, and throws naming them.
  if (!watch) groups.set(groupId, (watch = watchGroup(transport as Transport<unknown>, groupId, { pollMs: 1_000 })));
  return watch as GroupWatch<E>;
}

/**
 * The queue's counts (`stats()`), current after every change notice; null until the first read.
 * @throws TypeError if `transport` is not a leasehold Transport.
 */
export function useQueueStats(transport: Transport): TransportStats | null {
  return useWatch(transport, false, (state) => state?.stats ?? null);
}

/**
 * How many messages are pending: in the whole queue (`stats().queued`: ready, leased, parked or
 * delayed), or in `groupId` alone when given (read from snapshots). Null until the first read,
 * so "loading" is never shown as "nothing pending". Dead letters are not pending: see
 * {@link useDeadLetters}.
 * @throws TypeError if `transport` is not a Transport or `groupId` is given and not a string.
 */
export function usePendingCount(transport: Transport, groupId?: string): number | null {
  if (groupId !== undefined && typeof groupId !== 'string') throw new TypeError('groupId must be a string');
  return useWatch(transport, groupId !== undefined, (state) => {
    if (groupId === undefined) return state?.stats?.queued ?? null;
    const snapshot = state?.snapshot;
    if (!snapshot) return null;
    return snapshot.groups.find((group) => group.groupId === groupId)?.messages.length ?? 0;
  });
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * The messages still queued in `groupId`, oldest first, each with its state (ready, leased,
 * parked, delayed…), attempt and event: the same array until they change. Empty until the first read.
 * @throws TypeError if `transport` is not a Transport or `groupId` not a string.
 */
export function useGroupMessages<E>(transport: Transport<E>, groupId: string): readonly MessageSnapshot<E>[] {
  if (typeof groupId !== 'string') throw new TypeError('groupId must be a string');
  return useWatch(transport, true, (state) => state?.snapshot?.groups.find((group) => group.groupId === groupId)?.messages ?? NONE);
}

/** What {@link useDeadLetters} returns. */
export interface DeadLettersControl<E> {
  /** The dead letters, in the order they died; the same array until they change. */
  readonly deadLetters: readonly DeadLetter<E>[];
  /** Puts one back in its group (`transport.redrive`); resolves to its seq, rejects as redrive does. */
  redrive(seq: number): Promise<number>;
  /**
   * Deletes one for good (`transport.discard`), with what depends on it when `options` says
   * `dependents: true`; resolves to what was removed, rejects as discard does.
   */
  discard(seq: number, options?: RemoveOptions): Promise<Removed>;
}

/**
 * The dead letters, with redrive and discard that refresh every component watching the queue.
 * @throws TypeError if `transport` is not a leasehold Transport.
 */
export function useDeadLetters<E>(transport: Transport<E>): DeadLettersControl<E> {
  const deadLetters = useWatch(transport, true, (state) => state?.snapshot?.deadLetters ?? NONE);
  const redrive = useCallback((seq: number) => transport.redrive(seq).finally(() => refreshAll(transport)), [transport]);
  const discard = useCallback((seq: number, options?: RemoveOptions) => transport.discard(seq, options).finally(() => refreshAll(transport)), [transport]);
  return useMemo(() => ({ deadLetters, redrive, discard }), [deadLetters, redrive, discard]);
}

/** After an action: a transport without change notices would otherwise show it only at the next poll. */
function refreshAll(transport: object): void {
  const entry = watches.get(transport);
  entry?.counts?.refresh();
  entry?.full?.refresh();
  for (const watch of entry?.groups?.values() ?? []) watch.refresh();
}
