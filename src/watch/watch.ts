/**
 * `watchQueue()`: a transport's counts (and, opt-in, its whole snapshot) kept current for a UI,
 * with no framework. The shape is React's `useSyncExternalStore` contract (`subscribe`,
 * `getSnapshot` returning the same object until something changed), which Vue's `shallowRef`,
 * Svelte stores and plain DOM code adapt in a line.
 *
 * When it reads: at the first subscription, after each change notice, when the earliest lease,
 * park or delay runs out (`stats().nextReadyAt`: time passing raises no notice), and every
 * `pollMs` if asked. Reads are coalesced: at most one in flight; notices that arrive meanwhile
 * cause exactly one more read after it; nothing is read while nothing changed. A claim or a
 * change in a process whose notices do not reach this one raises no notice here: `pollMs`
 * covers those.
 *
 * Status in words (`queueStatus`, `groupStatus`, `syncState`: pending, sending, retrying, held,
 * blocked, paused, dead, delivered; offline from a consumer) is computed from a snapshot of a
 * watch made with `inspect: true`, on demand: a watch nobody asks for status reads nothing more.
 * `watchGroup()` keeps one record's status current by reading that group alone
 * (`inspectGroup()`), at the cost of what the group holds rather than the queue.
 *
 * Its own entry, `leasehold/watch`, so the core entry carries no UI code.
 */
import { checkDuration, checkId, checkOptions } from '../validate.js';
import { hostScheduler } from '../worker/host.js';
import type { Scheduler } from '../worker/types.js';
import { isChangeNotifier, type GroupInspection, type Transport, type TransportSnapshot, type TransportStats } from '../transport/contract.js';
import { groupStatusOf, type GroupStatus } from './status.js';

// Status words for a page, read from a watch's snapshot (see status.ts).
export { GROUP_STATES, groupStatus, groupStatusOf, queueStatus, syncState } from './status.js';
export type { GroupState, GroupStatus, HeldBy, QueueStatus, SyncState, SyncStatus } from './status.js';
export type { GroupInspection, MessageWindow } from '../transport/contract.js';
export type { ConsumerState, ConsumerStatus } from '../consume/types.js';

/** Options of {@link watchQueue}. */
export interface WatchOptions {
  /** Also read `inspect()` on each change (every message and dead letter: heavier than `stats()`). Default false. */
  inspect?: boolean;
  /**
   * Read again this often (ms, > 0) while subscribed, whether or not a notice came: for changes
   * no notice announces (claims, or another process's writes on a transport whose notices do not
   * cross processes). Default: none when the transport has `onChange`, 2000 when it has not.
   */
  pollMs?: number;
  /** The clock `stats().nextReadyAt` is compared with, to read when the next hold runs out. Default `Date.now`. */
  clock?: () => number;
  /** Timers for polls and hold ends. Default `globalThis.setTimeout`. */
  scheduler?: Scheduler;
}

/** What a {@link QueueWatch} holds after a read. */
export interface QueueState<E = unknown> {
  /** The counts of the latest successful read; null only while no read has succeeded (never a made-up zero). */
  readonly stats: TransportStats | null;
  /** The latest `inspect()` snapshot, when the watch was made with `inspect: true`; else null. */
  readonly snapshot: TransportSnapshot<E> | null;
  /** The error of the latest read if it failed (the counts above are then the last good ones); else null. */
  readonly error: unknown;
}

/** A live view of one transport; see {@link watchQueue}. Its methods may be passed detached (`useSyncExternalStore(watch.subscribe, watch.getSnapshot)`). */
export interface QueueWatch<E = unknown> {
  /**
   * Calls `listener` after each read that changed what {@link getSnapshot} returns. The first
   * subscriber starts the reads (one at once) and the last one to leave stops them. Returns the
   * unsubscribe. @throws TypeError if `listener` is not a function.
   */
  subscribe(listener: () => void): () => void;
  /** The latest state: the same object until a read finds something different; undefined before the first read. */
  getSnapshot(): QueueState<E> | undefined;
  /** Asks for a read now (after an action of this page that raises no notice, say a claim); coalesced like a notice. */
  refresh(): void;
  /** Stops reading and drops every listener. Idempotent. */
  close(): void;
}

/**
 * Watches `transport` (see the module comment for when it reads). Nothing is read until the
 * first `subscribe`.
 * @throws TypeError / RangeError for a transport without `stats`/`inspect` or bad options.
 */
export function watchQueue<E = unknown>(transport: Transport<E>, options: WatchOptions = {}): QueueWatch<E> {
  if (typeof transport !== 'object' || transport === null || typeof transport.stats !== 'function' || typeof transport.inspect !== 'function') {
    throw new TypeError('transport must be a leasehold Transport (with stats() and inspect())');
  }
  checkOptions('options', options, ['inspect', 'pollMs', 'clock', 'scheduler']);
  if (options.inspect !== undefined && typeof options.inspect !== 'boolean') throw new TypeError('options.inspect must be a boolean');
  const inspect = options.inspect ?? false;
  return new Watch<QueueState<E>>(transport, settingsOf(transport, options), {
    async read() {
      // inspect() and stats() are two reads: a change between them shows in the next read.
      const snapshot = inspect ? await transport.inspect() : null;
      const stats = await transport.stats();
      return { stats, snapshot, error: null };
    },
    failed: (last, error) => (last ? { ...last, error } : { stats: null, snapshot: null, error }),
    // A snapshot's `now` moves on every read; what it shows is the rest.
    fingerprint: (state) => JSON.stringify([state.stats, state.snapshot?.groups, state.snapshot?.deadLetters, errorText(state.error)]),
    due: (state) => state.stats?.nextReadyAt ?? null,
  });
}

/** What a {@link GroupWatch} holds after a read. */
export interface GroupWatchState<E = unknown> {
  /** The latest successful `inspectGroup()` read; null only while no read has succeeded. */
  readonly inspection: GroupInspection<E> | null;
  /** Its status in words ({@link groupStatusOf}); null only while no read has succeeded (never a made-up `delivered`). */
  readonly status: GroupStatus | null;
  /** The error of the latest read if it failed (the fields above are then the last good ones); else null. */
  readonly error: unknown;
}

/** A live view of one group of a transport; see {@link watchGroup}. Its methods may be passed detached. */
export interface GroupWatch<E = unknown> {
  /** As {@link QueueWatch.subscribe}. @throws TypeError if `listener` is not a function. */
  subscribe(listener: () => void): () => void;
  /** The latest state: the same object until a read finds something different; undefined before the first read. */
  getSnapshot(): GroupWatchState<E> | undefined;
  /** Asks for a read now; coalesced like a notice. */
  refresh(): void;
  /** Stops reading and drops every listener. Idempotent. */
  close(): void;
}

/**
 * Watches one group (a record) of `transport` with `inspectGroup()`: the same reads as
 * {@link watchQueue} (at the first subscription, after each change notice, when the group's
 * head is next due — a lease, park, delay or coalescing window running out — and every `pollMs`
 * if asked), each costing what the group holds rather than what the queue holds. Nothing is
 * read until the first `subscribe`.
 * @throws TypeError / RangeError for a transport without `inspectGroup`, a `groupId` that is not
 * a non-empty string, or bad options (`inspect` is not one of them).
 */
export function watchGroup<E = unknown>(transport: Transport<E>, groupId: string, options: Omit<WatchOptions, 'inspect'> = {}): GroupWatch<E> {
  if (typeof transport !== 'object' || transport === null || typeof transport.inspectGroup !== 'function') {
    throw new TypeError('transport must be a leasehold Transport (with inspectGroup())');
  }
  checkId('groupId', groupId);
  checkOptions('options', options, ['pollMs', 'clock', 'scheduler']);
  return new Watch<GroupWatchState<E>>(transport, settingsOf(transport, options), {
    async read() {
      const inspection = await transport.inspectGroup(groupId);
      return { inspection, status: groupStatusOf(inspection), error: null };
    },
    failed: (last, error) => (last ? { ...last, error } : { inspection: null, status: null, error }),
    fingerprint: (state) => JSON.stringify([state.inspection?.queuePaused, state.inspection?.group, state.inspection?.deadLetters, errorText(state.error)]),
    due: (state) => dueOf(state.inspection),
  });
}

/** When a read of the group would next find its head in another state without a notice: a lease, park, delay or window running out. */
function dueOf(inspection: GroupInspection<unknown> | null): number | null {
  const head = inspection?.group?.messages[0];
  if (!head || head.expiresAt === null || head.state === 'ready' || head.state === 'expired') return null;
  return head.expiresAt + 1;
}

function errorText(error: unknown): string | null {
  return error === null ? null : String(error);
}

function settingsOf(transport: Transport<unknown>, options: Omit<WatchOptions, 'inspect'>): Settings {
  if (options.pollMs !== undefined) checkDuration('options.pollMs', options.pollMs, true);
  if (options.clock !== undefined && typeof options.clock !== 'function') throw new TypeError('options.clock must be a function returning milliseconds');
  if (options.scheduler !== undefined && (typeof options.scheduler?.setTimeout !== 'function' || typeof options.scheduler.clearTimeout !== 'function')) {
    throw new TypeError('options.scheduler must have setTimeout and clearTimeout');
  }
  return {
    pollMs: options.pollMs ?? (isChangeNotifier(transport) ? null : 2000),
    clock: options.clock ?? Date.now,
    scheduler: options.scheduler ?? hostScheduler(),
  };
}

interface Settings {
  pollMs: number | null;
  clock: () => number;
  scheduler: Scheduler;
}

/** What a watch reads and how it tells news from a repeat. */
interface Reader<S> {
  read(): Promise<S>;
  /** The state after a failed read: the last good one with the error, or one with nothing. */
  failed(last: S | undefined, error: unknown): S;
  /** What the state shows, as text: a read that gives the same text is no news. */
  fingerprint(state: S): string;
  /** When time alone would change what a read finds (no notice announces it), or null. */
  due(state: S): number | null;
}

class Watch<S> {
  readonly #transport: Transport<unknown>;
  readonly #settings: Settings;
  readonly #reader: Reader<S>;
  readonly #listeners = new Set<() => void>();
  #state: S | undefined;
  /** What the current state was made from, to tell a read that found nothing new. */
  #fingerprint = '';
  #reading = false;
  /** A change arrived since the current read began: read once more when it ends. */
  #dirty = false;
  #unlisten: (() => void) | null = null;
  #timer: unknown = null;
  /** The due time the last schedule saw. */
  #lastDue: number | null = null;
  #closed = false;

  constructor(transport: Transport<unknown>, settings: Settings, reader: Reader<S>) {
    this.#transport = transport;
    this.#settings = settings;
    this.#reader = reader;
    // Stable and detachable: React resubscribes whenever the subscribe function changes.
    this.subscribe = this.subscribe.bind(this);
    this.getSnapshot = this.getSnapshot.bind(this);
    this.refresh = this.refresh.bind(this);
  }

  subscribe(listener: () => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const entry = () => listener();
    this.#listeners.add(entry);
    if (this.#listeners.size === 1 && !this.#closed) this.#start();
    return () => {
      if (this.#listeners.delete(entry) && this.#listeners.size === 0) this.#stop();
    };
  }

  getSnapshot(): S | undefined {
    return this.#state;
  }

  refresh(): void {
    if (this.#closed || this.#listeners.size === 0) return;
    if (this.#reading) this.#dirty = true;
    else void this.#read();
  }

  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#stop();
  }

  #start(): void {
    const transport = this.#transport;
    if (isChangeNotifier(transport)) this.#unlisten = transport.onChange(() => this.refresh());
    this.refresh();
  }

  #stop(): void {
    this.#unlisten?.();
    this.#unlisten = null;
    this.#clearTimer();
  }

  async #read(): Promise<void> {
    this.#reading = true;
    this.#dirty = false;
    this.#clearTimer();
    let next: S;
    try {
      next = await this.#reader.read();
    } catch (error) {
      next = this.#reader.failed(this.#state, error);
    }
    this.#reading = false;
    if (this.#listeners.size === 0 || this.#closed) return;
    this.#publish(next);
    if (this.#dirty) void this.#read();
    else this.#schedule(this.#reader.due(next));
  }

  /** Replaces the state only when it differs, so a subscriber re-renders only for news. */
  #publish(next: S): void {
    const fingerprint = this.#reader.fingerprint(next);
    if (fingerprint === this.#fingerprint && this.#state) return;
    this.#fingerprint = fingerprint;
    this.#state = next;
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (error) {
        void Promise.reject(error);
      }
    }
  }

  /** The next read no notice will announce: the earliest hold's end, or the next poll. */
  #schedule(due: number | null): void {
    let wait = this.#settings.pollMs ?? Infinity;
    // A hold end already past that a read has seen once is stale (another clock, a skewed
    // server): reading again at once would find it again, forever. The poll, if any, covers it.
    const fresh = due !== null && (due > this.#settings.clock() || due !== this.#lastDue);
    if (due !== null && fresh) wait = Math.min(wait, Math.max(0, due - this.#settings.clock()));
    this.#lastDue = due;
    if (wait === Infinity) return;
    this.#timer = this.#settings.scheduler.setTimeout(() => {
      this.#timer = null;
      this.refresh();
    }, wait);
  }

  #clearTimer(): void {
    if (this.#timer === null) return;
    this.#settings.scheduler.clearTimeout(this.#timer);
    this.#timer = null;
  }
}
