/**
 * What every transport backend shares so they behave identically: the argument checks (the same
 * inputs rejected with the same errors, before any data is touched) and how a message's lock
 * fields read as a state.
 * @internal
 */
import { checkDuration, checkId, checkInteger, checkObject, checkOptions } from '../validate.js';
import { LeaseholdError } from '../errors.js';
import { BLOCKED, HELD, NO_DEADLINE } from '../locks.js';
import { type ClaimManyOptions, type ClaimOptions, DEFAULT_QUEUE, type DeadLetterPolicy, type DuplicatePolicy, type Lease, MAX_BATCH, type MessageSnapshot, type PublishOptions, type Removed, type TransportOptions } from './contract.js';

export const MIN_PRIORITY = 0;

/** At most this many seqs in one publish's `after`. */
export const MAX_AFTER = 100;
export const MAX_PRIORITY = 4;

/** The checked options of one publish. `delayMs` 0 means no delay. */
export interface PublishArgs {
  priority: number;
  key: string | null;
  delayMs: number;
  onDuplicate: DuplicatePolicy;
  /** The seqs it waits for (`options.after`), without repeats; empty when none. */
  after: readonly number[];
  /** The groups it waits for (`options.after` entries `{ group }`), without repeats: resolved by the backend at publish. */
  afterGroups: readonly string[];
  /** The coalescing window (`options.debounceMs`); 0: none. */
  debounceMs: number;
  /** The window's bound (`options.maxWaitMs`); null: none. */
  maxWaitMs: number | null;
}

const DUPLICATE_POLICIES: readonly DuplicatePolicy[] = ['skip', 'replace', 'merge'];
const PUBLISH_OPTIONS = ['priority', 'key', 'onDuplicate', 'delayMs', 'after', 'debounceMs', 'maxWaitMs'];

/** Checks one publish; `at` prefixes argument names in messages (`items[3].` in a batch). */
export function checkPublish(groupId: unknown, options: PublishOptions | undefined, at = ''): PublishArgs {
  checkId(`${at}groupId`, groupId);
  checkOptions(`${at}options`, options, PUBLISH_OPTIONS, true);
  const priority = options?.priority ?? 0;
  checkInteger(`${at}options.priority`, priority, MIN_PRIORITY, MAX_PRIORITY);
  const key = options?.key;
  if (key !== undefined) checkId(`${at}options.key`, key);
  const delayMs = options?.delayMs ?? 0;
  checkDuration(`${at}options.delayMs`, delayMs, false);
  const onDuplicate: unknown = options?.onDuplicate ?? 'skip';
  if (!DUPLICATE_POLICIES.includes(onDuplicate as DuplicatePolicy)) {
    throw new RangeError(`${at}options.onDuplicate must be 'skip', 'replace' or 'merge', got ${JSON.stringify(onDuplicate) ?? String(onDuplicate)}`);
  }
  if (onDuplicate !== 'skip' && key === undefined) {
    throw new TypeError(`${at}options.onDuplicate ${JSON.stringify(onDuplicate)} needs options.key: it says what to do with the queued message of the same key`);
  }
  // A publish with neither option builds nothing for them: this runs on every publish.
  const { debounceMs, maxWaitMs } = options?.debounceMs === undefined && options?.maxWaitMs === undefined ? NO_WINDOW : checkWindow(at, options, key);
  const { seqs: after, groups: afterGroups } = options?.after === undefined ? NO_AFTER : checkAfter(`${at}options.after`, options.after);
  return { priority, key: key ?? null, delayMs, onDuplicate: onDuplicate as DuplicatePolicy, after, afterGroups, debounceMs, maxWaitMs };
}

const NO_WINDOW = Object.freeze({ debounceMs: 0, maxWaitMs: null });
const NO_AFTER: { seqs: readonly number[]; groups: readonly string[] } = Object.freeze({ seqs: Object.freeze([]), groups: Object.freeze([]) });

/** `options.debounceMs` and `options.maxWaitMs`: a window needs a key (it is the key's message that waits), a bound needs a window. */
function checkWindow(at: string, options: PublishOptions | undefined, key: string | undefined): { debounceMs: number; maxWaitMs: number | null } {
  const debounceMs = options?.debounceMs;
  const maxWaitMs = options?.maxWaitMs;
  if (debounceMs === undefined) {
    if (maxWaitMs !== undefined) throw new TypeError(`${at}options.maxWaitMs needs options.debounceMs: it bounds the coalescing window that debounceMs opens`);
    return { debounceMs: 0, maxWaitMs: null };
  }
  checkDuration(`${at}options.debounceMs`, debounceMs, false);
  if (key === undefined) throw new TypeError(`${at}options.debounceMs needs options.key: the window is the keyed message's, which later publishes of the key re-arm`);
  if (maxWaitMs === undefined) return { debounceMs, maxWaitMs: null };
  checkDuration(`${at}options.maxWaitMs`, maxWaitMs, false);
  if (maxWaitMs < debounceMs) throw new RangeError(`${at}options.maxWaitMs (${maxWaitMs}) must be ≥ options.debounceMs (${debounceMs}): the bound would end the window before it could first close`);
  return { debounceMs, maxWaitMs };
}

/**
 * When a keyed message that a publish with a window (`debounceMs` > 0) finds queued may first be
 * delivered, and the bound it keeps. The bound is set once, by the first publish with a window
 * that meets the message (`now + maxWaitMs`, or {@link NO_DEADLINE}); every later one moves the
 * wait to `now + debounceMs`, never past the bound. The caller keeps the later of this and the
 * message's own wait (a park, a delay, a hold), so a window never shortens one.
 */
export function rearm(debounceMs: number, maxWaitMs: number | null, deadline: number | null, now: number): { notBefore: number; deadline: number } {
  const bound = deadline ?? (maxWaitMs === null ? NO_DEADLINE : now + maxWaitMs);
  return { notBefore: Math.min(now + debounceMs, bound), deadline: bound };
}

/**
 * `options.after`: a seq, a group (`{ group }`), or an array of at most {@link MAX_AFTER} of
 * them, as lists without repeats.
 */
function checkAfter(name: string, after: unknown): { seqs: readonly number[]; groups: readonly string[] } {
  const one = typeof after === 'number' || (typeof after === 'object' && after !== null && !Array.isArray(after));
  if (!one && !Array.isArray(after)) throw new TypeError(`${name} must be a seq, { group }, or an array of them, got ${after === null ? 'null' : typeof after}`);
  const entries = one ? [after] : (after as unknown[]);
  if (entries.length > MAX_AFTER) throw new RangeError(`${name} names ${entries.length} seqs or groups; at most ${MAX_AFTER}`);
  const seqs = new Set<number>();
  const groups = new Set<string>();
  entries.forEach((entry, i) => {
    const at = one ? name : `${name}[${i}]`;
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      checkOptions(at, entry, ['group']);
      checkId(`${at}.group`, (entry as { group?: unknown }).group);
      groups.add((entry as { group: string }).group);
    } else {
      if (typeof entry !== 'number') throw new TypeError(`${at} must be a seq or { group }, got ${entry === null ? 'null' : typeof entry}`);
      checkInteger(at, entry, 1, Number.MAX_SAFE_INTEGER);
      seqs.add(entry);
    }
  });
  return { seqs: [...seqs], groups: [...groups] };
}

/** The RangeError of an `after` that names a seq the queue never issued (checked where the seqs are known). */
export function neverIssued(seq: number, lastSeq: number): RangeError {
  return new RangeError(`options.after names seq ${seq}, which this queue never issued (its last seq is ${lastSeq})`);
}

/** Checks a `publishMany` batch whole, before anything is written. */
export function checkPublishItems<E>(items: unknown): { groupId: string; event: E; args: PublishArgs }[] {
  if (!Array.isArray(items)) throw new TypeError(`items must be an array of { groupId, event, options? }, got ${items === null ? 'null' : typeof items}`);
  // Array.from, not map: map passes over a hole (an index never set), which would then be
  // published as nothing (or crash a backend midway); Array.from reads it as undefined, refused.
  return Array.from(items as unknown[], (item: unknown, i) => {
    checkOptions(`items[${i}]`, item, ['groupId', 'event', 'options']);
    const { groupId, event, options } = item as { groupId: unknown; event: E; options?: PublishOptions };
    const args = checkPublish(groupId, options, `items[${i}].`);
    return { groupId: groupId as string, event, args };
  });
}

export function checkClaim(workerId: unknown, visibilityMs: unknown, options: ClaimOptions | undefined, known: readonly string[] = ['minPriority']): number {
  checkId('workerId', workerId);
  checkDuration('visibilityMs', visibilityMs, true);
  checkOptions('options', options, known, true);
  const minPriority = options?.minPriority ?? 0;
  checkInteger('options.minPriority', minPriority, MIN_PRIORITY, MAX_PRIORITY);
  return minPriority;
}

/** The checked `max` of a `claimMany`, with its priority floor. */
export function checkClaimMany(workerId: unknown, visibilityMs: unknown, options: ClaimManyOptions | undefined): { minPriority: number; max: number } {
  checkObject('options', options);
  const minPriority = checkClaim(workerId, visibilityMs, options, ['minPriority', 'max']);
  checkInteger('options.max', options!.max, 1, MAX_BATCH);
  return { minPriority, max: options!.max };
}

/**
 * A lease must at least look like one this library handed out, and, when it names its queue,
 * name `queue` (null: leave that to whoever the lease is passed on to, as spreadTransport does).
 */
export function checkLease(lease: unknown, queue: string | null, name = 'lease'): asserts lease is Lease<unknown> {
  checkObject(name, lease);
  const { seq, attempt, workerId, groupId, queue: issuer } = lease as Record<string, unknown>;
  checkInteger(`${name}.seq`, seq, 1, Number.MAX_SAFE_INTEGER);
  checkInteger(`${name}.attempt`, attempt, 1, Number.MAX_SAFE_INTEGER);
  checkId(`${name}.workerId`, workerId);
  checkId(`${name}.groupId`, groupId);
  if (issuer === undefined) return;
  checkId(`${name}.queue`, issuer);
  if (queue !== null && issuer !== queue) {
    // Another queue's message with the same group, seq and attempt would otherwise be acted on.
    throw new RangeError(`${name} was issued by queue ${JSON.stringify(issuer)}, not by this transport's queue ${JSON.stringify(queue)}: pass each lease back to the transport that issued it`);
  }
}

/** Checks an `ackMany` batch whole, before anything is written. */
export function checkLeases<E>(leases: unknown, queue: string | null): asserts leases is readonly Lease<E>[] {
  if (!Array.isArray(leases)) throw new TypeError(`leases must be an array of leases, got ${leases === null ? 'null' : typeof leases}`);
  // Every index, not forEach: forEach passes over a hole, which a backend would then meet
  // midway through its acks (InMemoryTransport had acked the leases before it).
  for (let i = 0; i < leases.length; i++) checkLease(leases[i], queue, `leases[${i}]`);
}

export function checkSeq(seq: unknown): asserts seq is number {
  checkInteger('seq', seq, 1, Number.MAX_SAFE_INTEGER);
}

/** The largest event a queue takes unless its transport says otherwise: 1 MiB of JSON. */
export const DEFAULT_MAX_EVENT_BYTES = 1_048_576;

/** The transport options; `extra` names a backend's own (PostgreSQL's `schema`). */
export function checkTransportOptions(
  options: TransportOptions | undefined,
  extra: readonly string[] = [],
): { clock: () => number; maxAttempts: number; maxEventBytes: number; queue: string; onDeadLetter: DeadLetterPolicy | null } {
  checkOptions('options', options, ['clock', 'maxAttempts', 'maxEventBytes', 'onDeadLetter', 'queue', ...extra], true);
  const queue = options?.queue ?? DEFAULT_QUEUE;
  checkId('options.queue', queue);
  const clock: unknown = options?.clock ?? Date.now;
  if (typeof clock !== 'function') throw new TypeError('options.clock must be a function returning milliseconds');
  const maxAttempts = options?.maxAttempts;
  if (maxAttempts !== undefined) checkInteger('options.maxAttempts', maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  const maxEventBytes = options?.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  checkInteger('options.maxEventBytes', maxEventBytes, 1, Number.MAX_SAFE_INTEGER);
  const onDeadLetter = options?.onDeadLetter;
  if (onDeadLetter !== undefined && onDeadLetter !== 'continue' && onDeadLetter !== 'hold') {
    throw new RangeError(`options.onDeadLetter must be 'continue' or 'hold', got ${JSON.stringify(onDeadLetter) ?? String(onDeadLetter)}`);
  }
  return { clock: clock as () => number, maxAttempts: maxAttempts ?? Infinity, maxEventBytes, queue, onDeadLetter: onDeadLetter ?? null };
}

/**
 * Checks the policy a transport asked for (`requested`, null when left out) against the one its
 * queue keeps (`stored`, once some transport named one).
 * @throws LeaseholdError QUEUE_MISMATCH when the two differ.
 */
export function checkQueuePolicy(queue: string, stored: DeadLetterPolicy, requested: DeadLetterPolicy | null): void {
  if (requested !== null && requested !== stored) {
    throw new LeaseholdError(
      'QUEUE_MISMATCH',
      `queue ${JSON.stringify(queue)} keeps onDeadLetter ${JSON.stringify(stored)}, and this transport asked for ${JSON.stringify(requested)}: every process and tab of one queue works by the queue's policy; leave the option out to take it, or use another queue`,
    );
  }
}

/** Checks the optional `reason` of a reject: like an id, a non-empty string of well-formed Unicode. */
export function checkReason(reason: unknown): string | null {
  if (reason === undefined) return null;
  checkId('reason', reason);
  return reason;
}

/**
 * The state at `now` of a group's head, from its holder, the end of its lease or hold, and its
 * deliveries so far: a hold on a head never delivered is a delay, on one delivered a park.
 */
export function headState(holder: string | null, expiry: number | null, attempt: number, now: number): MessageSnapshot['state'] {
  if (expiry === null) return 'ready';
  if (expiry === HELD) return 'held';
  if (expiry === BLOCKED) return 'blocked';
  if (holder !== null) return expiry >= now ? 'leased' : 'expired';
  if (expiry < now) return 'ready';
  return attempt === 0 ? 'delayed' : 'parked';
}

/** The state at `now` of a message behind its group's head: it waits its turn, and maybe its time. */
export function waitingState(notBefore: number | null, now: number): MessageSnapshot['state'] {
  if (notBefore === BLOCKED) return 'blocked';
  return notBefore !== null && notBefore >= now ? 'delayed' : 'ready';
}

/**
 * `patch` applied to `target` as a JSON Merge Patch (RFC 7396), as a new value: neither input is
 * changed, and members of `target` the patch leaves alone are kept (the same objects). Every
 * backend merges by this one function, so a merge gives the same event everywhere.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[name];
      continue;
    }
    // defineProperty, not `=`: a member named `__proto__` (JSON.parse makes one) stays a member.
    const merged = mergePatch(Object.hasOwn(result, name) ? result[name] : undefined, value);
    Object.defineProperty(result, name, { value: merged, writable: true, enumerable: true, configurable: true });
  }
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A new origin id (see `Lease.origin`): 32 hex digits from `crypto.getRandomValues`, which every
 * runtime leasehold supports has, in secure contexts and out of them (unlike `randomUUID`).
 */
export function newOrigin(): string {
  const { crypto } = globalThis as unknown as { crypto: { getRandomValues(array: Uint8Array): Uint8Array } };
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => (b + 256).toString(16).slice(1)).join('');
}

/**
 * The delivery id of a message's content (see `Lease.deliveryId`): origin, queue (percent-encoded,
 * so the id splits on `/` and is printable ASCII), counter and revision.
 */
export function deliveryId(origin: string, queue: string, counter: number, revision: number): string {
  return `${origin}/${encodeURIComponent(queue)}/${counter}/${revision}`;
}

/**
 * Whether two events are the same JSON value: objects member for member in any order, arrays
 * item for item. What decides whether a `'replace'` or `'merge'` changed a message (and so its
 * revision); PostgreSQL decides the same with `jsonb` equality.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  // An object with toJSON (a Date, in memory) is compared as what it would be stored as.
  if (typeof (a as { toJSON?: unknown }).toJSON === 'function' || typeof (b as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.stringify(a) === JSON.stringify(b);
  }
  const left = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const right = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (left.length !== right.length) return false;
  return left.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Checks the options of `discard` and `cancelGroup`; true when dependents go too. */
export function checkRemoveOptions(options: unknown): boolean {
  checkOptions('options', options, ['dependents'], true);
  const dependents = (options as { dependents?: unknown } | undefined)?.dependents ?? false;
  if (typeof dependents !== 'boolean') throw new TypeError(`options.dependents must be a boolean, got ${typeof dependents}`);
  return dependents;
}

/** `Removed` from (seq, group) pairs in any order: seqs ascending, groups in the order of their lowest seq. */
export function removedOf(pairs: readonly (readonly [number, string])[]): Removed {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
  return { seqs: sorted.map(([seq]) => seq), groups: [...new Set(sorted.map(([, group]) => group))] };
}

/** The MESSAGE_LEASED error of a removal that would take a message under a live lease. */
export function leasedError(seq: number, what: string): LeaseholdError {
  return new LeaseholdError('MESSAGE_LEASED', `message ${seq} is under a live lease and cannot be ${what}; nothing was removed: try again after its holder acks or nacks it, or once the lease runs out`);
}
