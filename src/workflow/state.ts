/**
 * A workflow's durable state inside its execution (the reserved field `$workflow`): the
 * workflow's name and input, its status, the history of recorded steps and the inbox of events
 * no wait has taken yet. Everything here is JSON, so every store keeps it as it is; and it is a
 * field of the execution, so each change lands with the store's CAS and the commit's effects.
 * @internal
 */
import type { EmitEffect } from '../runtime/types.js';
import type { Execution } from '../store/contract.js';
import { toJson } from '../validate.js';
import type { ErrorInfo, StepKind, WorkflowEvent, WorkflowSnapshot, WorkflowStatus } from './types.js';

/** The reserved execution field. */
export const WORKFLOW_FIELD = '$workflow';

/** The `rootPath` of a spawn that starts a child workflow (its context names the workflow and input). */
export const CHILD_ROOT = 'workflow';

/** The event types the workflows' own events carry. */
export const EVENT = {
  start: 'workflow.start',
  next: 'workflow.continue',
  send: 'workflow.event',
  child: 'workflow.child',
  cancel: 'workflow.cancel',
} as const;

/** One recorded step. `pending` only on the last one, while it waits. */
export interface StepRecord {
  kind: StepKind;
  name: string;
  pending?: true;
  /** run: what `fn` returned (absent for undefined); child: the child's result. */
  result?: unknown;
  /** sleep: the wake-up time; wait: the give-up time (absent: none). */
  at?: number;
  /** wait: the event taken, or null after the timeout. */
  event?: WorkflowEvent | null;
  /** child: its execution id. */
  childId?: string;
  /** child: why it did not complete. */
  error?: ErrorInfo & { status: 'failed' | 'cancelled' };
  /** run: the last attempt's error, when `maxAttempts` ran out (then `attempts` says how many). */
  failed?: ErrorInfo;
  attempts?: number;
}

/** What `$workflow` holds. */
export interface WorkflowState {
  workflow: string;
  input?: unknown;
  status: WorkflowStatus;
  steps: StepRecord[];
  inbox: WorkflowEvent[];
  parentId?: string;
  result?: unknown;
  error?: ErrorInfo;
}

/** A copy of `value` as JSON keeps it, so memory and SQL stores give workflows the same values. */
export function jsonCopy(name: string, value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(toJson(name, value)) as unknown);
}

export function newState(workflow: string, input: unknown, parentId?: string): WorkflowState {
  const state: WorkflowState = { workflow, status: 'running', steps: [], inbox: [] };
  if (input !== undefined) state.input = input;
  if (parentId !== undefined) state.parentId = parentId;
  return state;
}

/**
 * The execution's workflow state, or for a child created by the runtime's spawn relay (which
 * knows nothing of workflows), a fresh state from its spawn context. Undefined for anything else.
 */
export function readState(exe: Execution): WorkflowState | undefined {
  const state = exe[WORKFLOW_FIELD] as WorkflowState | undefined;
  if (state !== undefined) return state;
  const context = exe.context as { workflow?: unknown; input?: unknown } | undefined;
  if (exe.rootPath === CHILD_ROOT && typeof context?.workflow === 'string') {
    return newState(context.workflow, context.input, typeof exe.parentId === 'string' ? exe.parentId : undefined);
  }
  return undefined;
}

export function writeState(exe: Execution, state: WorkflowState): void {
  exe[WORKFLOW_FIELD] = state;
}

/** The store timer path of step `index` (a sleep's wake-up or a wait's timeout). */
export function timerPath(index: number): string {
  return `workflow:${index}`;
}

/** The step index of a timer path of ours, or undefined. */
export function timerIndex(path: string): number | undefined {
  const match = /^workflow:(\d+)$/.exec(path);
  return match ? Number(match[1]) : undefined;
}

export function errorInfo(error: unknown): ErrorInfo {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

/** The event that tells a parent its child ended. One id per child: it ends only once. */
export function childEndedEmit(childId: string, state: WorkflowState): EmitEffect[] {
  if (state.parentId === undefined) return [];
  const event: Record<string, unknown> = { id: `${EVENT.child}:${childId}`, type: EVENT.child, childId, status: state.status };
  if (state.status === 'completed' && state.result !== undefined) event.result = state.result;
  if (state.error !== undefined) event.error = state.error;
  return [{ to: state.parentId, event }];
}

/**
 * Marks `state` cancelled and returns what must be sent: a cancel to every child still
 * running, and the news to the parent. The caller commits both with the state.
 */
export function cancelState(executionId: string, state: WorkflowState): EmitEffect[] {
  state.status = 'cancelled';
  const emits: EmitEffect[] = [];
  for (const step of state.steps) {
    if (step.kind === 'child' && step.pending) emits.push({ to: step.childId!, event: { id: `${EVENT.cancel}:${executionId}`, type: EVENT.cancel } });
  }
  return [...emits, ...childEndedEmit(executionId, state)];
}

/** What `Workflows.get` shows: copies of the state. */
export function snapshotOf(id: string, state: WorkflowState): WorkflowSnapshot {
  const copy = JSON.parse(JSON.stringify(state)) as WorkflowState;
  const snapshot: WorkflowSnapshot = {
    id,
    workflow: copy.workflow,
    status: copy.status,
    input: copy.input,
    steps: copy.steps.map((s) => ({ kind: s.kind, name: s.name, pending: s.pending === true, ...(s.childId === undefined ? {} : { childId: s.childId }) })),
    inbox: copy.inbox,
  };
  if ('result' in copy) snapshot.result = copy.result;
  if (copy.error !== undefined) snapshot.error = copy.error;
  if (copy.parentId !== undefined) snapshot.parentId = copy.parentId;
  return snapshot;
}
