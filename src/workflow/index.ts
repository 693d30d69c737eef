/**
 * leasehold/workflow: durable workflows written as async functions of `(input, step)`, on the
 * execution store and the Runtime of the core entry. Each step's result is recorded in the
 * execution with the store's CAS, one commit per step with its effects; replays return recorded
 * results instead of running steps again. See docs/workflows.md.
 */
export { defineWorkflow, Workflows } from './workflows.js';
export { ChildWorkflowError, StepFailedError, WorkflowFailedError, WorkflowNondeterminismError } from './errors.js';
export { WORKFLOW_FIELD } from './state.js';
export { WORKFLOW_STATUSES } from './types.js';
export type {
  ChildOptions,
  ErrorInfo,
  Json,
  ResultOptions,
  RunOptions,
  SendWorkflowEvent,
  StepKind,
  StepSummary,
  WaitOptions,
  Workflow,
  WorkflowEvent,
  WorkflowFunction,
  WorkflowSnapshot,
  WorkflowStatus,
  WorkflowStep,
  WorkflowsOptions,
} from './types.js';
