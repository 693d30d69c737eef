/**
 * The errors workflows raise on purpose. Both are {@link LeaseholdError}s with a stable `code`.
 */
import { LeaseholdError } from '../errors.js';
import type { StepKind } from './types.js';

/** How a step call reads in a message: `step.run("charge")`. */
export function describeStep(kind: StepKind, name: string): string {
  if (kind === 'sleep') return 'step.sleep()'; // sleep and sleepUntil record no name
  const method = kind === 'wait' ? 'waitForEvent' : kind;
  return `step.${method}(${JSON.stringify(name)})`;
}

/**
 * The workflow's code no longer makes the step calls its recorded history has: at step `index`
 * it called `found` where the history has `expected` (or it returned early, or called more
 * steps than a finished history has). Replaying on would repeat or skip work, so nothing is
 * committed: the event that replayed it fails and is retried with back-off, and the workflow
 * stays where it was until code that matches its history runs it.
 */
export class WorkflowNondeterminismError extends LeaseholdError {
  override name = 'WorkflowNondeterminismError';

  constructor(
    readonly executionId: string,
    readonly workflow: string,
    readonly index: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(
      'WORKFLOW_NONDETERMINISM',
      `workflow ${JSON.stringify(workflow)} (execution ${JSON.stringify(executionId)}) no longer matches its history: ` +
        `step ${index} is ${found} in the code but ${expected} in the history. ` +
        'Changing the order or names of the steps of running workflows would repeat or skip work: run the old code until ' +
        'they finish, or register the new code under a new workflow name.',
    );
  }
}

/**
 * A child workflow started with `step.child` failed (`status` 'failed', with the child's error
 * message) or was cancelled. Thrown into the parent at its `step.child` call, where it may be caught.
 */
export class ChildWorkflowError extends LeaseholdError {
  override name = 'ChildWorkflowError';

  constructor(
    readonly childId: string,
    readonly status: 'failed' | 'cancelled',
    readonly reason: string,
  ) {
    super('WORKFLOW_CHILD_FAILED', `child workflow ${JSON.stringify(childId)} ${status === 'failed' ? `failed: ${reason}` : 'was cancelled'}`);
  }
}

/**
 * A workflow whose result `Workflows.result` awaited failed (`status` 'failed', with its error's
 * name and message) or was cancelled: the awaited result will never come.
 */
export class WorkflowFailedError extends LeaseholdError {
  override name = 'WorkflowFailedError';

  constructor(
    readonly executionId: string,
    readonly status: 'failed' | 'cancelled',
    readonly error: { name: string; message: string } | null,
  ) {
    super('WORKFLOW_FAILED', `workflow ${JSON.stringify(executionId)} ${status === 'failed' ? `failed: ${error?.name}: ${error?.message}` : 'was cancelled'}`);
  }
}

/**
 * A `step.run` given `maxAttempts` threw on its last attempt: the failure (the error's name and
 * message) is recorded as the step's outcome, so every replay rejects with this same error at
 * that step, where the workflow may catch it.
 */
export class StepFailedError extends LeaseholdError {
  override name = 'StepFailedError';

  constructor(
    readonly step: string,
    readonly attempts: number,
    readonly reason: string,
  ) {
    super('WORKFLOW_STEP_FAILED', `step.run(${JSON.stringify(step)}) failed on attempt ${attempts} of ${attempts}: ${reason}`);
  }
}
