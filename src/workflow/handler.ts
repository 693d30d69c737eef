/**
 * The Runtime handler that runs workflows: for each event of a workflow execution it applies
 * the event to the workflow state (a timer fired, an event arrived, a child ended, a cancel),
 * replays the workflow function to its next step, and returns that step's effects. The
 * Runtime then commits the state, the effects and the event's dedupe mark in one transaction.
 * @internal
 */
import { LeaseholdError } from '../errors.js';
import type { EmitEffect, Handler, RuntimeEvent, SpawnEffect, TimerEffect } from '../runtime/types.js';
import { describeStep } from './errors.js';
import { replay } from './replay.js';
import { cancelState, childEndedEmit, errorInfo, EVENT, readState, timerIndex, timerPath, writeState, type WorkflowState } from './state.js';
import type { Workflow, WorkflowEvent } from './types.js';

interface Collected {
  emit: EmitEffect[];
  timers: TimerEffect[];
  spawn: SpawnEffect[];
  trace?: Record<string, unknown>;
}

/** Records what `event` means for the history or the inbox; events of no concern change nothing. */
function apply(state: WorkflowState, event: RuntimeEvent, effects: Collected): void {
  const last = state.steps.at(-1);
  switch (event.type) {
    case 'timeout': {
      const at = typeof event.path === 'string' ? timerIndex(event.path) : undefined;
      const step = at === undefined ? undefined : state.steps[at];
      // Only the timer of the step still pending: a timeout of a wait whose event came first is stale.
      if (step?.pending && step.at === event.fireAt) {
        delete step.pending;
        if (step.kind === 'wait') step.event = null;
      }
      return;
    }
    case EVENT.send: {
      if (typeof event.name !== 'string') return;
      const received: WorkflowEvent = { id: event.id, name: event.name, payload: event.payload };
      if (event.payload === undefined) delete (received as Partial<WorkflowEvent>).payload;
      if (last?.kind === 'wait' && last.pending && last.name === received.name) {
        delete last.pending;
        last.event = received;
        if (last.at !== undefined) effects.timers.push({ path: timerPath(state.steps.length - 1), cancel: true });
      } else {
        state.inbox.push(received);
      }
      return;
    }
    case EVENT.child: {
      const step = state.steps.find((s) => s.kind === 'child' && s.pending && s.childId === event.childId);
      if (!step) return;
      delete step.pending;
      if (event.status === 'completed') {
        if (event.result !== undefined) step.result = event.result;
      } else {
        const status = event.status === 'failed' ? 'failed' : 'cancelled';
        const error = event.error as { name?: unknown; message?: unknown } | undefined;
        step.error = { status, name: String(error?.name ?? 'Error'), message: String(error?.message ?? status) };
      }
      return;
    }
  }
}

/**
 * The handler for `registry`'s workflows.
 * @throws (so the event is retried with back-off, nothing committed) a step's own error, a
 *   `WorkflowNondeterminismError`, a result JSON cannot keep, or a `LeaseholdError`
 *   `WORKFLOW_UNKNOWN` for an execution whose workflow this worker has not registered.
 */
export function workflowHandler(registry: ReadonlyMap<string, Workflow>): Handler {
  const isRegistered = (workflow: unknown): boolean => {
    const name = (workflow as Workflow | null)?.name;
    return typeof name === 'string' && registry.get(name) === workflow;
  };
  return async (exe, event, info) => {
    const state = readState(exe);
    if (state === undefined) {
      throw new LeaseholdError('WORKFLOW_UNKNOWN', `execution ${JSON.stringify(exe.id)} is not a workflow: start workflows with Workflows.start`);
    }
    writeState(exe, state);
    // A finished workflow takes no more events: each is marked processed and dropped.
    if (state.status !== 'running') return;
    const effects: Collected = { emit: [], timers: [], spawn: [] };
    if (event.type === EVENT.cancel) {
      effects.emit.push(...cancelState(exe.id, state));
      return effects;
    }
    apply(state, event, effects);
    const workflow = registry.get(state.workflow);
    if (workflow === undefined) {
      throw new LeaseholdError(
        'WORKFLOW_UNKNOWN',
        `execution ${JSON.stringify(exe.id)} runs workflow ${JSON.stringify(state.workflow)}, which this worker has not registered: add it to the workflows option`,
      );
    }

    const outcome = await replay({ executionId: exe.id, workflow, state, now: info.now, attempt: info.attempt, isRegistered });
    switch (outcome.kind) {
      case 'fatal':
        throw outcome.error;
      case 'blocked':
        break;
      case 'stepped': {
        const step = outcome.step;
        state.steps.push(step);
        effects.timers.push(...(outcome.effects.timers ?? []));
        effects.spawn.push(...(outcome.effects.spawn ?? []));
        // A finished step lets the workflow go on: an event to itself (one id per step, so a
        // repeated relay is a duplicate) replays it to its next step in the next commit.
        if (!step.pending) effects.emit.push({ to: exe.id, event: { id: `${EVENT.next}:${state.steps.length}`, type: EVENT.next } });
        effects.trace = { workflow: state.workflow, step: describeStep(step.kind, step.name), index: state.steps.length - 1 };
        break;
      }
      case 'returned':
      case 'threw':
        if (outcome.kind === 'returned') {
          state.status = 'completed';
          if (outcome.value !== undefined) state.result = outcome.value;
        } else {
          state.status = 'failed';
          state.error = errorInfo(outcome.error);
        }
        state.inbox = [];
        effects.emit.push(...childEndedEmit(exe.id, state));
        effects.trace = { workflow: state.workflow, status: state.status };
        break;
    }
    return effects;
  };
}
