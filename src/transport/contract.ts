/**
 * The transport contract: a durable queue of events, partitioned into groups, delivered under
 * leases. This file is the specification; every backend (in memory, SQLite, the browser host)
 * passes one conformance suite (test/conformance/transport.ts) against it.
 *
 * Terminology
 * - **group**: the unit of exclusivity (usually one execution). At most one message of a group
 *   is in flight at any time, and a group's messages are delivered oldest first (lowest seq).
 * - **seq**: a message's id, increasing with every publish in one database.
 * - **lease**: the right to work on one delivery, `(seq, attempt)`, held by one worker until
 *   `expiresAt`. A claim increments the message's `attempt`, so every delivery has its own lease.
 * - **in flight**: leased or parked with `expiry >= now`. A lease or park has run out when
 *   `expiry < now`; its message is then free again (crash recovery).
 * - **park**: `nack(lease, delay > 0)`; the message stays at its group's head and blocks the
 *   group until the delay has passed, then is delivered again.
 * - **claim order**: a counter that increases with every claim in one database. The next claim
 *   serves the free group claimed least recently; groups never claimed come first of all, ties
 *   broken by their oldest message (round-robin).
 * - **priority**: 0–4, set by the publish that creates a group; a claim with `minPriority`
 *   skips groups below it.
 * - **dead letter**: a message that was delivered `maxAttempts` times (or rejected) and is taken
 *   out of its group instead of being delivered again.
 * - **hold**: with the queue's `onDeadLetter: 'hold'`, a dead letter holds its group: the group
 *   delivers nothing more (publishes into it are still taken) until the dead letter is redriven
 *   (back to the group's head) or discarded.
 * - **release**: `release(lease, delay)` gives a message back like `nack` without spending an
 *   attempt: its next delivery carries the same `attempt`, and `maxAttempts` does not count it.
 * - **delay**: a message published with `delayMs` is not deliverable until that time has passed
 *   (the same inclusive rule as a park); as the head of its group it holds the group meanwhile.
 * - **queue**: a name; the SQL backends keep several independent queues in one database, each
 *   with its own groups, seqs, claim counter, keys and dead letters.
 * - **origin**: a random id a database gets when its tables are created (an in-memory transport
 *   when it is constructed). A database that is deleted and created again is a new origin.
 * - **counter**: a publish's number in its queue and origin: 1, 2, 3… with no gap, given in the
 *   publish's own transaction to each message it creates. What a server checks (see {@link Lease.counter}).
 *
 * Times are milliseconds read from the backend's injected clock (default `Date.now`).
 */

/**
 * The right to work on one delivery of a message. Pass it back to `ack`, `nack` or `extend` of
 * the transport that issued it. A lease names its queue: given to the transport of another named
 * queue (of the same database or not), it is refused with a `RangeError` and nothing changes.
 * It carries no database identity: two databases each with a queue of the same name cannot tell
 * each other's leases apart (each numbers its seqs from 1), so keep leases with their transport.
 */
export interface Lease<E = unknown> {
  /** The message. */
  readonly seq: number;
  /** Its group. */
  readonly groupId: string;
  /** The event as published (in memory: the same object; over SQL: a parsed copy). */
  readonly event: E;
  /** The worker that claimed it. */
  readonly workerId: string;
  /** Which delivery of the message this is: 1 for the first claim. The fencing token. */
  readonly attempt: number;
  /** When the lease runs out, by the backend's clock. */
  readonly expiresAt: number;
  /**
   * The name of the queue that issued it (`'default'` unless named). Every transport sets it and
   * refuses a lease of another queue. Optional in the type so a lease written by hand (a test's,
   * say) without it is still taken as the receiving queue's.
   */
  readonly queue?: string;
  /**
   * The origin of the database that issued the lease: a random id (32 hex digits) made when its
   * tables were created, kept for the database's life. A database that was lost (cleared, evicted)
   * and made again has a new origin, so a server never mistakes its counters for the old ones.
   * Every transport sets it, as it sets `counter` and `lowWater`; optional in the type for
   * leases written by hand. Transports take it back unchecked: it is not part of the fence.
   */
  readonly origin?: string;
  /**
   * The message's number among the messages published into this queue of this origin: the first
   * is 1, and each publish that creates a message takes the next, in its own transaction, so no
   * number is skipped or given twice, whatever the number of publishers: a publish that fails
   * (rolled back) spends none, a `'skip'` duplicate creates no message and spends none, a
   * `'replace'` or `'merge'` that changes a queued message in place keeps that message's number
   * (it is still one intent; its {@link Lease.revision} goes up instead), and one that appends a
   * message (the queued one was under a live lease) takes the next. A redriven dead letter keeps
   * its number; every delivery of a message carries the same one.
   *
   * A server keys what it received by `(origin, queue, counter)`. Messages reach it out of
   * counter order (groups are delivered in parallel; a message may wait, be parked, or wait for
   * `after`), and numbers are missing for good on purpose (a cancel, a discard, a dead letter not
   * redriven, a handler that acks without sending): use {@link Lease.lowWater} to tell those from
   * numbers still to come.
   *
   * A database made by a leasehold that had no counters numbers the messages (and dead letters)
   * there by their seq when it is upgraded, and goes on above them; the numbering is gap-free
   * from the upgrade on.
   */
  readonly counter?: number;
  /**
   * The low-water mark of this queue when the claim was made (for a batch, `claimMany` or
   * `ackAndClaimMany`, when its last claim was made: its leases all carry the same mark): the
   * lowest `counter` of the messages still in the queue (ready, leased, parked, delayed, blocked, paused or held behind a dead letter;
   * this lease's own message included, so `lowWater <= counter`). Every number below it had
   * left the queue for good before this claim: acked (delivered, or acked without sending),
   * cancelled, or dead-lettered — a dead letter is out of the queue, though a `redrive` may still
   * bring it back under its old number. A server that never received a number below the
   * largest `lowWater` it saw from an origin knows that number was not lost with the device: it
   * was removed on purpose. A number at or above it that the server has not received is still
   * to come — or, once the device reports its database lost (`db.lostOrigin` in the browser),
   * lost with it.
   */
  readonly lowWater?: number;
  /**
   * Which content of the message this delivery carries: 0 as published, one more each time a
   * `'replace'` or `'merge'` publish changes its event in place (one whose result equals the
   * queued event, member for member as JSON, changes nothing and keeps the revision). A redriven
   * dead letter keeps its revision, as it keeps its counter. Set by every transport.
   */
  readonly revision?: number;
  /**
   * The name of this delivery's content: `<origin>/<queue>/<counter>/<revision>` (the queue name
   * percent-encoded as by `encodeURIComponent`, so the id is printable ASCII and splits on `/`).
   * Every delivery of the same content carries the same id, across attempts, releases, lease
   * expiries, reloads and redrives; a `'replace'` or `'merge'` that changes the event gives the
   * next delivery a new one. It is the key a server dedupes on (the `Idempotency-Key` that
   * `leasehold/http` sends and `leasehold/receiver` reads): keying on `seq`, `counter` or
   * `attempt` alone would take a merged edit for a repeat of the content before it and drop it.
   * Set by every transport, with `origin`, `counter` and `revision`.
   */
  readonly deliveryId?: string;
}

/** See {@link PublishOptions.onDuplicate}. */
export type DuplicatePolicy = 'skip' | 'replace' | 'merge';

/** Options of {@link Transport.publish}. */
export interface PublishOptions {
  /** 0–4 (integer), default 0. Only the publish that creates the group sets its priority. */
  priority?: number;
  /**
   * Idempotency key: while a message with the same `(groupId, key)` is still queued (ready,
   * leased, parked, delayed or held), a publish with the same key does what `onDuplicate` says
   * instead of appending a second message.
   */
  key?: string;
  /**
   * What a publish whose `key` matches a queued message does (default `'skip'`); only with `key`.
   * - `'skip'`: nothing; it returns the queued message's seq.
   * - `'replace'`: the new event takes the queued one's place: same seq, same place in its group,
   *   same attempts; it returns that seq.
   * - `'merge'`: the new event is applied to the queued one as a JSON Merge Patch (RFC 7396: an
   *   object's members are merged recursively, a `null` member removes one, anything else
   *   replaces the whole): same seq, place and attempts; it returns that seq.
   *
   * A queued message under a live lease (its worker may have sent it already) is never changed:
   * `'replace'` and `'merge'` then append the new event as a new message behind it, the key moves
   * to the new message, and the call returns its seq. A message whose lease ran out, not claimed
   * again, is changed, and its late holder loses the lease (its ack is a `LeaseLostError`), since
   * its work was on the old event. Other options (`priority`, `delayMs`) apply only when a new
   * message is appended.
   */
  onDuplicate?: DuplicatePolicy;
  /**
   * What must be gone before this message is delivered: seqs of this queue, records (`{ group }`),
   * or an array of at most 100 of them. A seq is gone once acked, cancelled, or dead-lettered and
   * then discarded (a dead letter is not gone: it may be redriven, and a redriven message is
   * waited for under its new seq). `{ group: 'note-7' }` names what that group holds when this
   * publish runs, resolved in its transaction — every message queued in it and the dead letter
   * holding it — so an app stores no seqs; a group that holds nothing then is no wait, and what
   * is published to it later is not waited for. Until then the message waits at its group's
   * head as a delayed one would (FIFO and round-robin untouched; `inspect()` shows it
   * `blocked`); what is already gone is satisfied at once. Order across groups: a task created
   * under a note waits for the note's create. Only when a new message is appended (not when
   * `onDuplicate` changes a queued one).
   * @throws RangeError (as a rejected publish, nothing written) for a seq the queue never
   *   issued; TypeError / RangeError for an entry that is neither a positive integer nor
   *   `{ group }` with a valid group id.
   */
  after?: number | AfterGroup | readonly (number | AfterGroup)[];
  /**
   * Hold the message for this many milliseconds (finite, ≥ 0; default 0): it is not deliverable
   * while `now <= publishedAt + delayMs`, exactly as a park of `delayMs` would hold it. FIFO still
   * holds: a delayed head holds its group, and the messages behind it wait; a delayed message
   * behind others, once it becomes the head, still waits out its own delay.
   */
  delayMs?: number;
  /**
   * A coalescing window (finite, ≥ 0; only with `key`): the keyed message is not deliverable
   * until `debounceMs` have passed with no publish of its key — inclusive, as a delay: while
   * `now <= lastPublish + debounceMs`. Each later publish of the key with a window (`'merge'`,
   * `'replace'` or `'skip'`) moves the wait to its own `now + debounceMs`; one without a window
   * changes the event and leaves the wait as it is. A window never shortens a wait the message
   * has already (a delay, a park, a hold, an `after`): the later of the two holds. A message
   * under a live lease is not re-armed; the publish goes behind it as `onDuplicate` says, and a
   * new message opens a new window. The first message of a new key waits
   * `max(delayMs, debounceMs)`.
   *
   * Typing into a field: `publish('note-7', { text }, { key: 'edit', onDuplicate: 'merge',
   * debounceMs: 500, maxWaitMs: 2000 })` on every keystroke sends one update half a second after
   * the user stops, and at least one every two seconds while they go on.
   * @throws TypeError without `key`; RangeError for a negative, NaN or infinite value.
   */
  debounceMs?: number;
  /**
   * The window's bound (finite, ≥ `debounceMs`; only with `debounceMs`): however often the key is
   * published again, the message is deliverable once `maxWaitMs` have passed since the first
   * publish with a window that met it (`now > first + maxWaitMs`). Without it, a key published
   * more often than every `debounceMs` waits for as long as that goes on.
   * @throws TypeError without `debounceMs`; RangeError below `debounceMs`, negative, NaN or infinite.
   */
  maxWaitMs?: number;
}

/** An entry of {@link PublishOptions.after} that names a record: what group `group` holds at publish. */
export interface AfterGroup {
  group: string;
}

/** Options of {@link Transport.discard} and {@link Transport.cancelGroup}. */
export interface RemoveOptions {
  /** Also remove what depends on what is removed: later messages of its group and `after` waiters, transitively (default false). */
  dependents?: boolean;
}

/** What {@link Transport.discard} or {@link Transport.cancelGroup} removed. */
export interface Removed {
  /** The seqs removed — cancelled messages and the discarded dead letter — ascending. */
  seqs: number[];
  /** The groups they were in, each once, in the order of their lowest removed seq. */
  groups: string[];
}

/** One message of {@link Transport.publishMany}. */
export interface PublishItem<E = unknown> {
  groupId: string;
  event: E;
  options?: PublishOptions;
}

/** Options of {@link Transport.claim}. */
export interface ClaimOptions {
  /** Skip groups whose priority is below this (0–4, integer, default 0). */
  minPriority?: number;
}

/** Options of {@link Transport.claimMany}. */
export interface ClaimManyOptions extends ClaimOptions {
  /** At most this many leases (an integer, 1–{@link MAX_BATCH}). */
  max: number;
}

/**
 * The largest `max` that {@link Transport.claimMany} and {@link Transport.ackAndClaimMany} take
 * in one call (1000): a larger one is refused with a RangeError before anything changes.
 */
export const MAX_BATCH = 1000;

/** What {@link Transport.ackMany} did with each lease it was given (the same objects, in input order). */
export interface AckManyResult<E = unknown> {
  /** Acked: the messages are gone. */
  acked: Lease<E>[];
  /** No longer held (see {@link LeaseLostError}): nothing was done with them. */
  lost: Lease<E>[];
}

/** What {@link Transport.ackAndClaimMany} did: {@link AckManyResult} plus the new leases. */
export interface AckAndClaimManyResult<E = unknown> extends AckManyResult<E> {
  /** The leases taken after the acks, as {@link Transport.claimMany} returns them (maybe none). */
  claimed: Lease<E>[];
}

/** Counts of {@link Transport.stats}, read at one instant without reading any event. */
export interface TransportStats {
  /** Messages queued: ready, leased, parked or delayed. Dead letters are not counted. */
  queued: number;
  /** Groups with at least one queued message or a hold. `ready + leased + waiting + held + blocked === groups`. */
  groups: number;
  /** Groups whose head a claim could take now (free, or its lease, park or delay ran out), at any priority. */
  ready: number;
  /** Groups whose head is under a live lease. */
  leased: number;
  /**
   * Groups whose head waits: parked (nacked with a delay), delayed (published with `delayMs`),
   * or paused (its group or the whole queue, see {@link Transport.pause}) and not leased.
   */
  waiting: number;
  /** Dead letters. */
  dead: number;
  /**
   * Groups whose head waits for messages it names in `after` (paused or not). Counted in
   * `groups` and in none of `ready`, `leased`, `waiting`, `held`.
   */
  blocked: number;
  /**
   * Groups held at a dead letter (queues with `onDeadLetter: 'hold'`), whether or not messages
   * wait behind it. A held group counts in `groups` and in none of `ready`, `leased`, `waiting`.
   */
  held: number;
  /** Whether the whole queue is paused ({@link Transport.pause} with no group). */
  paused: boolean;
  /** How many groups are paused by name, whether or not they hold messages now. */
  pausedGroups: number;
  /**
   * The earliest time a leased, parked or delayed head becomes claimable (its lease or hold end
   * + 1, by the inclusive rule), or null when nothing is held or the queue is paused (a paused
   * group's deadlines do not count either). A consumer with nothing to do sleeps until then.
   */
  nextReadyAt: number | null;
}

/**
 * The name of the queue a transport works on when {@link TransportOptions.queue} is not given
 * (`'default'`). Transports with different queue names on one database are independent.
 */
export const DEFAULT_QUEUE = 'default';

/** See {@link TransportOptions.onDeadLetter}. */
export type DeadLetterPolicy = 'continue' | 'hold';

/** Options of the transport constructors. */
export interface TransportOptions {
  /** The clock every lease and park is measured with. Default `Date.now`. */
  clock?: () => number;
  /**
   * Deliver a message at most this many times (a positive integer); the claim that would
   * deliver it once more moves it to the dead letters instead. Default: unlimited.
   */
  maxAttempts?: number;
  /**
   * The largest event this transport publishes, in bytes of its JSON (UTF-8): a larger one is
   * refused with a `RangeError` naming its size, before anything is written. Default 1,048,576
   * (1 MiB) on every backend — under a Durable Object's 2 MB row, and small enough that a
   * snapshot of a queue stays readable. A merge's result is not measured (a shallow merge is
   * bounded by the keys it unites). Checked per transport, not kept with the queue.
   */
  maxEventBytes?: number;
  /**
   * What a dead letter does to its group: `'continue'` (the group goes on with its next message)
   * or `'hold'` (the group delivers nothing more until the dead letter is redriven, back to the
   * group's head, or discarded): the answer when a group's messages depend on each other, as a
   * record's create, updates and delete do. A property of the queue, kept with it and read
   * where a message dies, so every process and tab of a queue works by the same one: the first
   * transport that names a policy sets it (until then the queue works as `'continue'`), one that
   * leaves the option out takes the queue's, and one that names another than the queue's is
   * refused with a `LeaseholdError` (code `QUEUE_MISMATCH`) naming both (PostgreSQL: at its first
   * call, when it opens the queue). The in-memory transport is always its own queue.
   */
  onDeadLetter?: DeadLetterPolicy;
  /**
   * The queue's name (a non-empty string; default `'default'`). Transports on one database with
   * different names are independent queues. The in-memory transport is always its own queue and
   * accepts the option for symmetry.
   */
  queue?: string;
}

/** A message's state, as {@link Transport.inspect} reports it at the snapshot's `now`. */
export type MessageState = 'ready' | 'leased' | 'expired' | 'parked' | 'delayed' | 'held' | 'paused' | 'blocked' | 'dead';

/** All the states, for code that iterates over them (legends, counters). */
export const MESSAGE_STATES: readonly MessageState[] = Object.freeze(['ready', 'leased', 'expired', 'parked', 'delayed', 'held', 'paused', 'blocked', 'dead']);

/** One queued message in a {@link TransportSnapshot}. */
export interface MessageSnapshot<E = unknown> {
  seq: number;
  groupId: string;
  event: E;
  /**
   * `ready`: free; `leased`: held by `holder` until `expiresAt`; `expired`: its lease ran out
   * and nobody claimed it again yet (the next claim of its group takes it, the late holder may
   * still ack); `parked`: nacked with a delay, blocking its group until `expiresAt`; `delayed`:
   * published with `delayMs` and not deliverable until after `expiresAt` (a delayed head blocks
   * its group; a delayed message further back waits for its turn and its time); `held`: in a
   * group held at a dead letter, waiting for its redrive or discard; `paused`: in a paused group
   * or queue and not under a live lease (see {@link Transport.pause}), waiting for its resume.
   * `blocked`: published with `after` and waiting for a message it names to be gone (see
   * {@link PublishOptions.after}). A hold reads before a pause, a pause before a block, and a
   * live lease before all three.
   */
  state: Exclude<MessageState, 'dead'>;
  /** Deliveries so far. */
  attempt: number;
  /** The worker holding (or last holding, if `expired`) the lease; null otherwise. */
  holder: string | null;
  /** When the lease, park or delay ends; null when `ready`. */
  expiresAt: number | null;
  /** The idempotency key, if it was published with one. */
  key: string | null;
  /**
   * The `reason` of the last `nack` or `release` that gave one (a `consume()` handler's error
   * message, a `RetryLaterError`'s), or null: what went wrong on the way to an attempt still to come.
   */
  lastError: string | null;
  /**
   * The seqs its `after` still waits for (messages queued or dead letters), ascending; [] when
   * it waits for none. Reported whatever its state: a held or paused message may wait too.
   */
  waitsFor: number[];
  /** Its coalescing window ({@link PublishOptions.debounceMs}) while the window runs at `now`; else null. */
  window: MessageWindow | null;
}

/** A message's running coalescing window, in a {@link MessageSnapshot}. */
export interface MessageWindow {
  /** When the window ends (inclusive, as a park's end): each publish of the key with `debounceMs` moves it on, up to `latestEndAt`. */
  endsAt: number;
  /** The latest it can end: the first windowed publish's time + `maxWaitMs`; null when no `maxWaitMs` bounds it. */
  latestEndAt: number | null;
}

/** One group in a {@link TransportSnapshot}. */
export interface GroupSnapshot<E = unknown> {
  groupId: string;
  priority: number;
  /** The claim counter's value at the group's last claim; 0 if never claimed. */
  claimOrder: number;
  /** Whether a message of the group is in flight (leased or parked, not run out). */
  inFlight: boolean;
  /** The seq of the dead letter holding the group (`onDeadLetter: 'hold'`), or null. */
  heldBy: number | null;
  /** Whether the group is paused by name ({@link Transport.pause} with its id). */
  paused: boolean;
  /** The group's messages, oldest first; the first one is the next to be delivered (none in a held group whose dead letter was its last). */
  messages: MessageSnapshot<E>[];
}

/** A dead-lettered message. */
export interface DeadLetter<E = unknown> {
  seq: number;
  groupId: string;
  /** The priority of the group it came from (restored if `redrive` re-creates the group). */
  priority: number;
  event: E;
  /** How many times it was delivered (releases not counted). */
  attempt: number;
  /**
   * Why: the reason given to `reject`; else, when it ran out of attempts or was rejected
   * without one, the reason of its last `nack` or `release` that gave one (see {@link Transport.nack});
   * else null.
   */
  reason: string | null;
  /** When it was moved to the dead letters. */
  deadAt: number;
}

/** One group (a record) at one instant, from {@link Transport.inspectGroup}. */
export interface GroupInspection<E = unknown> {
  /** The group read. */
  groupId: string;
  /** The clock reading the states were computed at. */
  now: number;
  /** Whether the whole queue is paused. */
  queuePaused: boolean;
  /** The group as `inspect()` would list it; null when the queue holds no message of it and no hold. */
  group: GroupSnapshot<E> | null;
  /** The group's dead letters (the one holding it included), in the order they died. */
  deadLetters: DeadLetter<E>[];
}

/** What the queue holds at one instant: for operators, tests and the demo. */
export interface TransportSnapshot<E = unknown> {
  /** The clock reading the states were computed at. */
  now: number;
  /** Whether the whole queue is paused. */
  paused: boolean;
  /**
   * Every group, in the order the next claims would visit them if all were free: the group
   * claimed least recently first (never-claimed groups first of all, oldest message first).
   */
  groups: GroupSnapshot<E>[];
  /** Dead letters, in the order they were moved there. */
  deadLetters: DeadLetter<E>[];
}

/**
 * A durable, lease-based queue. Every method returns a Promise and validates its arguments
 * first: a wrong type rejects with `TypeError`, a bad value with `RangeError`, naming the
 * argument, and nothing is changed. After `close()` every call rejects with `ClosedError`.
 * Ids (group, worker, key) are non-empty strings of well-formed Unicode: a lone UTF-16
 * surrogate is a `RangeError` on every backend, since UTF-8 storage would turn it into U+FFFD.
 */
export interface Transport<E = unknown> {
  /**
   * Appends `event` to the tail of `groupId`, creating the group (with `priority`) if it has no
   * messages. Returns the message's seq, or the seq of the still-queued message with the same
   * `key`. SQL backends reject an event JSON cannot carry faithfully (TypeError).
   */
  publish(groupId: string, event: E, options?: PublishOptions): Promise<number>;

  /**
   * {@link publish} for many messages in one transaction (one commit): returns their seqs in the
   * order given. Every item is checked first; one bad item rejects the whole batch (TypeError /
   * RangeError naming `items[i]`) and nothing is written. An item whose key matches a queued
   * message, or an earlier item of the batch, gets that message's seq. `[]` gives `[]`. An item's
   * `after` names seqs issued before the batch.
   */
  publishMany(items: readonly PublishItem<E>[]): Promise<number[]>;

  /**
   * Leases the next deliverable message for `visibilityMs` (> 0) and returns it, or null when
   * nothing is deliverable. Deliverable: the head of a group with nothing in flight and
   * priority ≥ `minPriority`; the group claimed least recently goes first. A message that
   * already had `maxAttempts` deliveries is moved to the dead letters on the way, in the same
   * transaction, and the claim carries on.
   */
  claim(workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null>;

  /**
   * Up to `options.max` leases in one transaction, at most one per group: exactly what `max`
   * successive {@link claim} calls would return at one clock reading (the same round-robin order,
   * ties, priority floor and dead-lettering), stopping at the first that would return null.
   */
  claimMany(workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<Lease<E>[]>;

  /**
   * Deletes the message (and its group, if now empty): the work is done.
   * @throws LeaseLostError if the lease no longer holds the message (claimed again after it
   *   ran out, acked, released or parked); nothing changes. A lease that ran out but whose
   *   message was not claimed again is still valid.
   */
  ack(lease: Lease<E>): Promise<void>;

  /**
   * {@link ack} then {@link claim} as one step: what a worker's loop does after each message. The
   * SQL backends run both in one transaction, one commit where two calls pay two (on a file, each
   * commit costs write-ahead-log frames: ~1.4× the claim+ack rate on better-sqlite3, measured in
   * docs/BENCHMARKS.md). Nothing can happen between the two: the result is the message `claim`
   * would have returned right after the ack, at the same clock reading.
   *
   * Every argument is checked before anything changes.
   * @returns the new lease, or null when nothing is deliverable (the ack is done either way).
   * @throws LeaseLostError as {@link ack}; then nothing changes and nothing is claimed.
   */
  ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null>;

  /**
   * Acks many leases in one transaction. A lease that no longer holds its message is reported in
   * `lost` instead of rejecting, and the others are acked all the same. Every lease is checked
   * for shape first (TypeError / RangeError naming `leases[i]`, nothing changed). `[]` gives
   * empty arrays.
   */
  ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>>;

  /**
   * {@link ackMany} then {@link claimMany} as one step: what a batch worker's loop does after
   * each batch. The SQL backends run both in one transaction (one commit), and a remote backend
   * (another tab's owner, a Durable Object) answers in one round trip where the two calls take
   * two. Nothing can happen between the acks and the claims: `claimed` is what `claimMany` would
   * have returned right after the acks, at the same clock reading (so a group acked here can be
   * claimed again at once, for its next message). As with `ackMany`, a lease that no longer holds
   * its message is reported in `lost`, and the claims go ahead all the same.
   *
   * Every argument is checked before anything changes (TypeError / RangeError naming it).
   * `leases` may be `[]`: then it is `claimMany`.
   */
  ackAndClaimMany(leases: readonly Lease<E>[], workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<AckAndClaimManyResult<E>>;

  /**
   * Gives the message back. `delayMs` 0 (default): free now, for an immediate retry.
   * `delayMs` > 0: parked, blocking its group, until `delayMs` have passed.
   * `reason` (a non-empty string; `consume()` passes the handler's error message) is kept with
   * the message, shown as its `lastError` by {@link inspect}, and becomes its dead letter's
   * `reason` if it later runs out of attempts. A nack without one keeps the last one given.
   * @throws LeaseLostError as {@link ack}.
   */
  nack(lease: Lease<E>, delayMs?: number, reason?: string): Promise<void>;

  /**
   * {@link nack} without spending an attempt: for a message that did not fail but cannot be
   * handled now (the network is down, the server answered 429 or 503). Free now (`delayMs` 0,
   * default) or parked for `delayMs`, exactly as `nack`; its next delivery carries the same
   * `attempt` as this lease, and `maxAttempts` does not count this one. (So if the same worker
   * claims the message again, its new lease has the same `seq`, `attempt` and `workerId` as the
   * released one: give each worker loop its own id.)
   * `reason` is taken and kept exactly as `nack`'s: the message's `lastError` (what a status
   * shows: "server unreachable", "HTTP 503"), and its dead letter's `reason` if it later runs out
   * of attempts; a release without one keeps the last one given. `consume()` passes the
   * `RetryLaterError`'s message.
   * @throws LeaseLostError as {@link ack}; TypeError / RangeError for a bad `delayMs` or
   *   `reason`, nothing changed.
   */
  release(lease: Lease<E>, delayMs?: number, reason?: string): Promise<void>;

  /**
   * Moves the leased message to the dead letters now, whatever attempts remain: the answer to a
   * request the server refused for good (a 4xx). `reason` (a string, default none) is kept with
   * the dead letter. With `onDeadLetter: 'hold'` its group is held; otherwise the group goes on
   * with its next message.
   * @throws LeaseLostError as {@link ack}.
   */
  reject(lease: Lease<E>, reason?: string): Promise<void>;

  /**
   * Moves the lease's expiry to `now + visibilityMs` and returns the renewed lease (the old
   * object stays valid: same `(seq, attempt)`).
   * @throws LeaseLostError as {@link ack}.
   */
  extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>>;

  /**
   * Ends now every lease `workerId` holds in this queue, as if each had run out: for a worker
   * restarted after a crash under the same id, whose old leases would otherwise keep their
   * groups waiting for `visibilityMs`. Each message is claimable at once, and its next delivery
   * counts as another attempt (a crash may have been its fault: `maxAttempts` still applies).
   * Fencing is that of any lease that ran out: the old lease may still settle until a claim
   * takes the message, and fails with `LeaseLostError` after. Only for an id no live worker
   * uses: a live worker's leases ended this way are delivered again while it works on them.
   * Resolves how many leases it ended.
   * @throws TypeError / RangeError for a bad `workerId`, before anything is read.
   */
  expireLeases(workerId: string): Promise<number>;

  /** Counts of what the queue holds now, without reading any event: cheap enough to poll. */
  stats(): Promise<TransportStats>;

  /**
   * Removes a queued message (ready, parked, delayed, or under a lease that ran out and was not
   * claimed again, whose late holder then loses it). Removing a group's head frees the group for
   * its next message.
   * @returns true if the message was removed; false if no message with that seq is queued
   *   (never published, acked, cancelled, or dead-lettered).
   * @throws LeaseholdError (code MESSAGE_LEASED) if the message is under a live lease: nothing
   *   changes; cancel it after the holder acks or nacks, or once the lease runs out.
   */
  cancel(seq: number): Promise<boolean>;

  /** Everything the queue holds, with each message's state at the current time. */
  inspect(): Promise<TransportSnapshot<E>>;

  /**
   * One group's part of {@link inspect}, read in one transaction: its messages (each with what
   * it waits for and its coalescing window), its hold, its dead letters, and the queue's pause.
   * Costs what the group holds, not what the queue holds: what a page asks for one record.
   * @throws TypeError / RangeError for a `groupId` that is not a valid id.
   */
  inspectGroup(groupId: string): Promise<GroupInspection<E>>;

  /** The dead letters, in the order they were moved there. */
  deadLetters(): Promise<DeadLetter<E>[]>;

  /**
   * Puts a dead letter back in its group with `attempt` 0 and returns its seq. A dead letter
   * holding its group (`onDeadLetter: 'hold'`) goes back to the group's **head** with its own
   * seq, and the group goes on from it. Otherwise it goes to its group's tail with a new seq
   * (re-creating the group with its old priority if needed). The redriven message has no
   * idempotency key.
   * @throws LeaseholdError (code NOT_FOUND) if `seq` is not a dead letter.
   */
  redrive(seq: number): Promise<number>;

  /**
   * Deletes a dead letter for good. A group it held goes on with its next message.
   *
   * With `{ dependents: true }`, `seq` may name a dead letter or a queued message, and what
   * depends on it goes with it, in one transaction: the later messages of its group, every
   * message that waits on a removed one through `after` with the later messages of that one's
   * group, and so on. Discarding a note's refused create then drops its queued edits and the
   * tasks created under it, which would only be refused in turn. A group the dead letter held
   * is left empty and goes; what waited for a removed message and was not removed goes on.
   * @returns what was removed: the dead letter and the cancelled messages.
   * @throws LeaseholdError (code NOT_FOUND) if `seq` is not a dead letter (nor, with dependents,
   *   a queued message); (code MESSAGE_LEASED) if a message it would remove is under a live
   *   lease — nothing is removed then.
   */
  discard(seq: number, options?: RemoveOptions): Promise<Removed>;

  /**
   * Cancels every queued message of group `groupId` and discards the dead letter holding it,
   * if any — a record deleted: nothing pending for it is sent. With `{ dependents: true }`,
   * every message waiting on a removed one through `after` goes too, with the later messages of
   * its group, transitively, as {@link discard} removes them. A pause of the group stays.
   * @returns what was removed (empty lists when the group held nothing).
   * @throws LeaseholdError (code MESSAGE_LEASED) if a message it would remove is under a live
   *   lease: nothing is removed; cancel after its holder acks or nacks, or once the lease runs out.
   */
  cancelGroup(groupId: string, options?: RemoveOptions): Promise<Removed>;

  /**
   * Stops deliveries: of the whole queue (no argument) or of one group (`groupId`, which need
   * not hold messages yet). While paused, no claim takes a message of it (`claim` returns null
   * for it, as for a parked group), even one whose lease runs out meanwhile; publishes are still
   * taken; leases in flight can still be acked, nacked, released, rejected and extended.
   * Durable and the queue's: every process and tab of the queue sees it. Idempotent. A group's
   * pause and the queue's are independent: resuming one leaves the other as it is.
   * @throws TypeError / RangeError if `groupId` is given and is not a valid group id.
   */
  pause(groupId?: string): Promise<void>;

  /**
   * Lifts a {@link pause} of the queue (no argument) or of one group: its messages are
   * deliverable again (a change notice is raised). Idempotent: resuming what is not paused
   * changes nothing.
   * @throws TypeError / RangeError if `groupId` is given and is not a valid group id.
   */
  resume(groupId?: string): Promise<void>;

  /** Releases the backend's resources. Idempotent. Messages stay where they are (SQL: in the database). */
  close(): Promise<void>;
}

/**
 * Implemented by transports that can say when work may have become claimable, so idle
 * consumers can wait for a notice instead of polling. A notice is a hint, never a promise:
 * a woken consumer may find nothing (another took it), and work that becomes claimable only
 * because time passed (a lease or park running out) raises no notice, so consumers still poll
 * at their own pace for that.
 */
export interface ChangeNotifier {
  /**
   * Calls `listener` after each committed change that can make a message claimable (publish,
   * ack with more messages in the group, nack, release, reject, redrive, discard, cancel,
   * resume), possibly coalesced. Returns a
   * function that unsubscribes.
   */
  onChange(listener: () => void): () => void;
}

/** Whether `transport` implements {@link ChangeNotifier}. */
export function isChangeNotifier(transport: unknown): transport is ChangeNotifier {
  return typeof (transport as Partial<ChangeNotifier> | null)?.onChange === 'function';
}
