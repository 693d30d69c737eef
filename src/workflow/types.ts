/**
 * The public types of workflows: what a workflow function receives (`step`), what a workflow
 * is, the options of `Workflows` and what `get()` reports.
 *
 * Terminology
 * - **workflow**: an async function of `(input, step)` registered under a name. Its code runs
 *   again from the top on every event its execution receives ("replay"); every `step.*` call
 *   whose outcome is already recorded returns that outcome at once, without running anything.
 * - **history**: the list of the execution's recorded steps, in call order, kept in the
 *   execution itself (the `$workflow` field) and written with the store's CAS.
 * - **pending step**: the last step of the history while it waits (a sleep, an event, a
 *   child); the workflow goes no further until it is done.
 */
import type { Schedules } from '../schedule/schedules.js';
import type { Transport } from '../transport/contract.js';
import type { RuntimeOptions } from '../runtime/types.js';
import type { AbortSignalLike } from '../worker/types.js';

/** JSON-safe values: what inputs, step results, event payloads and workflow results must be. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };

/** An event as `step.waitForEvent` resolves it. */
export interface WorkflowEvent<T = unknown> {
  /** The id it was sent with (given or fresh): sending the same id again delivers nothing new. */
  id: string;
  name: string;
  /** As sent, after a JSON round trip (so every backend returns the same value). */
  payload: T;
}

/** Options of `step.waitForEvent`. */
export interface WaitOptions {
  /** Give up after this many ms (≥ 0) on the runtime's clock: the wait then resolves `null`. Default: wait forever. */
  timeoutMs?: number;
}

/** Options of `step.run`. */
export interface RunOptions {
  /**
   * Give up after this many attempts (a positive integer): the last error is then recorded as
   * the step's outcome and `run` rejects with a `StepFailedError`, now and on every replay.
   * Attempts are the deliveries of the event that runs the step (a worker that died in `fn`
   * counts as one). Default: retry until it succeeds. Keep it below the transport's own
   * `maxAttempts`, which would dead-letter the event and leave the workflow waiting.
   */
  maxAttempts?: number;
}

/** Options of `step.child`. */
export interface ChildOptions {
  /** The child's execution id. Default `<parent id>/<step name>/<step index>`. Must be unused. */
  id?: string;
}

/**
 * What a workflow function receives besides its input. Every method is a step: its outcome is
 * recorded in the execution's history and, on every later replay, returned from there. Steps
 * run one at a time in call order (also when started together with `Promise.all`).
 *
 * Every method validates its arguments and rejects with a `TypeError`/`RangeError` naming the
 * bad one; like any error the workflow does not catch, that fails the workflow.
 */
export interface WorkflowStep {
  /** The id of the execution this workflow runs in. */
  readonly executionId: string;
  /**
   * Runs `fn` once and records what it returns (which must be JSON-safe; `undefined` is kept
   * as `undefined`). The result lands in the store in one commit with nothing else of the
   * workflow's; from then on `run` returns the recorded result without calling `fn`.
   *
   * At least once: if the worker dies (or the commit fails) after `fn` ran and before its
   * result was committed, `fn` runs again. Give its side effects an idempotency key, e.g.
   * `` `${step.executionId}:${name}` ``. If `fn` throws, nothing is recorded and the event is
   * retried with the runtime's back-off (`retryBaseMs`…`retryMaxMs`), up to
   * `options.maxAttempts` (then it rejects with `StepFailedError`); or catch inside `fn` to turn
   * an error into a result the workflow can branch on.
   */
  run<T>(name: string, fn: () => T | Promise<T>, options?: RunOptions): Promise<T>;
  /** Resolves after `ms` (≥ 0) on the runtime's clock, counted from the delivery that reached it. Durable: a store timer. */
  sleep(ms: number): Promise<void>;
  /** Resolves once the runtime's clock reaches `time` (ms, or a Date); at once if it has. Durable: a store timer. */
  sleepUntil(time: number | Date): Promise<void>;
  /**
   * Resolves the first event named `name` sent to this execution with `Workflows.send` that no
   * earlier wait took, or `null` if `timeoutMs` passes first. An event sent before the wait
   * started is kept until a wait for its name takes it; events nobody waits for are dropped
   * when the workflow ends.
   */
  waitForEvent<T = unknown>(name: string, options?: WaitOptions): Promise<WorkflowEvent<T> | null>;
  /**
   * Starts `workflow` as a child execution with `input` and resolves its result once it
   * completes. The child runs on any worker sharing the store and transport (it must be
   * registered there). Rejects with `ChildWorkflowError` if the child fails or is cancelled.
   * Cancelling the parent cancels the child.
   */
  child<I, O>(name: string, workflow: Workflow<I, O>, input: I, options?: ChildOptions): Promise<O>;
}

/** A workflow's code. Deterministic outside its steps: the same history must lead to the same step calls. */
export type WorkflowFunction<I, O> = (input: I, step: WorkflowStep) => Promise<O>;

/** A named workflow, as `defineWorkflow` makes it. */
export interface Workflow<I = unknown, O = unknown> {
  readonly name: string;
  readonly fn: WorkflowFunction<I, O>;
}

/**
 * Where a workflow execution stands:
 * - `running`: started, not finished (possibly waiting for a timer, an event or a child);
 * - `completed`: the function returned; `result` holds its value;
 * - `failed`: the function threw; `error` holds the error's name and message;
 * - `cancelled`: `Workflows.cancel` (or the parent's cancellation) stopped it.
 */
export type WorkflowStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** The frozen list of {@link WorkflowStatus} values. */
export const WORKFLOW_STATUSES = Object.freeze(['running', 'completed', 'failed', 'cancelled'] as const);

/** The kinds of recorded steps. */
export type StepKind = 'run' | 'sleep' | 'wait' | 'child';

/** An error as recorded: its class name and message. */
export interface ErrorInfo {
  name: string;
  message: string;
}

/** One step of a history, as `Workflows.get` shows it. */
export interface StepSummary {
  kind: StepKind;
  name: string;
  /** Still waiting (the last step only). */
  pending: boolean;
  /** A `child` step: the child's execution id (its own `get()` shows it). */
  childId?: string;
}

/**
 * A workflow execution as `Workflows.get` reports it: copies, safe to keep. `I` and `O` are the
 * workflow's input and result types when `get` was given the workflow itself.
 */
export interface WorkflowSnapshot<I = unknown, O = unknown> {
  id: string;
  workflow: string;
  status: WorkflowStatus;
  input: I;
  /** `completed`: what the workflow returned. */
  result?: O;
  error?: ErrorInfo;
  /** The execution that started this one with `step.child`, if any. */
  parentId?: string;
  steps: StepSummary[];
  /** Events received that no wait has taken yet. */
  inbox: WorkflowEvent[];
}

/**
 * Options of `Workflows`: the `Runtime`'s (without `handler`, which `Workflows` supplies) plus
 * the workflows this worker runs.
 */
export type WorkflowsOptions = Omit<RuntimeOptions, 'handler' | 'transport'> & {
  /** The transport the runtime claims from; it carries the workflows' own events. */
  transport: Transport<unknown>;
  /** The workflows this worker can run, each under its own name. Every worker sharing the store needs the same ones. */
  workflows: readonly Workflow<never, unknown>[];
  /**
   * Schedules (on the same store and transport) this worker fires: a schedule whose target is
   * `{ workflow, input }` starts one run of that workflow per slot.
   */
  schedules?: Schedules;
};

/** Options of `Workflows.result`. */
export interface ResultOptions {
  /** Stops the wait: the promise rejects with the signal's reason. */
  signal?: AbortSignalLike;
  /**
   * The longest pause between two reads of the execution, in ms (> 0; default 1000): the
   * reads start 10 ms apart and double up to it, so a short workflow is seen at once and a long
   * one costs a read a second.
   */
  pollMs?: number;
}

/** An event as `Workflows.send` takes it. */
export interface SendWorkflowEvent {
  name: string;
  /** JSON-safe; default `undefined`. */
  payload?: unknown;
  /** The event's id (a resend with the same id is a no-op). Default: a fresh one. */
  id?: string;
}
