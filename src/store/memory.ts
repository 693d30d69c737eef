/**
 * The in-memory execution store: the seed's DictStore, for tests, demos and single-process hosts.
 * Nothing survives the process.
 */
import { ClosedError, StoreConflictError } from '../errors.js';
import { checkId, checkObject, checkTime } from '../validate.js';
import { checkChanges, checkExecution, checkLimit, checkSeq, checkStoreOptions, stepIndex, type CheckedChanges } from './checks.js';
import type {
  CommitChanges,
  DueTimer,
  Execution,
  ExecutionStore,
  ExecutionStoreOptions,
  OutboxEntry,
  SpawnEntry,
  TraceStep,
} from './contract.js';
import { TimerIndex } from './timer-index.js';

interface TraceRing {
  steps: TraceStep[];
  /** The next step number; survives trimming so indices keep climbing. */
  next: number;
}

/**
 * An {@link ExecutionStore} in plain maps, with the seed's identity contract: `load` returns the
 * very object that was saved, and the store keeps events, emits and trace entries as the objects
 * it was given, accepting any value (nothing is serialized; a later mutation by the caller is
 * visible through the store). The spawn context is the one copy it makes (shallow, at commit).
 * Records it returns (`pendingOutbox`, `pendingSpawns`, `readTrace`) are fresh arrays of fresh
 * record objects, so a caller cannot rewrite the store's seqs or indices by mutating them.
 *
 * The CAS rule is the seed's, with its three exemptions: a write conflicts only when a
 * *different* object is stored under the same id at a *different* version. Writing the stored
 * object itself, a first write, and a different object at the stored version all succeed.
 *
 * Every method body runs without awaiting, so calls never interleave inside one another.
 *
 * @throws TypeError / RangeError from the constructor for a bad `traceMax` (see {@link ExecutionStoreOptions}).
 */
export class InMemoryStore<X extends Execution = Execution> implements ExecutionStore<X> {
  readonly #byId = new Map<string, X>();
  // Maps iterate in insertion order and seqs only grow, so each is a FIFO with O(1) ack by seq.
  readonly #outbox = new Map<number, OutboxEntry>();
  readonly #spawns = new Map<number, SpawnEntry>();
  readonly #processed = new Map<string, Set<string>>();
  readonly #timers = new TimerIndex();
  readonly #trace = new Map<string, TraceRing>();
  readonly #traceMax: number;
  #seq = 0;
  #spawnSeq = 0;
  #closed = false;

  constructor(options?: ExecutionStoreOptions) {
    this.#traceMax = checkStoreOptions(options);
  }

  async load(id: string): Promise<X | undefined> {
    this.#ensureOpen();
    checkId('id', id);
    return this.#byId.get(id);
  }

  async save(exe: X): Promise<void> {
    this.#ensureOpen();
    checkExecution(exe);
    this.#swap(exe);
  }

  async commit(exe: X, changes?: CommitChanges): Promise<void> {
    this.#ensureOpen();
    checkExecution(exe);
    const checked = checkChanges(changes);
    // CAS first: a losing writer throws here, before any other structure is touched.
    this.#swap(exe);
    this.#apply(exe.id, checked);
  }

  async isProcessed(executionId: string, eventId: string): Promise<boolean> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkId('eventId', eventId);
    return this.#processed.get(executionId)?.has(eventId) ?? false;
  }

  async pendingOutbox(limit?: number): Promise<OutboxEntry[]> {
    this.#ensureOpen();
    checkLimit(limit);
    return take(this.#outbox.values(), limit, (e) => ({ seq: e.seq, targetId: e.targetId, event: e.event }));
  }

  async ackOutbox(seq: number): Promise<void> {
    this.#ensureOpen();
    checkSeq(seq);
    this.#outbox.delete(seq);
  }

  async pendingSpawns(limit?: number): Promise<SpawnEntry[]> {
    this.#ensureOpen();
    checkLimit(limit);
    return take(this.#spawns.values(), limit, (s) => ({ ...s, context: copyRecord(s.context) }));
  }

  async ackSpawn(seq: number): Promise<void> {
    this.#ensureOpen();
    checkSeq(seq);
    this.#spawns.delete(seq);
  }

  async dueTimers(now: number): Promise<DueTimer[]> {
    this.#ensureOpen();
    checkTime('now', now);
    return this.#timers.due(now);
  }

  async deleteTimer(executionId: string, path: string, fireAt: number): Promise<boolean> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkId('path', path);
    checkTime('fireAt', fireAt);
    return this.#timers.cancel(executionId, path, fireAt);
  }

  async appendTrace(executionId: string, entry: object): Promise<void> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkObject('entry', entry);
    this.#record(executionId, entry);
  }

  async readTrace(executionId: string): Promise<TraceStep[]> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    return this.#trace.get(executionId)?.steps.map((step) => copyRecord(step) as TraceStep) ?? [];
  }

  async delete(executionId: string): Promise<void> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    this.#byId.delete(executionId);
    this.#processed.delete(executionId);
    this.#timers.cancelAll(executionId);
    this.#trace.delete(executionId);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('InMemoryStore');
  }

  /** The seed's CAS, verbatim in meaning; on success the object is stored with its version bumped. */
  #swap(exe: X): void {
    const prev = this.#byId.get(exe.id);
    if (prev !== undefined && prev !== exe && prev.version !== exe.version) {
      throw new StoreConflictError(exe.id, exe.version, prev.version);
    }
    exe.version += 1;
    this.#byId.set(exe.id, exe);
  }

  #apply(executionId: string, changes: CheckedChanges): void {
    for (const { targetId, event } of changes.emits) {
      const seq = ++this.#seq;
      this.#outbox.set(seq, { seq, targetId, event });
    }
    if (changes.processedEventId !== undefined) {
      let marks = this.#processed.get(executionId);
      if (marks === undefined) this.#processed.set(executionId, (marks = new Set()));
      marks.add(changes.processedEventId);
    }
    for (const op of changes.timers) {
      if (op.action === 'schedule') this.#timers.schedule(executionId, op.path, op.fireAt);
      else this.#timers.cancel(executionId, op.path);
    }
    for (const { childId, rootPath, context } of changes.spawns) {
      const seq = ++this.#spawnSeq;
      this.#spawns.set(seq, { seq, parentId: executionId, childId, rootPath, context: copyRecord(context) });
    }
    if (changes.trace !== undefined) this.#record(executionId, changes.trace);
  }

  #record(executionId: string, entry: Record<string, unknown>): void {
    let ring = this.#trace.get(executionId);
    if (ring === undefined) this.#trace.set(executionId, (ring = { steps: [], next: 0 }));
    const step = copyRecord(entry) as TraceStep;
    step.index = stepIndex(entry, ring.next++);
    ring.steps.push(step);
    // traceMax is fixed for the store's life, so the ring is at most one step over.
    if (this.#traceMax > 0 && ring.steps.length > this.#traceMax) ring.steps.shift();
  }
}

/**
 * A shallow copy, like `{ ...record }`. Object.assign is ~7× faster in V8 for the small records
 * this store copies on every commit, but it would run the `__proto__` setter for an own
 * `__proto__` key (JSON.parse makes those), so such records take the slow, exact path.
 */
function copyRecord(record: Record<string, unknown>): Record<string, unknown> {
  return Object.hasOwn(record, '__proto__') ? { ...record } : Object.assign({}, record);
}

function take<T, R>(values: Iterable<T>, limit: number | undefined, copy: (value: T) => R): R[] {
  const out: R[] = [];
  for (const value of values) {
    if (limit !== undefined && out.length >= limit) break;
    out.push(copy(value));
  }
  return out;
}
