/**
 * The execution store: the durable state of per-entity workflows ("executions") and everything
 * that must change together with it at an event boundary.
 *
 * Terminology
 * - **Execution**: a plain object with a string `id` and an integer `version`; every other field
 *   belongs to the caller (status, context, children …). One execution per order, upload, document.
 * - **CAS** (compare-and-swap): a write succeeds only when the writer holds the version the store
 *   has; the store then bumps the version by one, in the writer's object too. A writer that held a
 *   stale copy gets a {@link StoreConflictError} and nothing is written.
 * - **Outbox**: events a commit emitted, kept in the same atomic write as the execution and
 *   delivered later by a relay (`pendingOutbox` → deliver → `ackOutbox`). Never lost, never sent
 *   before the state that caused them is saved.
 * - **Dedupe mark**: `(executionId, eventId)` recorded by the commit that handled the event, so a
 *   redelivered event is recognised (`isProcessed`) and skipped.
 * - **Timer**: `(executionId, path) → fireAt` (ms). Scheduling the same key again replaces it.
 * - **Spawn**: an intent, recorded with the parent's commit, to create a child execution later.
 * - **Trace**: an opt-in per-execution timeline of steps, a ring of the last `traceMax` (default
 *   200; 0 keeps all) with an `index` that keeps climbing after old steps are dropped.
 * - **Seq**: the ack token of an outbox or spawn entry; each list counts from 1 and never reuses one.
 *
 * Every method returns a Promise. Invalid arguments reject with a `TypeError` (wrong type) or
 * `RangeError` (right type, bad value) naming the argument, before anything is written. Any call
 * after `close()` (except `close()` itself) rejects with a `ClosedError`.
 */
import type { StoreConflictError } from '../errors.js';

/** A workflow's state. The store reads only `id` and `version`; all other fields are the caller's. */
export interface Execution {
  /** Non-empty string, unique within the store. */
  id: string;
  /** Non-negative integer; 0 for a new execution. The store bumps it by one on every successful write. */
  version: number;
  [field: string]: unknown;
}

/** A timer operation of a commit: arm (or re-arm) `path` to fire at `fireAt`, or disarm it. */
export type TimerChange = { action: 'schedule'; path: string; fireAt: number } | { action: 'cancel'; path: string };

/** An event a commit emits to another execution (`targetId`) or to nobody in particular (`null`). */
export interface EmitChange {
  targetId: string | null;
  event: unknown;
}

/** A child execution a commit asks to be created, starting at `rootPath` with `context`. */
export interface SpawnChange {
  childId: string;
  rootPath: string;
  context: Record<string, unknown>;
}

/** Everything that lands together with the execution in one {@link ExecutionStore.commit}. */
export interface CommitChanges {
  /** Appended to the outbox, in this order. */
  emits?: EmitChange[];
  /** Marks this event of the execution as handled (see {@link ExecutionStore.isProcessed}). */
  processedEventId?: string;
  /** Applied in order: a later op on the same path wins. */
  timers?: TimerChange[];
  /** Appended to the spawn list, in this order; each `context` is shallow-copied. */
  spawns?: SpawnChange[];
  /** One trace step, recorded as by {@link ExecutionStore.appendTrace}. */
  trace?: Record<string, unknown>;
}

/** An emitted event waiting for the relay. `seq` is its ack token. */
export interface OutboxEntry {
  seq: number;
  targetId: string | null;
  event: unknown;
}

/** A child waiting to be created. `context` is a snapshot taken at commit time. */
export interface SpawnEntry {
  seq: number;
  parentId: string;
  childId: string;
  rootPath: string;
  context: Record<string, unknown>;
}

/** An armed timer whose time has come. Pass all three fields back to `deleteTimer`. */
export interface DueTimer {
  executionId: string;
  path: string;
  fireAt: number;
}

/** A recorded trace step: the caller's entry plus its `index` (its own explicit `index`, if it had one). */
export type TraceStep = Record<string, unknown> & { index: unknown };

/** Options shared by every store backend. */
export interface ExecutionStoreOptions {
  /** How many trace steps to keep per execution: a non-negative integer, default 200; 0 keeps all. */
  traceMax?: number;
}

/** The trace ring size when none is given, as in the seed. */
export const DEFAULT_TRACE_MAX = 200;

/**
 * Durable execution state with a transactional outbox, dedupe marks, timers, spawns and a trace.
 * Implemented by `InMemoryStore` (identity, no copies, not durable) and `SqliteStore` (JSON in
 * SQLite, one transaction per commit); both pass one conformance suite.
 */
export interface ExecutionStore<X extends Execution = Execution> {
  /** The execution stored under `id`, or undefined. Whether it is a copy depends on the backend. */
  load(id: string): Promise<X | undefined>;
  /**
   * Writes `exe` if no other writer got there first (CAS), then bumps `exe.version` in place.
   * @throws {@link StoreConflictError} when a newer version is stored; nothing is written and `exe` is untouched.
   */
  save(exe: X): Promise<void>;
  /**
   * Writes `exe` and all of `changes` atomically: all of it lands, or none. CAS is checked first:
   * a stale writer gets a {@link StoreConflictError} and the execution, outbox, dedupe marks,
   * timers, spawns and trace stay exactly as they were. On success `exe.version` is bumped in place.
   */
  commit(exe: X, changes?: CommitChanges): Promise<void>;
  /** Whether a commit of `executionId` recorded `eventId` as its `processedEventId`. */
  isProcessed(executionId: string, eventId: string): Promise<boolean>;
  /** Unacked outbox entries, lowest seq first, at most `limit` (a positive integer; default all). */
  pendingOutbox(limit?: number): Promise<OutboxEntry[]>;
  /** Drops the outbox entry `seq`. Acking an unknown or already acked seq does nothing. */
  ackOutbox(seq: number): Promise<void>;
  /** Unacked spawn entries, lowest seq first, at most `limit` (a positive integer; default all). */
  pendingSpawns(limit?: number): Promise<SpawnEntry[]>;
  /** Drops the spawn entry `seq`. Acking an unknown or already acked seq does nothing. */
  ackSpawn(seq: number): Promise<void>;
  /** Every armed timer with `fireAt <= now`, earliest first. Reading does not disarm them. */
  dueTimers(now: number): Promise<DueTimer[]>;
  /**
   * Disarms the timer only if it is still armed for exactly `fireAt`, so a sweep that read a
   * timer before it was re-armed cannot delete the new one. Resolves whether it deleted.
   */
  deleteTimer(executionId: string, path: string, fireAt: number): Promise<boolean>;
  /**
   * Records `{ ...entry, index }` in the execution's trace. `index` is the execution's next step
   * number (0, 1, 2 … never reused, even after trimming) unless `entry.index` is defined, which is
   * kept as given; either way the step number advances. The oldest steps beyond `traceMax` are dropped.
   */
  appendTrace(executionId: string, entry: object): Promise<void>;
  /** The execution's kept trace steps, oldest first, as a new array (empty if none). */
  readTrace(executionId: string): Promise<TraceStep[]>;
  /**
   * Removes the execution, its dedupe marks, timers and trace (a later execution with the same id
   * starts its trace at index 0). Outbox and spawn entries it emitted stay: they are deliveries
   * to others. Deleting an unknown id does nothing.
   */
  delete(executionId: string): Promise<void>;
  /** Marks the store closed; later calls reject with `ClosedError`. Idempotent. */
  close(): Promise<void>;
}
