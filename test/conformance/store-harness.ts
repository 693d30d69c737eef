/**
 * What the execution-store conformance suite needs from a backend, and a dump of a store read
 * through its public API only, to prove that a rejected call changed nothing.
 */
import type { ManualClock } from '../../src/clock.js';
import type { Execution, ExecutionStore, ExecutionStoreOptions } from '../../src/store/contract.js';

/** What a backend can do beyond the contract; tests that depend on it are gated on these, never on names. */
export interface StoreCaps {
  /** `load` returns the very object saved, and any value is accepted (the in-memory store). */
  identity: boolean;
  /** State survives closing and reopening the database. */
  persistent: boolean;
  /** Closes the underlying database and opens a new store over the same data. */
  reopen?: () => Promise<ExecutionStore>;
}

/** One fresh, empty store and how to clean it up. */
export interface StoreHarness {
  store: ExecutionStore;
  clock?: ManualClock;
  caps: StoreCaps;
  dispose(): Promise<void>;
}

/** Makes a fresh, empty store with `options`; rejects (and leaks nothing) when the store's constructor throws. */
export type MakeStoreHarness = (options?: ExecutionStoreOptions) => Promise<StoreHarness>;

/** Everything a store holds about the given executions and events, as plain data. */
export interface StoreDump {
  executions: Record<string, unknown>;
  outbox: unknown;
  spawns: unknown;
  timers: unknown;
  traces: Record<string, unknown>;
  processed: Record<string, boolean>;
}

/** The ids and `(executionId, eventId)` pairs a dump looks at (the contract has no "list all"). */
export interface DumpScope {
  ids: readonly string[];
  events?: readonly (readonly [string, string])[];
}

/** The far future (the last millisecond a Date can hold), as a `now` every timer is due by. */
export const END_OF_TIME = 8.64e15;

/** Reads everything the store holds about `scope` through its public API, deep-copied. */
export async function dumpStore(store: ExecutionStore, scope: DumpScope): Promise<StoreDump> {
  const executions: Record<string, unknown> = {};
  const traces: Record<string, unknown> = {};
  const processed: Record<string, boolean> = {};
  for (const id of scope.ids) {
    executions[id] = await store.load(id);
    traces[id] = await store.readTrace(id);
  }
  for (const [executionId, eventId] of scope.events ?? []) {
    processed[`${executionId}/${eventId}`] = await store.isProcessed(executionId, eventId);
  }
  // structuredClone: the in-memory store hands out live objects a later call could change.
  return structuredClone({
    executions,
    outbox: await store.pendingOutbox(),
    spawns: await store.pendingSpawns(),
    timers: await store.dueTimers(END_OF_TIME),
    traces,
    processed,
  });
}

/** A deep copy of an execution: a second writer holding its own object at the same version. */
export function copyOf<X extends Execution>(exe: X): X {
  return structuredClone(exe);
}
