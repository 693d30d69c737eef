/**
 * InMemoryTransport: the transport contract in process memory, for tests, the demo and
 * single-process embedding. Same semantics as the SQL backends, proven by one conformance suite.
 *
 * The seed sorts every message on every claim (O(n log n)); here each group keeps its own FIFO
 * and the groups sit in heaps: free groups by claim order, one heap per priority so a priority
 * floor never scans the groups below it, and locked groups by expiry so a lapsed lease is found
 * without scanning. Each group is in exactly one heap (or none once empty) and moves between them
 * in place. Claim and ack cost O(log groups) whatever the backlog.
 */
import { ClosedError, LeaseholdError, LeaseLostError } from '../errors.js';
import { checkDuration, checkId, checkJson, readClock } from '../validate.js';
import {
  checkClaim,
  checkClaimMany,
  checkLease,
  checkReason,
  checkLeases,
  checkPublish,
  checkPublishItems,
  checkSeq,
  mergePatch,
  neverIssued,
  checkTransportOptions,
  headState,
  newOrigin,
  MAX_PRIORITY,
  type PublishArgs,
  waitingState,
} from './shared.js';
import { Listeners } from './notifier.js';
import type {
  AckAndClaimManyResult,
  AckManyResult,
  ChangeNotifier,
  ClaimManyOptions,
  ClaimOptions,
  DeadLetter,
  DeadLetterPolicy,
  GroupSnapshot,
  Lease,
  MessageSnapshot,
  PublishItem,
  PublishOptions,
  Transport,
  TransportOptions,
  TransportSnapshot,
  TransportStats,
} from './contract.js';
import { type HeapItem, MinHeap } from './heap.js';

interface Message<E> {
  readonly seq: number;
  /** Its number among the queue's publishes (Lease.counter); kept by a redrive. */
  readonly counter: number;
  readonly groupId: string;
  /** Replaced or merged into by a publish with the same key and `onDuplicate`, while queued. */
  event: E;
  /** Cleared when a publish with the same key moves it to a new message (this one under a live lease). */
  key: string | null;
  /** Not deliverable while the clock reads ≤ this (a delayed publish); null: no delay. */
  readonly notBefore: number | null;
  attempt: number;
  /** The reason of the last nack that gave one: its dead letter's reason if it runs out of attempts. */
  lastError: string | null;
  /** The lease holder; null when free, parked or delayed. */
  holder: string | null;
  /** End of the head's lease, park or delay; null when free (always null behind the head). */
  expiry: number | null;
  /** How many messages named in its `after` are still in the queue: while > 0, it blocks its group at the head. */
  waits: number;
  /** Out of the queue (acked, cancelled, dead): a waiter that left is not counted down. */
  gone: boolean;
}

interface Group<E> extends HeapItem {
  readonly id: string;
  readonly priority: number;
  /** While never claimed: its head's seq, which orders it among the never-claimed groups. */
  firstSeq: number;
  claimOrder: number;
  /** While in the locked heap: its head's lock expiry (the heap's key). */
  lockedUntil: number;
  /** Oldest first; only the head is ever leased or parked. */
  readonly fifo: Message<E>[];
  /** Index of the head in `fifo` (shifting an array is O(n); compacted now and then). */
  head: number;
  /** Keyed messages still queued, for idempotent publish. */
  readonly keys: Map<string, Message<E>>;
  /**
   * The dead letter holding the group (`onDeadLetter: 'hold'`), or null. A held group is in no
   * heap, so no claim reaches it, and stays in the map while empty, so later publishes wait too.
   */
  heldBy: number | null;
  /** Paused by name: in no heap, so no claim reaches it, whatever its head's lease or park. */
  paused: boolean;
}

const byClaimOrder = <E>(a: Group<E>, b: Group<E>): boolean =>
  a.claimOrder < b.claimOrder || (a.claimOrder === b.claimOrder && a.firstSeq < b.firstSeq);
const byExpiry = <E>(a: Group<E>, b: Group<E>): boolean => a.lockedUntil < b.lockedUntil;

/**
 * The in-memory transport. Keeps each event object itself (a claim returns the very object that
 * was published), yet refuses the events the SQL backends refuse (a cycle, a BigInt, a function,
 * `undefined`, NaN, a Map…: a TypeError naming the value), so that code tested against it runs
 * unchanged on them. Nothing survives the process.
 */
export class InMemoryTransport<E = unknown> implements Transport<E>, ChangeNotifier {
  readonly #clock: () => number;
  /** The queue's name (`options.queue`), which its leases carry. */
  readonly #queueName: string;
  readonly #maxAttempts: number;
  readonly #policy: DeadLetterPolicy;
  /** Groups with `heldBy` set. */
  #heldCount = 0;
  /** The whole queue is paused: no claim delivers anything. */
  #paused = false;
  /** Group ids paused by name, whether or not such a group holds messages now. */
  readonly #pausedNames = new Set<string>();
  /** The groups of those names that exist now (with messages or a hold). */
  readonly #pausedGroups = new Set<Group<E>>();
  /** Groups whose head waits for messages named in its `after`: in no heap until they are gone. */
  readonly #blockedGroups = new Set<Group<E>>();
  /** seq → the messages waiting for it to leave the queue (`after`). */
  readonly #waiters = new Map<number, Message<E>[]>();
  readonly #groups = new Map<string, Group<E>>();
  /** Free groups (head not leased or parked, or its lock ran out), one heap per priority. */
  readonly #free: MinHeap<Group<E>>[] = Array.from({ length: MAX_PRIORITY + 1 }, () => new MinHeap<Group<E>>(byClaimOrder));
  /** Groups whose head is leased or parked, soonest expiry first. */
  readonly #locked = new MinHeap<Group<E>>(byExpiry);
  /** Each with its message's counter, which a redrive gives back (and deadLetters() leaves out). */
  readonly #dead = new Map<number, DeadLetter<E> & { counter: number }>();
  /** This transport's origin: an in-memory database is made with the transport. */
  readonly #origin = newOrigin();
  #lastCounter = 0;
  /** The counters of the messages in the queue, and a number no higher than the lowest of them. */
  readonly #queuedCounters = new Set<number>();
  #lowWater = 1;
  #lastSeq = 0;
  #claimCounter = 0;
  #queued = 0;
  #closed = false;
  readonly #listeners = new Listeners();

  /**
   * @param options `clock` (default `Date.now`) and `maxAttempts` (default unlimited).
   * @throws TypeError / RangeError for a bad option.
   */
  constructor(options?: TransportOptions) {
    const { clock, maxAttempts, queue, onDeadLetter } = checkTransportOptions(options);
    this.#queueName = queue;
    this.#policy = onDeadLetter ?? 'continue';
    this.#clock = clock;
    this.#maxAttempts = maxAttempts;
  }

  async publish(groupId: string, event: E, options?: PublishOptions): Promise<number> {
    const args = checkPublish(groupId, options);
    // Refused exactly as the SQL backends refuse it, so code tested in memory runs on them.
    checkJson('event', event);
    this.#ensureOpen();
    return this.#publish(groupId, event, args, this.#delayed(args));
  }

  async publishMany(items: readonly PublishItem<E>[]): Promise<number[]> {
    const checked = checkPublishItems<E>(items);
    checked.forEach((item, i) => checkJson(`items[${i}].event`, item.event));
    this.#ensureOpen();
    const now = checked.some((item) => item.args.delayMs > 0) ? readClock(this.#clock) : 0;
    // `after` names seqs issued before the batch (an item's own seq is not known until it
    // returns): checked whole first, so a bad one leaves nothing written.
    for (const { args } of checked) for (const seq of args.after) if (seq > this.#lastSeq) throw neverIssued(seq, this.#lastSeq);
    return checked.map(({ groupId, event, args }) => this.#publish(groupId, event, args, args.delayMs > 0 ? now + args.delayMs : null));
  }

  /**
   * The low-water mark: the lowest counter still queued (see Lease.lowWater), found by stepping
   * the mark past numbers no longer queued: amortised O(1) per message, since it only moves up
   * (but for a redrive, which brings an old number back and the mark with it). Called only with
   * a message queued (one was just leased), so the walk ends.
   */
  #lowestQueued(): number {
    while (!this.#queuedCounters.has(this.#lowWater)) this.#lowWater++;
    return this.#lowWater;
  }

  /** When a message published now with `args` may first be delivered (null: at once). */
  #delayed(args: PublishArgs): number | null {
    return args.delayMs > 0 ? readClock(this.#clock) + args.delayMs : null;
  }

  #publish(groupId: string, event: E, { priority, key, onDuplicate, after }: PublishArgs, notBefore: number | null): number {
    const waitsFor = after.length === 0 ? [] : this.#stillQueued(after);
    const group = key === null ? undefined : this.#groups.get(groupId);
    const existing = group?.keys.get(key!);
    if (!existing) return this.#append(groupId, event, priority, key, notBefore, waitsFor);
    if (onDuplicate === 'skip') return existing.seq;
    if (existing.holder !== null) {
      if (existing.expiry! >= readClock(this.#clock)) {
        // Under a live lease, maybe on the wire already: the new event goes behind it, with the key.
        existing.key = null;
        group!.keys.delete(key!);
        return this.#append(groupId, event, priority, key, notBefore, waitsFor);
      }
      // The lease ran out: the late holder worked on the old event, so its ack must not count.
      existing.holder = null;
      existing.expiry = null;
      this.#markFree(group!);
    }
    existing.event = onDuplicate === 'replace' ? event : (mergePatch(existing.event, event) as E);
    this.#listeners.notify();
    return existing.seq;
  }

  /** The seqs of `after` still in the queue (queued or dead); a seq never issued is a RangeError. */
  #stillQueued(after: readonly number[]): number[] {
    const found: number[] = [];
    for (const seq of after) {
      if (seq > this.#lastSeq) throw neverIssued(seq, this.#lastSeq);
      if (this.#dead.has(seq) || this.#find(seq)) found.push(seq);
    }
    return found;
  }

  /** The queued message `seq`, by a scan (as cancel finds one: no index by seq). */
  #find(seq: number): Message<E> | undefined {
    for (const group of this.#groups.values()) {
      for (let i = group.head; i < group.fifo.length; i++) if (group.fifo[i]!.seq === seq) return group.fifo[i];
    }
    return undefined;
  }

  /** `seq` left the queue for good: what waited for it counts it off, and a group whose head waited for it last goes on. */
  #satisfy(seq: number): void {
    const waiting = this.#waiters.get(seq);
    if (!waiting) return;
    this.#waiters.delete(seq);
    for (const message of waiting) {
      if (message.gone || --message.waits > 0) continue;
      const group = this.#groups.get(message.groupId)!;
      if (group.heldBy === null && group.fifo[group.head] === message) this.#headChanged(group);
    }
    this.#listeners.notify();
  }

  async claim(workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    const minPriority = checkClaim(workerId, visibilityMs, options);
    this.#ensureOpen();
    return this.#claim(workerId, visibilityMs, minPriority, readClock(this.#clock));
  }

  async claimMany(workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<Lease<E>[]> {
    const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
    this.#ensureOpen();
    return this.#claimMany(workerId, visibilityMs, minPriority, max, readClock(this.#clock));
  }

  /** Up to `max` successive claims at one clock reading. */
  #claimMany(workerId: string, visibilityMs: number, minPriority: number, max: number, now: number): Lease<E>[] {
    const leases: Lease<E>[] = [];
    while (leases.length < max) {
      const lease = this.#claim(workerId, visibilityMs, minPriority, now);
      if (!lease) break;
      leases.push(lease);
    }
    // One mark for the batch, after its last claim (a later claim may dead-letter a lower number).
    return leases.map((lease) => ({ ...lease, lowWater: this.#lowestQueued() }));
  }

  async ack(lease: Lease<E>): Promise<void> {
    const message = this.#held(lease);
    this.#removeHead(this.#groups.get(message.groupId)!);
    this.#listeners.notify();
  }

  async ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>> {
    checkLeases<E>(leases, this.#queueName);
    this.#ensureOpen();
    return this.#ackMany(leases, { acked: [], lost: [] });
  }

  /** The body of ackMany: acks what still holds, sorts each lease into `done`, tells listeners. */
  #ackMany<R extends AckManyResult<E>>(leases: readonly Lease<E>[], done: R): R {
    for (const lease of leases) {
      const message = this.#holding(lease);
      if (message) this.#removeHead(this.#groups.get(message.groupId)!);
      (message ? done.acked : done.lost).push(lease);
    }
    if (done.acked.length > 0) this.#listeners.notify();
    return done;
  }

  async ackAndClaimMany(leases: readonly Lease<E>[], workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<AckAndClaimManyResult<E>> {
    checkLeases<E>(leases, this.#queueName);
    const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
    this.#ensureOpen();
    const now = readClock(this.#clock); // before the acks: a clock that throws must change nothing
    const result = this.#ackMany(leases, { acked: [], lost: [], claimed: [] as Lease<E>[] });
    result.claimed = this.#claimMany(workerId, visibilityMs, minPriority, max, now);
    return result;
  }

  async ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    const minPriority = checkClaim(workerId, visibilityMs, options);
    const message = this.#held(lease);
    const now = readClock(this.#clock); // before the ack: a clock that throws must change nothing
    this.#removeHead(this.#groups.get(message.groupId)!);
    this.#listeners.notify();
    return this.#claim(workerId, visibilityMs, minPriority, now);
  }

  #claim(workerId: string, visibilityMs: number, minPriority: number, now: number): Lease<E> | null {
    if (this.#paused) return null;
    for (;;) {
      // Again after each dead letter: the group's next head may be held by a delay already past.
      this.#releaseLapsed(now);
      const group = this.#nextFreeGroup(minPriority);
      if (!group) return null;
      const message = group.fifo[group.head]!;
      if (message.attempt >= this.#maxAttempts) {
        // Poison message: out of its group, which keeps its place in the round-robin order.
        this.#bury(group, message, now, null);
        continue;
      }
      message.attempt += 1;
      message.holder = workerId;
      message.expiry = now + visibilityMs;
      this.#unheap(group); // before its claim order, the free heap's key, changes
      group.claimOrder = ++this.#claimCounter;
      this.#markLocked(group, message.expiry);
      return this.#lease(message, this.#lowestQueued());
    }
  }

  async nack(lease: Lease<E>, delayMs = 0, reason?: string): Promise<void> {
    this.#giveBack(lease, delayMs, false, reason);
  }

  async release(lease: Lease<E>, delayMs = 0): Promise<void> {
    this.#giveBack(lease, delayMs, true, undefined);
  }

  async reject(lease: Lease<E>, reason?: string): Promise<void> {
    checkLease(lease, this.#queueName);
    const why = checkReason(reason);
    const message = this.#held(lease);
    this.#bury(this.#groups.get(message.groupId)!, message, readClock(this.#clock), why);
    this.#listeners.notify();
  }

  /** Moves a group's head to the dead letters; with the hold policy, the group is held at it. */
  #bury(group: Group<E>, message: Message<E>, now: number, reason: string | null): void {
    if (this.#policy === 'hold') {
      group.heldBy = message.seq;
      this.#heldCount++;
    }
    this.#removeHead(group, true);
    this.#dead.set(message.seq, { seq: message.seq, groupId: group.id, priority: group.priority, event: message.event, attempt: message.attempt, deadAt: now, reason: reason ?? message.lastError, counter: message.counter });
  }

  /** nack (`keepAttempt` false) or release (true): the head goes back, free now or parked. */
  #giveBack(lease: Lease<E>, delayMs: number, keepAttempt: boolean, reason: unknown): void {
    checkLease(lease, this.#queueName);
    checkDuration('delayMs', delayMs, false);
    const why = checkReason(reason);
    const message = this.#held(lease);
    if (keepAttempt) message.attempt -= 1;
    if (why !== null) message.lastError = why;
    const group = this.#groups.get(message.groupId)!;
    message.holder = null;
    if (delayMs === 0) {
      message.expiry = null;
      this.#markFree(group);
    } else {
      message.expiry = readClock(this.#clock) + delayMs;
      this.#markLocked(group, message.expiry);
    }
    this.#listeners.notify();
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    checkLease(lease, this.#queueName);
    checkDuration('visibilityMs', visibilityMs, true);
    const message = this.#held(lease);
    message.expiry = readClock(this.#clock) + visibilityMs;
    this.#markLocked(this.#groups.get(message.groupId)!, message.expiry);
    return this.#lease(message, lease.lowWater);
  }

  async stats(): Promise<TransportStats> {
    this.#ensureOpen();
    const now = readClock(this.#clock);
    this.#releaseLapsed(now);
    // After the release, the locked heap holds exactly the groups (not paused) whose head is
    // held at `now`, and the free heaps the groups a claim could take.
    let leased = 0;
    let ready = 0;
    const blocked = this.#blockedGroups.size;
    for (const group of this.#locked.items()) if (group.fifo[group.head]!.holder !== null) leased++;
    for (const group of this.#pausedGroups) {
      const head = group.fifo[group.head];
      if (group.heldBy === null && head?.holder != null && head.expiry! >= now) leased++;
    }
    if (!this.#paused) for (const heap of this.#free) ready += heap.size;
    const soonest = this.#paused ? undefined : this.#locked.peek();
    return {
      queued: this.#queued,
      groups: this.#groups.size,
      ready,
      leased,
      waiting: this.#groups.size - ready - leased - this.#heldCount - blocked,
      dead: this.#dead.size,
      held: this.#heldCount,
      blocked,
      paused: this.#paused,
      pausedGroups: this.#pausedNames.size,
      nextReadyAt: soonest ? soonest.lockedUntil + 1 : null,
    };
  }

  async cancel(seq: number): Promise<boolean> {
    checkSeq(seq);
    this.#ensureOpen();
    // No index by seq (one Map entry less per message): cancelling is rare, a scan is fine.
    for (const group of this.#groups.values()) {
      for (let i = group.head; i < group.fifo.length; i++) {
        const message = group.fifo[i]!;
        if (message.seq !== seq) continue;
        if (i === group.head) {
          if (message.holder !== null && message.expiry! >= readClock(this.#clock)) throw leased(seq);
          this.#removeHead(group);
          this.#listeners.notify();
        } else {
          group.fifo.splice(i, 1);
          if (message.key !== null) group.keys.delete(message.key);
          this.#queued--;
          this.#queuedCounters.delete(message.counter);
          message.gone = true;
          this.#satisfy(seq);
        }
        return true;
      }
    }
    return false;
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    this.#ensureOpen();
    const now = readClock(this.#clock);
    const groups: GroupSnapshot<E>[] = [];
    for (const group of this.#groups.values()) {
      const messages: MessageSnapshot<E>[] = [];
      const held = group.heldBy !== null;
      const paused = this.#paused || group.paused;
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
    return { now, paused: this.#paused, groups, deadLetters: await this.deadLetters() };
  }

  async deadLetters(): Promise<DeadLetter<E>[]> {
    this.#ensureOpen();
    return Array.from(this.#dead.values(), ({ counter, ...letter }) => letter);
  }

  async redrive(seq: number): Promise<number> {
    checkSeq(seq);
    this.#ensureOpen();
    const letter = this.#deadLetter(seq);
    this.#dead.delete(seq);
    const { counter } = letter;
    // Back in the queue under its old number, which may be below the mark.
    this.#queuedCounters.add(counter);
    this.#lowWater = Math.min(this.#lowWater, counter);
    const group = this.#groups.get(letter.groupId);
    if (group?.heldBy !== seq) {
      const newSeq = this.#append(letter.groupId, letter.event, letter.priority, null, null, [], counter);
      // What waited for the dead letter waits for the message it became.
      const waiting = this.#waiters.get(seq);
      if (waiting) {
        this.#waiters.delete(seq);
        this.#waiters.set(newSeq, waiting);
      }
      return newSeq;
    }
    // Back to the head it held, with its own seq: every message behind it has a later one.
    const message: Message<E> = { seq, counter, groupId: group.id, event: letter.event, key: null, notBefore: null, attempt: 0, lastError: null, holder: null, expiry: null, waits: 0, gone: false };
    if (group.head > 0) group.fifo[--group.head] = message;
    else group.fifo.unshift(message);
    if (group.claimOrder === 0) group.firstSeq = seq;
    this.#queued++;
    this.#unhold(group);
    return seq;
  }

  async discard(seq: number): Promise<void> {
    checkSeq(seq);
    this.#ensureOpen();
    const letter = this.#deadLetter(seq);
    this.#dead.delete(seq);
    this.#satisfy(seq);
    const group = this.#groups.get(letter.groupId);
    if (group?.heldBy !== seq) return;
    if (group.head === group.fifo.length) {
      this.#groups.delete(group.id);
      this.#pausedGroups.delete(group);
      this.#heldCount--;
      this.#listeners.notify();
      return;
    }
    if (group.claimOrder === 0) group.firstSeq = group.fifo[group.head]!.seq;
    this.#unhold(group);
  }

  #deadLetter(seq: number): DeadLetter<E> & { counter: number } {
    const letter = this.#dead.get(seq);
    if (!letter) throw new LeaseholdError('NOT_FOUND', `message ${seq} is not a dead letter`);
    return letter;
  }

  /** Lifts a non-empty group's hold: its head is free, or held by its own delay. */
  #unhold(group: Group<E>): void {
    group.heldBy = null;
    this.#heldCount--;
    // The head was never delivered (a redriven letter comes back at attempt 0, and messages
    // behind a head are untouched until they become it): only its own delay can hold it.
    this.#headChanged(group);
    this.#listeners.notify();
  }

  async pause(groupId?: string): Promise<void> {
    if (groupId !== undefined) checkId('groupId', groupId);
    this.#ensureOpen();
    if (groupId === undefined) {
      this.#paused = true;
      return;
    }
    this.#pausedNames.add(groupId);
    const group = this.#groups.get(groupId);
    if (!group || group.paused) return;
    group.paused = true;
    this.#pausedGroups.add(group);
    this.#unheap(group);
  }

  async resume(groupId?: string): Promise<void> {
    if (groupId !== undefined) checkId('groupId', groupId);
    this.#ensureOpen();
    if (groupId === undefined) {
      if (!this.#paused) return;
      this.#paused = false;
    } else {
      if (!this.#pausedNames.delete(groupId)) return;
      const group = this.#groups.get(groupId);
      if (group) {
        group.paused = false;
        this.#pausedGroups.delete(group);
        // A held group stays out of the heaps until its redrive or discard.
        if (group.heldBy === null && group.head < group.fifo.length) this.#placeHead(group);
      }
    }
    this.#listeners.notify();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
  }

  /** Calls `listener` (on a microtask) after each publish, ack, nack and redrive. */
  onChange(listener: () => void): () => void {
    return this.#listeners.add(listener);
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('transport');
  }

  /** Appends a message: a new publish, numbered next, unless `counter` gives a redriven one's own. */
  #append(groupId: string, event: E, priority: number, key: string | null, notBefore: number | null, waitsFor: readonly number[], counter?: number): number {
    const seq = ++this.#lastSeq;
    counter ??= ++this.#lastCounter;
    this.#queuedCounters.add(counter);
    const message: Message<E> = { seq, counter, groupId, event, key, notBefore, attempt: 0, lastError: null, holder: null, expiry: null, waits: waitsFor.length, gone: false };
    for (const named of waitsFor) {
      const waiting = this.#waiters.get(named);
      if (waiting) waiting.push(message);
      else this.#waiters.set(named, [message]);
    }
    let group = this.#groups.get(groupId);
    const isHead = !group;
    if (!group) {
      const paused = this.#pausedNames.has(groupId);
      group = { id: groupId, priority, firstSeq: seq, claimOrder: 0, lockedUntil: 0, fifo: [], head: 0, keys: new Map(), heldBy: null, paused, heap: null, heapIndex: 0 };
      this.#groups.set(groupId, group);
      if (paused) this.#pausedGroups.add(group);
    }
    group.fifo.push(message);
    if (key !== null) group.keys.set(key, message);
    if (isHead) this.#headChanged(group);
    this.#queued++;
    this.#listeners.notify();
    return seq;
  }

  /** A group has a new head: blocked by its `after`, free, or held until its delay ends. */
  #headChanged(group: Group<E>): void {
    const head = group.fifo[group.head]!;
    if (head.waits > 0) {
      this.#unheap(group);
      this.#blockedGroups.add(group);
      return;
    }
    this.#blockedGroups.delete(group);
    if (head.notBefore === null) {
      this.#markFree(group);
    } else {
      head.expiry = head.notBefore;
      this.#markLocked(group, head.notBefore);
    }
  }

  /**
   * The message `lease` still holds, or a LeaseLostError. Only a group's head is ever leased, so
   * the group's head is the one place to look (no index by seq: one Map entry less per message).
   */
  #held(lease: Lease<E>): Message<E> {
    checkLease(lease, this.#queueName);
    this.#ensureOpen();
    const message = this.#holding(lease);
    if (!message) throw new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
    return message;
  }

  /** The message `lease` still holds, if it does. */
  #holding(lease: Lease<E>): Message<E> | undefined {
    const group = this.#groups.get(lease.groupId);
    const message = group?.fifo[group.head];
    if (!message || message.seq !== lease.seq || message.attempt !== lease.attempt || message.holder !== lease.workerId) return undefined;
    return message;
  }

  #lease(message: Message<E>, lowWater: number | undefined): Lease<E> {
    return {
      seq: message.seq,
      groupId: message.groupId,
      event: message.event,
      workerId: message.holder!,
      attempt: message.attempt,
      expiresAt: message.expiry!,
      queue: this.#queueName,
      origin: this.#origin,
      counter: message.counter,
      lowWater,
    };
  }

  /**
   * Takes the head out of its group (ack, cancel, or `dead`: to the dead letters, where what
   * waits for it waits on); drops the group when it is empty.
   */
  #removeHead(group: Group<E>, dead = false): void {
    const message = group.fifo[group.head]!;
    message.gone = true;
    this.#leaveHead(group, message);
    if (!dead) this.#satisfy(message.seq);
  }

  #leaveHead(group: Group<E>, message: Message<E>): void {
    group.fifo[group.head] = undefined as unknown as Message<E>;
    group.head += 1;
    this.#queued--;
    this.#queuedCounters.delete(message.counter);
    if (message.key !== null) group.keys.delete(message.key);
    if (group.heldBy !== null) {
      // Held: out of every heap, and kept while empty so that later publishes wait too.
      this.#unheap(group);
      if (group.head === group.fifo.length) {
        group.fifo.length = 0;
        group.head = 0;
      }
      return;
    }
    if (group.head === group.fifo.length) {
      this.#groups.delete(group.id);
      this.#pausedGroups.delete(group);
      this.#blockedGroups.delete(group);
      this.#unheap(group);
      return;
    }
    if (group.head > 32 && group.head * 2 > group.fifo.length) {
      group.fifo.splice(0, group.head);
      group.head = 0;
    }
    if (group.claimOrder === 0) {
      // Only a cancel removes a never-claimed head: the next message takes its place in the order.
      this.#unheap(group);
      group.firstSeq = group.fifo[group.head]!.seq;
    }
    this.#headChanged(group);
  }

  /** Takes `group` out of whichever heap holds it. */
  #unheap(group: Group<E>): void {
    (group.heap as MinHeap<Group<E>> | null)?.remove(group);
  }

  #markFree(group: Group<E>): void {
    if (group.paused) return this.#unheap(group);
    const heap = this.#free[group.priority]!;
    if (group.heap === heap) return;
    this.#unheap(group);
    heap.push(group);
  }

  #markLocked(group: Group<E>, until: number): void {
    this.#unheap(group);
    group.lockedUntil = until;
    if (!group.paused) this.#locked.push(group);
  }

  /** Puts a resumed group back where its head's lease, park or delay says (none: free). */
  #placeHead(group: Group<E>): void {
    const head = group.fifo[group.head]!;
    if (head.waits > 0) return; // blocked: in no heap until what it names is gone
    const expiry = head.expiry;
    if (expiry === null) this.#markFree(group);
    else this.#markLocked(group, expiry);
  }

  /** Moves groups whose lease or park ran out (`expiry < now`) back among the free ones. */
  #releaseLapsed(now: number): void {
    const locked = this.#locked;
    for (let top = locked.peek(); top && top.lockedUntil < now; top = locked.peek()) {
      locked.remove(top);
      this.#free[top.priority]!.push(top);
    }
  }

  /** The free group the round-robin order serves next among priorities ≥ `minPriority`. */
  #nextFreeGroup(minPriority: number): Group<E> | undefined {
    let best: Group<E> | undefined;
    for (let priority = minPriority; priority <= MAX_PRIORITY; priority++) {
      const top = this.#free[priority]!.peek();
      if (top && (!best || byClaimOrder(top, best))) best = top;
    }
    return best;
  }
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

function leased(seq: number): LeaseholdError {
  return new LeaseholdError('MESSAGE_LEASED', `message ${seq} is under a live lease and cannot be cancelled; cancel it after its holder acks or nacks it, or once the lease runs out`);
}
