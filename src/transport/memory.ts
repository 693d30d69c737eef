/**
 * InMemoryTransport: the transport contract in process memory, for tests, the demo and
 * single-process embedding. Same semantics as the SQL backends, proven by one conformance suite.
 *
 * The seed sorts every message on every claim (O(n log n)); here each group keeps its own FIFO
 * and the groups sit in heaps: free groups by claim order, one heap per priority so a priority
 * floor never scans the groups below it, and locked groups by expiry so a lapsed lease is found
 * without scanning. Each group is in exactly one heap (or none once empty) and moves between them
 * in place. Claim and ack cost O(log groups) whatever the backlog.
 *
 * This file holds the contract's methods: their checks, and the claim, give-back and publish
 * rules. The queue's state and the moves that keep its heaps true are in `memory/queue.ts`;
 * dead letters and holds in `memory/dead.ts`; the `after` waits in `memory/after.ts`; stats and
 * inspect in `memory/snapshot.ts`.
 */
import { ClosedError, LeaseholdError, LeaseLostError } from '../errors.js';
import { checkChoice, checkDuration, checkId, checkJson, checkJsonBytes, readClock, toJson } from '../validate.js';
import {
  checkClaim,
  checkClaimMany,
  checkLease,
  checkReason,
  checkLeases,
  checkPublish,
  checkPublishItems,
  checkSeq,
  checkRemoveOptions,
  leasedError,
  removedOf,
  deliveryId,
  mergePatch,
  neverIssued,
  checkTransportOptions,
  newOrigin,
  rearm,
  sameJson,
  type PublishArgs,
} from './shared.js';
import type {
  AckAndClaimManyResult,
  AckManyResult,
  ChangeNotifier,
  ClaimManyOptions,
  ClaimOptions,
  DeadLetter,
  DeadLetterPolicy,
  GroupInspection,
  Lease,
  PublishItem,
  PublishOptions,
  Removed,
  RemoveOptions,
  Transport,
  TransportOptions,
  TransportSnapshot,
  TransportStats,
} from './contract.js';
import { bury, deadLetters, discard, redrive } from './memory/dead.js';
import { type Group, MemoryQueue, type Message } from './memory/queue.js';
import { inspectGroupOf, inspectOf, statsOf } from './memory/snapshot.js';

/** Options of an {@link InMemoryTransport}: the transport options, and how it keeps events. */
export interface InMemoryTransportOptions extends TransportOptions {
  /**
   * `'identity'` (default): each event object itself is kept, and a claim returns the very
   * object that was published — the fastest, and what the seed describes; a `Date` stays a
   * `Date`, and a change to the object after the publish, or by a handler before a nack,
   * changes the queued message. `'json'`: a JSON copy is kept and every claim, snapshot and dead
   * letter hands out a fresh copy, as the SQL backends do (a `Date` comes back as its string,
   * nothing the caller does to an object reaches the queue): for tests of code that will run on
   * SQLite, PostgreSQL, the browser or a Durable Object.
   */
  events?: 'identity' | 'json';
}

/** A fresh copy of a value already known to be plain JSON. */
const jsonCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * The in-memory transport. By default keeps each event object itself (a claim returns the very
 * object that was published; `events: 'json'` keeps copies instead), yet refuses the events the
 * SQL backends refuse (a cycle, a BigInt, a function, `undefined`, NaN, a Map…: a TypeError
 * naming the value), so that code tested against it runs unchanged on them. Nothing survives
 * the process.
 */
export class InMemoryTransport<E = unknown> implements Transport<E>, ChangeNotifier {
  readonly #clock: () => number;
  /** The queue's name (`options.queue`), which its leases carry. */
  readonly #queueName: string;
  readonly #maxAttempts: number;
  readonly #maxEventBytes: number;
  /** `events: 'json'`: events are kept and handed out as copies. */
  readonly #copies: boolean;
  readonly #policy: DeadLetterPolicy;
  readonly #queue = new MemoryQueue<E>();
  /** This transport's origin: an in-memory database is made with the transport. */
  readonly #origin = newOrigin();
  #closed = false;

  /**
   * @param options the transport options (`clock`, default `Date.now`; `maxAttempts`, default
   *   unlimited; …) and `events` (`'identity'`, default, or `'json'`).
   * @throws TypeError / RangeError for a bad option.
   */
  constructor(options?: InMemoryTransportOptions) {
    const { clock, maxAttempts, maxEventBytes, queue, onDeadLetter } = checkTransportOptions(options, ['events']);
    this.#copies = checkChoice('options.events', options?.events, ['identity', 'json'], 'identity') === 'json';
    this.#maxEventBytes = maxEventBytes;
    this.#queueName = queue;
    this.#policy = onDeadLetter ?? 'continue';
    this.#clock = clock;
    this.#maxAttempts = maxAttempts;
  }

  async publish(groupId: string, event: E, options?: PublishOptions): Promise<number> {
    const args = checkPublish(groupId, options);
    // Refused exactly as the SQL backends refuse it, so code tested in memory runs on them.
    const kept = this.#keep('event', event);
    this.#ensureOpen();
    return this.#publish(groupId, kept, args, this.#waits(args) ? readClock(this.#clock) : 0);
  }

  async publishMany(items: readonly PublishItem<E>[]): Promise<number[]> {
    const checked = checkPublishItems<E>(items).map((item, i) => ({ ...item, event: this.#keep(`items[${i}].event`, item.event) }));
    this.#ensureOpen();
    const now = checked.some((item) => this.#waits(item.args)) ? readClock(this.#clock) : 0;
    // `after` names seqs issued before the batch (an item's own seq is not known until it
    // returns): checked whole first, so a bad one leaves nothing written.
    const lastSeq = this.#queue.lastSeq;
    for (const { args } of checked) for (const seq of args.after) if (seq > lastSeq) throw neverIssued(seq, lastSeq);
    return checked.map(({ groupId, event, args }) => this.#publish(groupId, event, args, now));
  }

  /** The event as it is kept: checked as the SQL backends check it; in `'json'` mode, their JSON copy. */
  #keep(name: string, event: E): E {
    if (!this.#copies) {
      checkJson(name, event, this.#maxEventBytes);
      return event;
    }
    const json = toJson(name, event);
    checkJsonBytes(name, json, this.#maxEventBytes);
    return JSON.parse(json) as E;
  }

  /** Copies of the events in what a read hands out (`'json'` mode), so a caller's change never reaches the queue. */
  #out<T extends { event: E }>(items: T[]): T[] {
    if (this.#copies) for (const item of items) item.event = jsonCopy(item.event);
    return items;
  }

  /** Whether a publish with `args` needs the clock: a delay or a window (a live lease is read with it too, but only then). */
  #waits(args: PublishArgs): boolean {
    return args.delayMs > 0 || args.debounceMs > 0;
  }

  /** `now` is the clock's reading when {@link #waits} says so, else unread (0). */
  #publish(groupId: string, event: E, args: PublishArgs, now: number): number {
    const { key, onDuplicate, after, afterGroups, debounceMs, maxWaitMs } = args;
    const queue = this.#queue;
    let waitsFor: readonly number[] = after.length === 0 ? after : queue.stillQueued(after);
    if (afterGroups.length > 0) waitsFor = [...new Set([...waitsFor, ...queue.heldIn(afterGroups)])];
    const group = key === null ? undefined : queue.groups.get(groupId);
    const existing = group?.keys.get(key!);
    if (!existing) return this.#append(groupId, event, args, waitsFor, now);
    if (existing.holder !== null) {
      if (existing.expiry! >= readClock(this.#clock)) {
        if (onDuplicate === 'skip') return existing.seq;
        // Under a live lease, maybe on the wire already: the new event goes behind it, with the key.
        existing.key = null;
        group!.keys.delete(key!);
        return this.#append(groupId, event, args, waitsFor, now);
      }
      if (onDuplicate === 'skip') return existing.seq;
      // The lease ran out: the late holder worked on the old event, so its ack must not count.
      existing.holder = null;
      existing.expiry = null;
      queue.markFree(group!);
    }
    if (onDuplicate !== 'skip') {
      const changed = onDuplicate === 'replace' ? event : (mergePatch(existing.event, event) as E);
      if (!sameJson(changed, existing.event)) existing.revision++;
      existing.event = changed;
    }
    if (debounceMs > 0) {
      const window = rearm(debounceMs, maxWaitMs, existing.deadline, now);
      queue.rearm(existing, window.notBefore, window.deadline);
    }
    if (onDuplicate !== 'skip' || debounceMs > 0) queue.listeners.notify();
    return existing.seq;
  }

  /** Appends a new message (no queued one of its key, or that one is under a live lease). */
  #append(groupId: string, event: E, { priority, key, delayMs, debounceMs, maxWaitMs }: PublishArgs, waitsFor: readonly number[], now: number): number {
    const wait = Math.max(delayMs, debounceMs);
    const deadline = debounceMs > 0 ? rearm(debounceMs, maxWaitMs, null, now).deadline : null;
    return this.#queue.append(groupId, event, priority, key, wait > 0 ? now + wait : null, waitsFor, undefined, deadline);
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
    return leases.map((lease) => ({ ...lease, lowWater: this.#queue.lowestQueued() }));
  }

  async ack(lease: Lease<E>): Promise<void> {
    const message = this.#held(lease);
    this.#queue.removeHead(this.#queue.groups.get(message.groupId)!);
    this.#queue.listeners.notify();
  }

  async ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>> {
    checkLeases<E>(leases, this.#queueName);
    this.#ensureOpen();
    return this.#ackMany(leases, { acked: [], lost: [] });
  }

  /** The body of ackMany: acks what still holds, sorts each lease into `done`, tells listeners. */
  #ackMany<R extends AckManyResult<E>>(leases: readonly Lease<E>[], done: R): R {
    const queue = this.#queue;
    for (const lease of leases) {
      const message = queue.holding(lease);
      if (message) queue.removeHead(queue.groups.get(message.groupId)!);
      (message ? done.acked : done.lost).push(lease);
    }
    if (done.acked.length > 0) queue.listeners.notify();
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
    this.#queue.removeHead(this.#queue.groups.get(message.groupId)!);
    this.#queue.listeners.notify();
    return this.#claim(workerId, visibilityMs, minPriority, now);
  }

  #claim(workerId: string, visibilityMs: number, minPriority: number, now: number): Lease<E> | null {
    const queue = this.#queue;
    if (queue.paused) return null;
    for (;;) {
      // Again after each dead letter: the group's next head may be held by a delay already past.
      queue.releaseLapsed(now);
      const group = queue.nextFreeGroup(minPriority);
      if (!group) return null;
      const message = group.fifo[group.head]!;
      if (message.attempt >= this.#maxAttempts) {
        // Poison message: out of its group, which keeps its place in the round-robin order.
        bury(queue, this.#policy, group, message, now, null);
        continue;
      }
      message.attempt += 1;
      message.holder = workerId;
      message.expiry = now + visibilityMs;
      queue.unheap(group); // before its claim order, the free heap's key, changes
      group.claimOrder = ++queue.claimCounter;
      queue.markLocked(group, message.expiry);
      return this.#lease(message, queue.lowestQueued());
    }
  }

  async nack(lease: Lease<E>, delayMs = 0, reason?: string): Promise<void> {
    this.#giveBack(lease, delayMs, false, reason);
  }

  async release(lease: Lease<E>, delayMs = 0, reason?: string): Promise<void> {
    this.#giveBack(lease, delayMs, true, reason);
  }

  async reject(lease: Lease<E>, reason?: string): Promise<void> {
    checkLease(lease, this.#queueName);
    const why = checkReason(reason);
    const message = this.#held(lease);
    bury(this.#queue, this.#policy, this.#queue.groups.get(message.groupId)!, message, readClock(this.#clock), why);
    this.#queue.listeners.notify();
  }

  /** nack (`keepAttempt` false) or release (true): the head goes back, free now or parked. */
  #giveBack(lease: Lease<E>, delayMs: number, keepAttempt: boolean, reason: unknown): void {
    checkLease(lease, this.#queueName);
    checkDuration('delayMs', delayMs, false);
    const why = checkReason(reason);
    const message = this.#held(lease);
    if (keepAttempt) message.attempt -= 1;
    if (why !== null) message.lastError = why;
    const group = this.#queue.groups.get(message.groupId)!;
    message.holder = null;
    if (delayMs === 0) {
      message.expiry = null;
      this.#queue.markFree(group);
    } else {
      message.expiry = readClock(this.#clock) + delayMs;
      this.#queue.markLocked(group, message.expiry);
    }
    this.#queue.listeners.notify();
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    checkLease(lease, this.#queueName);
    checkDuration('visibilityMs', visibilityMs, true);
    const message = this.#held(lease);
    message.expiry = readClock(this.#clock) + visibilityMs;
    this.#queue.markLocked(this.#queue.groups.get(message.groupId)!, message.expiry);
    return this.#lease(message, lease.lowWater);
  }

  async expireLeases(workerId: string): Promise<number> {
    checkId('workerId', workerId);
    this.#ensureOpen();
    const now = readClock(this.#clock);
    let ended = 0;
    for (const group of this.#queue.groups.values()) {
      const head = group.fifo[group.head];
      if (head?.holder !== workerId || head.expiry === null || head.expiry < now) continue;
      // One ms in the past: a lease is live while its expiry is not before now.
      head.expiry = now - 1;
      this.#queue.markLocked(group, head.expiry);
      ended++;
    }
    if (ended > 0) this.#queue.listeners.notify();
    return ended;
  }

  async stats(): Promise<TransportStats> {
    this.#ensureOpen();
    return statsOf(this.#queue, readClock(this.#clock));
  }

  async cancel(seq: number): Promise<boolean> {
    checkSeq(seq);
    this.#ensureOpen();
    const found = this.#queue.find(seq);
    if (!found) return false;
    if (this.#leased(found.group, found.index)) throw leased(seq);
    this.#cancelAt(found.group, found.index);
    return true;
  }

  /** Whether the message at `index` of `group` is under a live lease (only a head ever is). */
  #leased(group: Group<E>, index: number): boolean {
    const message = group.fifo[index]!;
    return index === group.head && message.holder !== null && message.expiry! >= readClock(this.#clock);
  }

  /** Removes the message at `index` of `group` from the queue, as a cancel. */
  #cancelAt(group: Group<E>, index: number): void {
    const queue = this.#queue;
    const message = group.fifo[index]!;
    if (index === group.head) {
      queue.removeHead(group);
      queue.listeners.notify();
      return;
    }
    group.fifo.splice(index, 1);
    if (message.key !== null) group.keys.delete(message.key);
    queue.queued--;
    queue.queuedCounters.delete(message.counter);
    message.gone = true;
    queue.satisfy(message.seq);
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    this.#ensureOpen();
    const snapshot = inspectOf(this.#queue, readClock(this.#clock));
    for (const group of snapshot.groups) this.#out(group.messages);
    this.#out(snapshot.deadLetters);
    return snapshot;
  }

  async inspectGroup(groupId: string): Promise<GroupInspection<E>> {
    checkId('groupId', groupId);
    this.#ensureOpen();
    const inspection = inspectGroupOf(this.#queue, groupId, readClock(this.#clock));
    if (inspection.group) this.#out(inspection.group.messages);
    this.#out(inspection.deadLetters);
    return inspection;
  }

  async deadLetters(): Promise<DeadLetter<E>[]> {
    this.#ensureOpen();
    return this.#out(deadLetters(this.#queue));
  }

  async redrive(seq: number): Promise<number> {
    checkSeq(seq);
    this.#ensureOpen();
    return redrive(this.#queue, seq);
  }

  async discard(seq: number, options?: RemoveOptions): Promise<Removed> {
    checkSeq(seq);
    const dependents = checkRemoveOptions(options);
    this.#ensureOpen();
    const letter = this.#queue.dead.get(seq);
    if (!dependents) {
      discard(this.#queue, seq); // NOT_FOUND when it is no dead letter
      return { seqs: [seq], groups: [letter!.groupId] };
    }
    if (letter) return this.#remove([[letter.groupId, seq + 1]], seq, letter.groupId, true);
    const found = this.#queue.find(seq);
    if (!found) throw new LeaseholdError('NOT_FOUND', `message ${seq} is neither a dead letter nor queued`);
    return this.#remove([[found.group.id, seq]], null, found.group.id, true);
  }

  async cancelGroup(groupId: string, options?: RemoveOptions): Promise<Removed> {
    checkId('groupId', groupId);
    const dependents = checkRemoveOptions(options);
    this.#ensureOpen();
    return this.#remove([[groupId, 0]], this.#queue.groups.get(groupId)?.heldBy ?? null, groupId, dependents);
  }

  /**
   * Removes the messages of each `[group, from]` root from seq `from` on, the dead letter
   * `dead` (of group `deadGroup`), and with `dependents` every message waiting on a removed one
   * with its group's later messages, transitively. Checked whole first: a live lease on any of
   * them refuses the call with nothing removed. Removed newest first, so every waiter is gone
   * before what it waits for, and no wait is counted off for a message about to go.
   */
  #remove(roots: readonly (readonly [string, number])[], dead: number | null, deadGroup: string, dependents: boolean): Removed {
    const queue = this.#queue;
    const chosen = new Map<number, Message<E>>();
    const pending: Message<E>[] = [];
    const take = (groupId: string, from: number) => {
      const group = queue.groups.get(groupId);
      if (!group) return;
      for (let i = group.head; i < group.fifo.length; i++) {
        const message = group.fifo[i]!;
        if (message.seq < from || chosen.has(message.seq)) continue;
        chosen.set(message.seq, message);
        pending.push(message);
      }
    };
    for (const [groupId, from] of roots) take(groupId, from);
    if (dependents && dead !== null) for (const waiter of queue.after.waitersOf(dead)) take(waiter.groupId, waiter.seq);
    while (dependents && pending.length > 0) {
      for (const waiter of queue.after.waitersOf(pending.pop()!.seq)) take(waiter.groupId, waiter.seq);
    }
    const removed = [...chosen.values()].sort((a, b) => b.seq - a.seq);
    for (const message of removed) {
      const group = queue.groups.get(message.groupId)!;
      if (this.#leased(group, group.fifo.indexOf(message, group.head))) throw leasedError(message.seq, 'removed');
    }
    for (const message of removed) {
      const group = queue.groups.get(message.groupId)!;
      this.#cancelAt(group, group.fifo.indexOf(message, group.head));
    }
    const pairs: [number, string][] = removed.map((message) => [message.seq, message.groupId]);
    if (dead !== null) {
      discard(queue, dead);
      pairs.push([dead, deadGroup]);
    }
    if (pairs.length > 0) queue.listeners.notify();
    return removedOf(pairs);
  }

  async pause(groupId?: string): Promise<void> {
    if (groupId !== undefined) checkId('groupId', groupId);
    this.#ensureOpen();
    this.#queue.pause(groupId);
  }

  async resume(groupId?: string): Promise<void> {
    if (groupId !== undefined) checkId('groupId', groupId);
    this.#ensureOpen();
    this.#queue.resume(groupId);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.listeners.clear();
  }

  /** Calls `listener` (on a microtask) after each publish, ack, nack and redrive. */
  onChange(listener: () => void): () => void {
    return this.#queue.listeners.add(listener);
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('transport');
  }

  /** The message `lease` still holds, or a LeaseLostError. */
  #held(lease: Lease<E>): Message<E> {
    checkLease(lease, this.#queueName);
    this.#ensureOpen();
    const message = this.#queue.holding(lease);
    if (!message) throw new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
    return message;
  }

  #lease(message: Message<E>, lowWater: number | undefined): Lease<E> {
    return {
      seq: message.seq,
      groupId: message.groupId,
      event: this.#copies ? jsonCopy(message.event) : message.event,
      workerId: message.holder!,
      attempt: message.attempt,
      expiresAt: message.expiry!,
      queue: this.#queueName,
      origin: this.#origin,
      counter: message.counter,
      lowWater,
      revision: message.revision,
      deliveryId: deliveryId(this.#origin, this.#queueName, message.counter, message.revision),
    };
  }
}

function leased(seq: number): LeaseholdError {
  return new LeaseholdError('MESSAGE_LEASED', `message ${seq} is under a live lease and cannot be cancelled; cancel it after its holder acks or nacks it, or once the lease runs out`);
}
