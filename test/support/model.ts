/**
 * A reference model of the transport contract, written for obviousness, not speed: the seed's
 * own algorithm (scan and sort every message on each claim) plus DESIGN.md's extensions.
 * The model-based tests run random command sequences against it and a real backend side by side.
 */
export interface ModelMessage {
  seq: number;
  groupId: string;
  event: unknown;
  /** One more for each replace or merge that changed the event (Lease.revision). */
  revision: number;
  key: string | null;
  /** A delayed publish or a coalescing window: not deliverable while now <= this. */
  notBefore: number | null;
  /** The bound of its coalescing window, set by the first publish with a window that met it. */
  deadline?: number;
  attempt: number;
  /** The last reason a nack or release gave. */
  lastError: string | null;
  holder: string | null;
  expiry: number | null;
  /** Seqs named in its `after` still in the queue (queued or dead): while any, it blocks its group at the head. */
  waits: Set<number>;
}

interface ModelGroup {
  priority: number;
  claimOrder: number;
}

export interface ModelLease {
  seq: number;
  groupId: string;
  workerId: string;
  attempt: number;
  expiresAt: number;
  revision: number;
}

export class TransportModel {
  messages: ModelMessage[] = [];
  groups = new Map<string, ModelGroup>();
  dead: { seq: number; groupId: string; priority: number; event: unknown; revision: number; attempt: number; deadAt: number; reason: string | null }[] = [];
  /** Group → the dead letter holding it (`onDeadLetter: 'hold'`). A held group stays while empty. */
  holds = new Map<string, number>();
  lastSeq = 0;
  counter = 0;
  /** pause() with no group: nothing is delivered. */
  pausedQueue = false;
  /** Groups paused by name, with messages or not. */
  pausedNames = new Set<string>();

  constructor(
    readonly maxAttempts = Infinity,
    readonly policy: 'continue' | 'hold' = 'continue',
  ) {}

  publish(
    groupId: string,
    event: unknown,
    priority: number,
    key: string | null,
    notBefore: number | null = null,
    onDuplicate: 'skip' | 'replace' | 'merge' = 'skip',
    now = 0,
    after: readonly number[] = [],
    window: { debounceMs: number; maxWaitMs: number | null } | null = null,
    afterGroups: readonly string[] = [],
  ): number {
    const same = key === null ? undefined : this.messages.find((m) => m.groupId === groupId && m.key === key);
    // A skip leaves a leased message alone, live lease or not; without a window it touches nothing.
    if (same && onDuplicate === 'skip' && (window === null || same.holder !== null)) return same.seq;
    if (same && same.holder !== null && same.expiry! >= now) {
      same.key = null; // under a live lease: a new message behind it takes the key
    } else if (same) {
      if (same.holder !== null) {
        same.holder = null; // its lease ran out: the late holder loses it
        same.expiry = null;
      }
      if (onDuplicate !== 'skip') {
        const changed = onDuplicate === 'replace' ? event : mergePatch(same.event, event);
        if (canonical(changed) !== canonical(same.event)) same.revision += 1;
        same.event = changed;
      }
      if (window !== null) {
        same.deadline ??= window.maxWaitMs === null ? Infinity : now + window.maxWaitMs;
        const until = Math.min(now + window.debounceMs, same.deadline);
        same.notBefore = Math.max(same.notBefore ?? -Infinity, until);
        // A head's wait (a park, a delay) is its expiry; a blocked or held one takes notBefore later.
        if (this.head(groupId) === same && same.waits.size === 0 && !this.holds.has(groupId)) {
          same.expiry = Math.max(same.expiry ?? -Infinity, same.notBefore);
        }
      }
      return same.seq;
    }
    const seq = ++this.lastSeq;
    const waits = new Set(after.filter((s) => this.messages.some((m) => m.seq === s) || this.dead.some((d) => d.seq === s)));
    // A group named in after: what it holds now, its messages and the dead letter holding it.
    for (const group of afterGroups) {
      for (const m of this.messages) if (m.groupId === group) waits.add(m.seq);
      if (this.holds.has(group)) waits.add(this.holds.get(group)!);
    }
    if (window !== null && window.debounceMs > 0) notBefore = Math.max(notBefore ?? -Infinity, now + window.debounceMs);
    const message: ModelMessage = { seq, groupId, event, revision: 0, key, notBefore, attempt: 0, lastError: null, holder: null, expiry: null, waits };
    if (window !== null) message.deadline = window.maxWaitMs === null ? Infinity : now + window.maxWaitMs;
    this.messages.push(message);
    if (!this.groups.has(groupId)) this.groups.set(groupId, { priority, claimOrder: 0 });
    return seq;
  }

  /** Whether the group's head waits for messages named in its `after`. */
  blocked(groupId: string): boolean {
    return !this.holds.has(groupId) && (this.head(groupId)?.waits.size ?? 0) > 0;
  }

  /** `seq` left the queue for good: nothing waits for it any more. */
  private satisfy(seq: number): void {
    for (const m of this.messages) m.waits.delete(seq);
  }

  /** Whether the group's head is leased, parked or (before its first delivery) delayed at `now`. */
  inFlight(groupId: string, now: number): boolean {
    const head = this.head(groupId);
    if (head && head.waits.size > 0) return false;
    return this.messages.some((m) => m.groupId === groupId && m.expiry !== null && m.expiry >= now) || (head?.notBefore != null && head.notBefore >= now);
  }

  head(groupId: string): ModelMessage | undefined {
    return this.messages.find((m) => m.groupId === groupId);
  }

  /** Returns true if removed, false if not queued, 'leased' if under a live lease. */
  cancel(seq: number, now: number): boolean | 'leased' {
    const m = this.messages.find((x) => x.seq === seq);
    if (!m) return false;
    if (m.holder !== null && m.expiry! >= now) return 'leased';
    this.remove(m);
    this.satisfy(seq);
    return true;
  }

  stats(now: number): unknown {
    let ready = 0;
    let leased = 0;
    let next: number | null = null;
    let blocked = 0;
    for (const groupId of this.groups.keys()) {
      if (this.holds.has(groupId)) continue;
      if (this.blocked(groupId)) {
        blocked++;
        continue;
      }
      const head = this.head(groupId)!;
      const until = head.expiry ?? head.notBefore;
      const paused = this.pausedQueue || this.pausedNames.has(groupId);
      if (until === null || until < now) {
        if (!paused) ready++;
      } else {
        if (head.holder !== null) leased++;
        if (!paused) next = next === null ? until : Math.min(next, until);
      }
    }
    const groups = this.groups.size;
    const held = this.holds.size;
    return {
      queued: this.messages.length,
      groups,
      ready,
      leased,
      waiting: groups - ready - leased - held - blocked,
      dead: this.dead.length,
      held,
      blocked,
      paused: this.pausedQueue,
      pausedGroups: this.pausedNames.size,
      nextReadyAt: next === null ? null : next + 1,
    };
  }

  /** Up to `max` successive claims at `now`: what claimMany must return. */
  claimMany(workerId: string, visibility: number, minPriority: number, max: number, now: number): ModelLease[] {
    const leases: ModelLease[] = [];
    for (let lease; leases.length < max && (lease = this.claim(workerId, visibility, minPriority, now)); ) leases.push(lease);
    return leases;
  }

  pause(groupId?: string): void {
    if (groupId === undefined) this.pausedQueue = true;
    else this.pausedNames.add(groupId);
  }

  resume(groupId?: string): void {
    if (groupId === undefined) this.pausedQueue = false;
    else this.pausedNames.delete(groupId);
  }

  claim(workerId: string, visibility: number, minPriority: number, now: number): ModelLease | null {
    if (this.pausedQueue) return null;
    for (;;) {
      const candidates = this.messages
        .filter((m) => (m.expiry === null || m.expiry < now) && !this.holds.has(m.groupId) && !this.pausedNames.has(m.groupId) && !this.blocked(m.groupId) && !this.inFlight(m.groupId, now) && this.groups.get(m.groupId)!.priority >= minPriority)
        .sort((a, b) => this.groups.get(a.groupId)!.claimOrder - this.groups.get(b.groupId)!.claimOrder || a.seq - b.seq);
      const m = candidates[0];
      if (!m) return null;
      if (m.attempt >= this.maxAttempts) {
        this.bury(m, now, null);
        continue;
      }
      m.attempt += 1;
      m.holder = workerId;
      m.expiry = now + visibility;
      this.groups.get(m.groupId)!.claimOrder = ++this.counter;
      return { seq: m.seq, groupId: m.groupId, workerId, attempt: m.attempt, expiresAt: m.expiry, revision: m.revision };
    }
  }

  held(lease: ModelLease): ModelMessage | undefined {
    return this.messages.find((m) => m.seq === lease.seq && m.attempt === lease.attempt && m.holder === lease.workerId && m.groupId === lease.groupId);
  }

  ack(lease: ModelLease): boolean {
    const m = this.held(lease);
    if (m) {
      this.remove(m);
      this.satisfy(m.seq);
    }
    return m !== undefined;
  }

  nack(lease: ModelLease, delay: number, now: number, reason: string | null = null): boolean {
    const m = this.held(lease);
    if (!m) return false;
    if (reason !== null) m.lastError = reason;
    m.holder = null;
    m.expiry = delay === 0 ? null : now + delay;
    return true;
  }

  /** nack that hands the attempt back (its reason kept as a nack's is). */
  release(lease: ModelLease, delay: number, now: number, reason: string | null = null): boolean {
    const m = this.held(lease);
    if (!m || !this.nack(lease, delay, now, reason)) return false;
    m.attempt -= 1;
    return true;
  }

  reject(lease: ModelLease, reason: string | null, now: number): boolean {
    const m = this.held(lease);
    if (m) this.bury(m, now, reason);
    return m !== undefined;
  }

  private bury(m: ModelMessage, now: number, reason: string | null): void {
    this.dead.push({ seq: m.seq, groupId: m.groupId, priority: this.groups.get(m.groupId)!.priority, event: m.event, revision: m.revision, attempt: m.attempt, deadAt: now, reason: reason ?? m.lastError });
    if (this.policy === 'hold') this.holds.set(m.groupId, m.seq);
    this.remove(m);
  }

  /** Deletes a dead letter: false if there is none. A group it held goes on. */
  discard(seq: number): boolean {
    const index = this.dead.findIndex((d) => d.seq === seq);
    if (index < 0) return false;
    const [letter] = this.dead.splice(index, 1);
    this.satisfy(seq);
    if (this.holds.get(letter!.groupId) === seq) {
      this.holds.delete(letter!.groupId);
      if (!this.head(letter!.groupId)) this.groups.delete(letter!.groupId);
    }
    return true;
  }

  /**
   * `discard(seq, { dependents })` and `cancelGroup(groupId, { dependents })`, written plainly:
   * the messages of each root's group from its seq on, the dead letter `dead`, and with
   * dependents every message waiting on a removed one with its group's later messages, again
   * and again until nothing is added. 'leased' (nothing removed) if any is under a live lease.
   */
  removeWithDependents(roots: readonly [string, number][], dead: number | null, dependents: boolean, now: number): { seqs: number[]; groups: string[] } | 'leased' {
    const chosen = new Set<ModelMessage>();
    const take = (groupId: string, from: number) => {
      for (const m of this.messages) if (m.groupId === groupId && m.seq >= from) chosen.add(m);
    };
    for (const [groupId, from] of roots) take(groupId, from);
    if (dependents && dead !== null) for (const m of this.messages) if (m.waits.has(dead)) take(m.groupId, m.seq);
    for (let size = -1; dependents && size !== chosen.size; ) {
      size = chosen.size;
      for (const removed of [...chosen]) for (const m of this.messages) if (m.waits.has(removed.seq)) take(m.groupId, m.seq);
    }
    if ([...chosen].some((m) => m.holder !== null && m.expiry! >= now)) return 'leased';
    const pairs: [number, string][] = [...chosen].map((m) => [m.seq, m.groupId]);
    const deadGroup = dead === null ? null : this.dead.find((d) => d.seq === dead)!.groupId;
    for (const m of [...chosen].sort((a, b) => b.seq - a.seq)) {
      this.remove(m);
      this.satisfy(m.seq);
    }
    if (dead !== null) {
      this.discard(dead);
      pairs.push([dead, deadGroup!]);
    }
    pairs.sort((a, b) => a[0] - b[0]);
    return { seqs: pairs.map(([seq]) => seq), groups: [...new Set(pairs.map(([, group]) => group))] };
  }

  extend(lease: ModelLease, visibility: number, now: number): number | null {
    const m = this.held(lease);
    if (!m) return null;
    m.expiry = now + visibility;
    return m.expiry;
  }

  redrive(seq: number): number | null {
    const index = this.dead.findIndex((d) => d.seq === seq);
    if (index < 0) return null;
    const [letter] = this.dead.splice(index, 1);
    if (this.holds.get(letter!.groupId) === seq) {
      // Back to the head it held, under its own seq (every message behind it has a later one).
      this.holds.delete(letter!.groupId);
      const at = this.messages.findIndex((m) => m.seq > seq);
      this.messages.splice(at < 0 ? this.messages.length : at, 0, { seq, groupId: letter!.groupId, event: letter!.event, revision: letter!.revision, key: null, notBefore: null, attempt: 0, lastError: null, holder: null, expiry: null, waits: new Set() });
      return seq;
    }
    const newSeq = ++this.lastSeq;
    // What waited for the dead letter waits for the message it became.
    for (const m of this.messages) if (m.waits.delete(seq)) m.waits.add(newSeq);
    this.messages.push({ seq: newSeq, groupId: letter!.groupId, event: letter!.event, revision: letter!.revision, key: null, notBefore: null, attempt: 0, lastError: null, holder: null, expiry: null, waits: new Set() });
    if (!this.groups.has(letter!.groupId)) this.groups.set(letter!.groupId, { priority: letter!.priority, claimOrder: 0 });
    return newSeq;
  }

  private remove(m: ModelMessage): void {
    this.messages.splice(this.messages.indexOf(m), 1);
    if (!this.holds.has(m.groupId) && !this.messages.some((x) => x.groupId === m.groupId)) this.groups.delete(m.groupId);
  }

  /** The model's view in the shape the tests compare `inspect()` against. */
  view(now: number): unknown {
    const order = [...this.groups.entries()].sort(
      ([a, ga], [b, gb]) => ga.claimOrder - gb.claimOrder || this.first(a) - this.first(b),
    );
    return order.map(([groupId, g]) => ({
      groupId,
      priority: g.priority,
      claimOrder: g.claimOrder,
      inFlight: !this.holds.has(groupId) && this.inFlight(groupId, now),
      heldBy: this.holds.get(groupId) ?? null,
      paused: this.pausedNames.has(groupId),
      messages: this.messages
        .filter((m) => m.groupId === groupId)
        .map((m) => {
          // What every state carries: what it waits for, and its window while that runs.
          const more = {
            key: m.key,
            lastError: m.lastError,
            waitsFor: [...m.waits].sort((a, b) => a - b),
            window: m.deadline !== undefined && m.notBefore !== null && m.notBefore >= now ? { endsAt: m.notBefore, latestEndAt: m.deadline === Infinity ? null : m.deadline } : null,
          };
          if (this.holds.has(groupId)) return { seq: m.seq, event: m.event, state: 'held', attempt: 0, holder: null, expiresAt: null, ...more };
          const paused = this.pausedQueue || this.pausedNames.has(groupId);
          if (paused && !(m.holder !== null && m.expiry! >= now)) return { seq: m.seq, event: m.event, state: 'paused', attempt: m.attempt, holder: null, expiresAt: null, ...more };
          if (m.waits.size > 0) return { seq: m.seq, event: m.event, state: 'blocked', attempt: m.attempt, holder: null, expiresAt: null, ...more };
          if (m.expiry === null) {
            const delayed = m.notBefore !== null && m.notBefore >= now;
            return { seq: m.seq, event: m.event, state: delayed ? 'delayed' : 'ready', attempt: m.attempt, holder: m.holder, expiresAt: delayed ? m.notBefore : null, ...more };
          }
          // A hold on a head with no delivery counted (a release of its first) reads as a delay.
          const state = m.holder !== null ? (m.expiry >= now ? 'leased' : 'expired') : m.expiry >= now ? (m.attempt === 0 ? 'delayed' : 'parked') : 'ready';
          return { seq: m.seq, event: m.event, state, attempt: m.attempt, holder: m.holder, expiresAt: state === 'ready' ? null : m.expiry, ...more };
        }),
    }));
  }

  private first(groupId: string): number {
    return this.messages.find((m) => m.groupId === groupId)?.seq ?? this.holds.get(groupId)!;
  }
}

/** RFC 7396, written out plainly for the model (the backends share their own). */
function mergePatch(target: unknown, patch: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const name of Object.keys(patch)) {
    if (patch[name] === null) delete out[name];
    else out[name] = mergePatch(out[name], patch[name]);
  }
  return out;
}

/** A JSON value as text with every object's members sorted: equal texts, equal values. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${canonical((value as Record<string, unknown>)[name])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}
