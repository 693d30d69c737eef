/**
 * The demo's database: opening it (OPFS or memory), emptying it for a lesson through the public
 * API, and counting the calls in flight so the page (and its tests) can tell when it is settled.
 */
import type { DeadLetterPolicy, ExecutionStore } from 'leasehold';
import { type BrowserDatabase, openBrowserDatabase } from 'leasehold/browser';
import type { DemoClock } from './clock.ts';

export type Storage = 'opfs' | 'memory';

/** Small on purpose: a lesson's execution runs past it, so the ring visibly drops old steps. */
export const TRACE_MAX = 8;
/** A poison message is delivered this often, then dead-lettered. */
export const MAX_ATTEMPTS = 4;

/**
 * Opens the demo's database for `storage` whose queue has the dead-letter policy `onDeadLetter`.
 * The policy is the queue's own, kept in its file, so each policy has its own database: lesson 9
 * (`'hold'`) opens another file than the other lessons (`'continue'`).
 */
export function openDemoDatabase(storage: Storage, clock: DemoClock, onDeadLetter: DeadLetterPolicy = 'continue'): Promise<BrowserDatabase> {
  return openBrowserDatabase({
    // Two names, so a memory database in this tab never contends with the shared OPFS one.
    name: `${storage === 'opfs' ? 'leasehold-demo' : 'leasehold-demo-memory'}${onDeadLetter === 'hold' ? '-hold' : ''}`,
    storage,
    clock: clock.now,
    maxAttempts: MAX_ATTEMPTS,
    onDeadLetter,
    traceMax: TRACE_MAX,
    // The SQL panel shows the owner's statements. Off by default in the library; on here.
    traceSql: true,
  });
}

/** Calls to the database that have not answered yet. */
export class Activity {
  pending = 0;
  /** Called after each call answers: what it changed is worth a new snapshot. */
  onSettle = (): void => {};

  track<T>(promise: Promise<T>): Promise<T> {
    this.pending++;
    return promise.finally(() => {
      this.pending--;
      this.onSettle();
    });
  }

  /** `target` with each method's promise counted; everything else passes through unchanged. */
  wrap<T extends object>(target: T): T {
    const wrapped: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(target)) {
      wrapped[key] = typeof value === 'function' ? (...args: unknown[]) => this.#maybe(value.apply(target, args)) : value;
    }
    return wrapped as T;
  }

  #maybe(result: unknown): unknown {
    return result instanceof Promise ? this.track(result) : result;
  }
}

/**
 * Empties the queue and the given executions with the public API only, so a lesson starts
 * clean: time first jumps past every lease and park (so everything is claimable), then each
 * message is claimed and acked, each dead letter redriven and drained. Afterwards nothing in the
 * database depends on time, so the caller may restart the clock at 0. Returns the count drained.
 */
export async function drain(db: BrowserDatabase, clock: DemoClock, executions: Iterable<string>): Promise<number> {
  const { transport } = db;
  const snapshot = await transport.inspect();
  let latest = clock.now();
  for (const group of snapshot.groups) for (const m of group.messages) if (m.expiresAt !== null) latest = Math.max(latest, m.expiresAt + 1);
  clock.set(latest);
  let drained = 0;
  // A claim may dead-letter a message that had its last attempt: go round until both are empty.
  for (let dead = await transport.deadLetters(); ; dead = await transport.deadLetters()) {
    for (const letter of dead) await transport.redrive(letter.seq);
    let claimed = 0;
    for (let lease = await transport.claim('lesson-reset', 60_000); lease; lease = await transport.claim('lesson-reset', 60_000)) {
      await transport.ack(lease);
      claimed++;
    }
    drained += claimed;
    if (dead.length === 0 && claimed === 0) break;
  }
  await deleteAll(db.store, executions);
  return drained;
}

async function deleteAll(store: ExecutionStore, ids: Iterable<string>): Promise<void> {
  for (const id of ids) await store.delete(id);
}
