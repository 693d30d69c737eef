/**
 * The state of one in-memory queue: its messages in per-group FIFOs, and the heaps that say
 * which group a claim takes next. Apart from `InMemoryTransport` so that the transport reads as
 * the contract's methods (checks, then one move here), while the invariants of the heaps live in
 * one place: each group is in exactly one heap (or none: blocked, held, paused, or empty once
 * dropped) and moves between them in place, so claim and ack cost O(log groups).
 *
 * Its members are public to the files of the in-memory transport and to no one else (nothing
 * outside `src/transport/` imports this file).
 * @internal
 */
import { neverIssued, MAX_PRIORITY } from '../shared.js';
import { Listeners } from '../notifier.js';
import type { DeadLetter, Lease } from '../contract.js';
import { type HeapItem, MinHeap } from '../heap.js';
import { AfterWaits } from './after.js';

/** A message in the queue. */
export interface Message<E> {
  readonly seq: number;
  /** Its number among the queue's publishes (Lease.counter); kept by a redrive. */
  readonly counter: number;
  /** Its content's revision (Lease.revision): one more for each replace or merge that changed it. */
  revision: number;
  readonly groupId: string;
  /** Replaced or merged into by a publish with the same key and `onDuplicate`, while queued. */
  event: E;
  /** Cleared when a publish with the same key moves it to a new message (this one under a live lease). */
  key: string | null;
  /** Not deliverable while the clock reads ≤ this (a delayed publish, a coalescing window); null: no delay. */
  notBefore: number | null;
  /** The bound of its coalescing window (`maxWaitMs`), set by the first publish with a window that met it; null: none. */
  deadline: number | null;
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

/** A group of the queue: its FIFO, and where it sits among the heaps. */
export interface Group<E> extends HeapItem {
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

/** A dead letter, with its message's counter and revision, which a redrive gives back (and deadLetters() leaves out). */
export type Buried<E> = DeadLetter<E> & { counter: number; revision: number };

/** The round-robin order: the group claimed longest ago first, never-claimed groups by their head's seq. */
const byClaimOrder = <E>(a: Group<E>, b: Group<E>): boolean =>
  a.claimOrder < b.claimOrder || (a.claimOrder === b.claimOrder && a.firstSeq < b.firstSeq);
const byExpiry = <E>(a: Group<E>, b: Group<E>): boolean => a.lockedUntil < b.lockedUntil;

/**
 * One queue's messages, groups, heaps and counters, and the moves that keep the heaps true. The
 * transport checks arguments and the lease; every method here assumes they hold.
 */
export class MemoryQueue<E> {
  /** Groups with `heldBy` set. */
  heldCount = 0;
  /** The whole queue is paused: no claim delivers anything. */
  paused = false;
  /** Group ids paused by name, whether or not such a group holds messages now. */
  readonly pausedNames = new Set<string>();
  /** The groups of those names that exist now (with messages or a hold). */
  readonly pausedGroups = new Set<Group<E>>();
  /** Groups whose head waits for messages named in its `after`: in no heap until they are gone. */
  readonly blockedGroups = new Set<Group<E>>();
  readonly after = new AfterWaits<Message<E>>();
  readonly groups = new Map<string, Group<E>>();
  /** Free groups (head not leased or parked, or its lock ran out), one heap per priority. */
  readonly free: MinHeap<Group<E>>[] = Array.from({ length: MAX_PRIORITY + 1 }, () => new MinHeap<Group<E>>(byClaimOrder));
  /** Groups whose head is leased or parked, soonest expiry first. */
  readonly locked = new MinHeap<Group<E>>(byExpiry);
  readonly dead = new Map<number, Buried<E>>();
  lastCounter = 0;
  /** The counters of the messages in the queue, and a number no higher than the lowest of them. */
  readonly queuedCounters = new Set<number>();
  lowWater = 1;
  lastSeq = 0;
  claimCounter = 0;
  queued = 0;
  readonly listeners = new Listeners();

  /**
   * The low-water mark: the lowest counter still queued (see Lease.lowWater), found by stepping
   * the mark past numbers no longer queued: amortised O(1) per message, since it only moves up
   * (but for a redrive, which brings an old number back and the mark with it). Called only with
   * a message queued (one was just leased), so the walk ends.
   */
  lowestQueued(): number {
    while (!this.queuedCounters.has(this.lowWater)) this.lowWater++;
    return this.lowWater;
  }

  /** The seqs of `after` still in the queue (queued or dead); a seq never issued is a RangeError. */
  stillQueued(after: readonly number[]): number[] {
    const found: number[] = [];
    for (const seq of after) {
      if (seq > this.lastSeq) throw neverIssued(seq, this.lastSeq);
      if (this.dead.has(seq) || this.find(seq)) found.push(seq);
    }
    return found;
  }

  /** What groups `names` hold now, as seqs to wait for: every queued message, and the dead letter holding each. */
  heldIn(names: readonly string[]): number[] {
    const seqs: number[] = [];
    for (const name of names) {
      const group = this.groups.get(name);
      if (!group) continue;
      for (let i = group.head; i < group.fifo.length; i++) seqs.push(group.fifo[i]!.seq);
      if (group.heldBy !== null) seqs.push(group.heldBy);
    }
    return seqs;
  }

  /**
   * Where queued message `seq` is: its group and its index in the group's fifo. A scan: finding
   * by seq is rare (cancel, discard, `after`), so no index by seq, one Map entry less per message.
   */
  find(seq: number): { group: Group<E>; index: number } | undefined {
    for (const group of this.groups.values()) {
      for (let i = group.head; i < group.fifo.length; i++) if (group.fifo[i]!.seq === seq) return { group, index: i };
    }
    return undefined;
  }

  /** `seq` left the queue for good: what waited for it counts it off, and a group whose head waited for it last goes on. */
  satisfy(seq: number): void {
    const freed = this.after.release(seq);
    if (!freed) return;
    for (const message of freed) {
      const group = this.groups.get(message.groupId)!;
      if (group.heldBy === null && group.fifo[group.head] === message) this.headChanged(group);
    }
    this.listeners.notify();
  }

  /** Appends a message: a new publish, numbered next, unless `redriven` gives a redriven one's own number and revision. */
  append(
    groupId: string,
    event: E,
    priority: number,
    key: string | null,
    notBefore: number | null,
    waitsFor: readonly number[],
    redriven?: { counter: number; revision: number },
    deadline: number | null = null,
  ): number {
    const seq = ++this.lastSeq;
    const counter = redriven?.counter ?? ++this.lastCounter;
    this.queuedCounters.add(counter);
    const message: Message<E> = { seq, counter, revision: redriven?.revision ?? 0, groupId, event, key, notBefore, deadline, attempt: 0, lastError: null, holder: null, expiry: null, waits: waitsFor.length, gone: false };
    this.after.add(message, waitsFor);
    let group = this.groups.get(groupId);
    const isHead = !group;
    if (!group) {
      const paused = this.pausedNames.has(groupId);
      group = { id: groupId, priority, firstSeq: seq, claimOrder: 0, lockedUntil: 0, fifo: [], head: 0, keys: new Map(), heldBy: null, paused, heap: null, heapIndex: 0 };
      this.groups.set(groupId, group);
      if (paused) this.pausedGroups.add(group);
    }
    group.fifo.push(message);
    if (key !== null) group.keys.set(key, message);
    if (isHead) this.headChanged(group);
    this.queued++;
    this.listeners.notify();
    return seq;
  }

  /**
   * A publish with a window met `message` queued and not leased: it waits until `notBefore` too
   * (the later of its waits holds). Only a free head's lock moves; a blocked, held or paused
   * head takes its wait from `notBefore` when it goes on, as any head does.
   */
  rearm(message: Message<E>, notBefore: number, deadline: number): void {
    message.deadline = deadline;
    if (message.notBefore !== null && message.notBefore >= notBefore) return;
    message.notBefore = notBefore;
    const group = this.groups.get(message.groupId)!;
    if (group.fifo[group.head] !== message || message.waits > 0 || group.heldBy !== null) return;
    if (message.expiry !== null && message.expiry >= notBefore) return; // parked for longer
    message.expiry = notBefore;
    this.markLocked(group, notBefore);
  }

  /** A group has a new head: blocked by its `after`, free, or held until its delay ends. */
  headChanged(group: Group<E>): void {
    const head = group.fifo[group.head]!;
    if (head.waits > 0) {
      this.unheap(group);
      this.blockedGroups.add(group);
      return;
    }
    this.blockedGroups.delete(group);
    if (head.notBefore === null) {
      this.markFree(group);
    } else {
      head.expiry = head.notBefore;
      this.markLocked(group, head.notBefore);
    }
  }

  /**
   * The message `lease` still holds, if it does. Only a group's head is ever leased, so the
   * group's head is the one place to look (no index by seq: one Map entry less per message).
   */
  holding(lease: Lease<E>): Message<E> | undefined {
    const group = this.groups.get(lease.groupId);
    const message = group?.fifo[group.head];
    if (!message || message.seq !== lease.seq || message.attempt !== lease.attempt || message.holder !== lease.workerId) return undefined;
    return message;
  }

  /**
   * Takes the head out of its group (ack, cancel, or `dead`: to the dead letters, where what
   * waits for it waits on); drops the group when it is empty.
   */
  removeHead(group: Group<E>, dead = false): void {
    const message = group.fifo[group.head]!;
    message.gone = true;
    this.#leaveHead(group, message);
    if (!dead) this.satisfy(message.seq);
  }

  #leaveHead(group: Group<E>, message: Message<E>): void {
    group.fifo[group.head] = undefined as unknown as Message<E>;
    group.head += 1;
    this.queued--;
    this.queuedCounters.delete(message.counter);
    if (message.key !== null) group.keys.delete(message.key);
    if (group.heldBy !== null) {
      // Held: out of every heap, and kept while empty so that later publishes wait too.
      this.unheap(group);
      if (group.head === group.fifo.length) {
        group.fifo.length = 0;
        group.head = 0;
      }
      return;
    }
    if (group.head === group.fifo.length) {
      this.groups.delete(group.id);
      this.pausedGroups.delete(group);
      this.blockedGroups.delete(group);
      this.unheap(group);
      return;
    }
    if (group.head > 32 && group.head * 2 > group.fifo.length) {
      group.fifo.splice(0, group.head);
      group.head = 0;
    }
    if (group.claimOrder === 0) {
      // Only a cancel removes a never-claimed head: the next message takes its place in the order.
      this.unheap(group);
      group.firstSeq = group.fifo[group.head]!.seq;
    }
    this.headChanged(group);
  }

  /** Pauses the whole queue (no `groupId`) or the group of that name, now and when it next exists. */
  pause(groupId: string | undefined): void {
    if (groupId === undefined) {
      this.paused = true;
      return;
    }
    this.pausedNames.add(groupId);
    const group = this.groups.get(groupId);
    if (!group || group.paused) return;
    group.paused = true;
    this.pausedGroups.add(group);
    this.unheap(group);
  }

  /** Undoes {@link pause} of the whole queue or of one group's name. */
  resume(groupId: string | undefined): void {
    if (groupId === undefined) {
      if (!this.paused) return;
      this.paused = false;
    } else {
      if (!this.pausedNames.delete(groupId)) return;
      const group = this.groups.get(groupId);
      if (group) {
        group.paused = false;
        this.pausedGroups.delete(group);
        // A held group stays out of the heaps until its redrive or discard.
        if (group.heldBy === null && group.head < group.fifo.length) this.#placeHead(group);
      }
    }
    this.listeners.notify();
  }

  /** Takes `group` out of whichever heap holds it. */
  unheap(group: Group<E>): void {
    (group.heap as MinHeap<Group<E>> | null)?.remove(group);
  }

  markFree(group: Group<E>): void {
    if (group.paused) return this.unheap(group);
    const heap = this.free[group.priority]!;
    if (group.heap === heap) return;
    this.unheap(group);
    heap.push(group);
  }

  markLocked(group: Group<E>, until: number): void {
    this.unheap(group);
    group.lockedUntil = until;
    if (!group.paused) this.locked.push(group);
  }

  /** Puts a resumed group back where its head's lease, park or delay says (none: free). */
  #placeHead(group: Group<E>): void {
    const head = group.fifo[group.head]!;
    if (head.waits > 0) return; // blocked: in no heap until what it names is gone
    const expiry = head.expiry;
    if (expiry === null) this.markFree(group);
    else this.markLocked(group, expiry);
  }

  /** Moves groups whose lease or park ran out (`expiry < now`) back among the free ones. */
  releaseLapsed(now: number): void {
    const locked = this.locked;
    for (let top = locked.peek(); top && top.lockedUntil < now; top = locked.peek()) {
      locked.remove(top);
      this.free[top.priority]!.push(top);
    }
  }

  /** The free group the round-robin order serves next among priorities ≥ `minPriority`. */
  nextFreeGroup(minPriority: number): Group<E> | undefined {
    let best: Group<E> | undefined;
    for (let priority = minPriority; priority <= MAX_PRIORITY; priority++) {
      const top = this.free[priority]!.peek();
      if (top && (!best || byClaimOrder(top, best))) best = top;
    }
    return best;
  }
}
