/**
 * The runtime's bookkeeping inside each execution (the reserved `$runtime` field) and the
 * deterministic ids of the events the runtime makes itself.
 *
 * Why inside the execution: it must change atomically with the state (a timer armed by a
 * commit, a suspension that must fence off a handler already running) and be visible to every
 * worker and tab that shares the store. Keeping it in the execution gets both from the store's
 * CAS for free.
 * @internal
 */
import type { Execution } from '../store/contract.js';
import type { Lease } from '../transport/contract.js';
import type { RuntimeEvent, SpawnedEvent, TimeoutEvent } from './types.js';

/** The reserved field. Handlers may read it; changes they make to it are discarded. */
export const CONTROL_FIELD = '$runtime';

/** The lease of a suspended execution's held event, enough to release it from any worker. */
export interface HeldLease {
  seq: number;
  attempt: number;
  workerId: string;
  groupId: string;
}

/** What the runtime keeps in `$runtime`. JSON-safe, so every store can hold it. */
export interface ControlState {
  suspended?: boolean;
  held?: HeldLease;
  /**
   * The handler wrapper that runs this execution (`'leasehold/schedule'` for the schedules'
   * own): a Runtime whose handler does not name it among its owners gives the event back.
   */
  owner?: string;
  /** Armed timers, `path → fireAt`: how a timeout that was re-armed or cancelled is recognised as stale. */
  timers: Record<string, number>;
}

/** A copy of `exe`'s control state (a default one for executions the runtime did not create). */
export function readControl(exe: Execution): ControlState {
  const raw = exe[CONTROL_FIELD] as Partial<ControlState> | undefined;
  const state: ControlState = { timers: { ...(raw?.timers ?? {}) } };
  if (raw?.suspended === true) state.suspended = true;
  if (raw?.held) state.held = { ...raw.held };
  if (typeof raw?.owner === 'string') state.owner = raw.owner;
  return state;
}

/** Where a wrapped handler lists the owners whose executions it runs (see {@link ControlState.owner}). */
const OWNERS = Symbol.for('leasehold.owners');

/** `handler`, marked as running the executions of `owners` (it must be a function made for the purpose: it is marked in place). */
export function ownedBy<H extends object>(handler: H, owners: readonly string[]): H {
  Object.defineProperty(handler, OWNERS, { value: Object.freeze([...owners]) });
  return handler;
}

/** The owners `handler` runs the executions of (none for a plain handler). */
export function ownersOf(handler: unknown): readonly string[] {
  const owners = (handler as { [OWNERS]?: readonly string[] } | null)?.[OWNERS];
  return Array.isArray(owners) ? owners : [];
}

/** Stores `state` into `exe` (a fresh object, so it never aliases what the handler saw). */
export function writeControl(exe: Execution, state: ControlState): void {
  exe[CONTROL_FIELD] = state;
}

/** A lease rebuilt from its stored fields; the transport needs nothing else to release it. */
export function leaseOf(held: HeldLease): Lease {
  return { ...held, event: null, expiresAt: 0 };
}

const part = (text: string): string => encodeURIComponent(text);

/**
 * The id of the timeout event of timer `(executionId, path)` armed for `fireAt`. Deterministic,
 * so a timer fired twice (a sweep that crashed before `deleteTimer`, two workers sweeping at
 * once) is one event, handled once; also its publish key, so a second publish while the first
 * is queued adds nothing.
 */
export function timeoutEventId(executionId: string, path: string, fireAt: number): string {
  return `timeout:${part(executionId)}:${part(path)}:${fireAt}`;
}

/** The timeout event a due timer delivers. */
export function timeoutEvent(executionId: string, path: string, fireAt: number): TimeoutEvent {
  return { id: timeoutEventId(executionId, path, fireAt), type: 'timeout', path, fireAt };
}

/** Whether `event` is a timeout the runtime made for `executionId` (not merely one typed so by a caller). */
export function isTimeoutFor(executionId: string, event: RuntimeEvent): event is TimeoutEvent {
  return (
    event.type === 'timeout' &&
    typeof event.path === 'string' &&
    typeof event.fireAt === 'number' &&
    event.id === timeoutEventId(executionId, event.path, event.fireAt)
  );
}

/** The spawned event of child `childId` of `parentId`: one id however often the spawn is relayed. */
export function spawnedEvent(parentId: string, childId: string, rootPath: string, context: Record<string, unknown>): SpawnedEvent {
  return { id: `spawned:${part(parentId)}:${part(childId)}`, type: 'spawned', parentId, rootPath, context: { ...context } };
}
