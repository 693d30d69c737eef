/**
 * Durable workflows on a `Runtime`: `defineWorkflow` names a workflow function, `Workflows`
 * runs the registered ones on a store and a transport.
 */
import { LeaseholdError, StoreConflictError } from '../errors.js';
import { IF_MISSING, Runtime } from '../runtime/runtime.js';
import type { Schedules } from '../schedule/schedules.js';
import { RUNTIME_OPTIONS } from '../runtime/options.js';
import type { RuntimeEvent, StepResult } from '../runtime/types.js';
import { sleep } from '../worker/idle.js';
import { hostScheduler } from '../worker/host.js';
import type { AbortSignalLike, Scheduler } from '../worker/types.js';
import type { Execution, ExecutionStore } from '../store/contract.js';
import { checkChoice, checkDuration, checkId, checkInteger, checkObject, checkOptions } from '../validate.js';
import { WorkflowFailedError } from './errors.js';
import { workflowHandler } from './handler.js';
import { cancelState, EVENT, jsonCopy, newState, readState, snapshotOf, WORKFLOW_FIELD } from './state.js';
import type { ResultOptions, SendWorkflowEvent, Workflow, WorkflowFunction, WorkflowSnapshot, WorkflowsOptions } from './types.js';

/** A signal that never aborts, for waits given none. */
const NEVER: AbortSignalLike = { aborted: false, addEventListener() {}, removeEventListener() {} };

/** The keys of WorkflowsOptions: the Runtime's without `handler`, plus `workflows` and `schedules`. */
const OPTIONS = [...RUNTIME_OPTIONS, 'workflows', 'schedules'];

/** How often `cancel` reloads and retries when a step commits under it. */
const CANCEL_RETRIES = 20;

/**
 * Names a workflow function. The name is what an execution records, so every worker that may
 * run the workflow must register one with the same name, and a new version whose steps differ
 * should get a new name (see `WorkflowNondeterminismError`).
 * @throws TypeError / RangeError for a bad name or a `fn` that is not a function.
 */
export function defineWorkflow<I = unknown, O = unknown>(name: string, fn: WorkflowFunction<I, O>): Workflow<I, O> {
  checkId('name', name);
  if (typeof fn !== 'function') throw new TypeError(`fn must be a function, got ${fn === null ? 'null' : typeof fn}`);
  return Object.freeze({ name, fn });
}

/**
 * Runs workflows: each execution is one run of one workflow, its history kept in the execution
 * (`$workflow`) and advanced one step per commit by an internal {@link Runtime}, which any
 * number of workers (processes, tabs) may share through the store and transport.
 *
 * Guarantees: a step's recorded result is final (replays return it, the step never runs again);
 * a step's `fn` runs at least once (again only if its result was not committed); the state,
 * the step's effects (timers, child spawns, events to others) and the event's dedupe mark land
 * together or not at all; sleeps and timeouts run on the store's timers and the runtime's clock.
 * See docs/workflows.md.
 *
 * @throws TypeError / RangeError from the constructor, naming the first bad option (an unknown
 *   key, a duplicate workflow name, and every Runtime option check).
 */
export class Workflows {
  readonly #runtime: Runtime;
  readonly #store: ExecutionStore;
  readonly #registry = new Map<string, Workflow>();
  readonly #clone: (execution: Execution) => Execution;
  readonly #scheduler: Scheduler;

  constructor(options: WorkflowsOptions) {
    checkOptions('options', options, OPTIONS);
    if (!Array.isArray(options.workflows)) throw new TypeError('options.workflows must be an array of workflows from defineWorkflow');
    options.workflows.forEach((raw: unknown, i) => {
      checkObject(`options.workflows[${i}]`, raw);
      const workflow = raw as unknown as Workflow;
      checkId(`options.workflows[${i}].name`, workflow.name);
      if (typeof workflow.fn !== 'function') throw new TypeError(`options.workflows[${i}].fn must be a function`);
      if (this.#registry.has(workflow.name)) throw new RangeError(`options.workflows[${i}].name ${JSON.stringify(workflow.name)} is registered twice`);
      this.#registry.set(workflow.name, workflow);
    });
    const { workflows: _workflows, schedules, ...runtimeOptions } = options;
    // Checked by shape, not instanceof: the workflow entry must not carry the schedule code.
    if (schedules !== undefined && typeof (schedules as Partial<Schedules> | null)?.handler !== 'function') {
      throw new TypeError('options.schedules must be a Schedules (from leasehold/schedule)');
    }
    const handler = workflowHandler(this.#registry);
    this.#runtime = new Runtime({ ...runtimeOptions, handler: schedules === undefined ? handler : schedules.handler(handler) });
    this.#store = options.store;
    this.#clone = options.clone ?? ((exe) => JSON.parse(JSON.stringify(exe)) as Execution);
    this.#scheduler = options.scheduler ?? hostScheduler(); // checked by the Runtime above
  }

  /** The Runtime that runs the workflows (for `suspend`, `resume`, or events of your own design). */
  get runtime(): Runtime {
    return this.#runtime;
  }

  /**
   * Starts `workflow` (a registered one, or its name) as execution `executionId` with `input`
   * (JSON-safe). Idempotent by id: if the execution exists and runs the same workflow, nothing
   * new is created (its start event is sent again, a no-op once handled) and this resolves
   * false; else it resolves true. The workflow runs as workers step.
   * @throws TypeError / RangeError for a bad or unregistered workflow, a bad id, or an input JSON cannot keep.
   * @throws StoreConflictError if `executionId` is held by another workflow or by no workflow.
   */
  async start<I>(workflow: Workflow<I, unknown> | string, executionId: string, input?: I): Promise<boolean> {
    const name = typeof workflow === 'string' ? workflow : (workflow as Workflow | null)?.name;
    if (typeof name !== 'string' || !this.#registry.has(name) || (typeof workflow !== 'string' && this.#registry.get(name) !== workflow)) {
      throw new TypeError('workflow must be a workflow (or the name of one) registered with this Workflows (its `workflows` option)');
    }
    checkId('executionId', executionId);
    const state = newState(name, jsonCopy('input', input));
    let created = true;
    try {
      await this.#runtime.createExecution(executionId, { [WORKFLOW_FIELD]: state });
    } catch (error) {
      if (!(error instanceof StoreConflictError)) throw error;
      const stored = await this.#store.load(executionId);
      if (stored === undefined || readState(stored)?.workflow !== name) throw error;
      created = false;
    }
    // A fixed id: sent again by a second start, or after a crash before this send, it is one event.
    await this.#runtime.send(executionId, { id: EVENT.start, type: EVENT.start });
    return created;
  }

  /**
   * Sends `event` to execution `executionId`: the first `step.waitForEvent(event.name)` that
   * has not taken an earlier event takes it, whether it started before or after the send.
   * Resolves the event's id (the given one or a fresh one) and its transport seq. Events sent to
   * a finished workflow are dropped. The execution must exist (a misspelt id fails here); with
   * `ifMissing: 'queue'` the event is sent anyway and waits for a `start()` of that id.
   * @throws LeaseholdError NOT_FOUND if there is no such execution, WORKFLOW_UNKNOWN if it is not a workflow.
   * @throws TypeError / RangeError for a bad id, name, unknown key, or a payload JSON cannot keep.
   */
  async send(executionId: string, event: SendWorkflowEvent, options?: { priority?: number; ifMissing?: 'refuse' | 'queue' }): Promise<{ id: string; seq: number }> {
    checkId('executionId', executionId);
    checkOptions('event', event, ['name', 'payload', 'id']);
    checkId('event.name', event.name);
    if (event.id !== undefined) checkId('event.id', event.id);
    const payload = jsonCopy('event.payload', event.payload);
    checkOptions('options', options, ['priority', 'ifMissing'], true);
    if (options?.priority !== undefined) checkInteger('options.priority', options.priority, 0, 4);
    const ifMissing = checkChoice('options.ifMissing', options?.ifMissing, IF_MISSING, 'refuse');
    if (ifMissing === 'refuse') await this.#load(executionId);
    const sent: Omit<RuntimeEvent, 'id'> & { id?: string } = { type: EVENT.send, name: event.name };
    if (event.id !== undefined) sent.id = event.id;
    if (payload !== undefined) sent.payload = payload;
    return this.#runtime.send(executionId, sent, { priority: options?.priority ?? 0, ifMissing: 'queue' });
  }

  /**
   * Cancels execution `executionId`: once this resolves true, no further step of it commits (a
   * step running meanwhile loses its commit to the CAS), its running children are sent a
   * cancel and its parent's `step.child` rejects with `ChildWorkflowError`. A step's `fn`
   * already running is not interrupted. Resolves false if the workflow had already finished.
   * Its armed timers fire later and are ignored.
   * @throws LeaseholdError NOT_FOUND if there is no such execution, WORKFLOW_UNKNOWN if it is not a workflow.
   * @throws StoreConflictError if it kept changing under 20 attempts.
   */
  async cancel(executionId: string): Promise<boolean> {
    checkId('executionId', executionId);
    for (let attempt = 1; ; attempt++) {
      const stored = await this.#load(executionId);
      const exe = this.#clone(stored);
      const state = readState(exe)!;
      if (state.status !== 'running') return false;
      const emits = cancelState(executionId, state);
      exe[WORKFLOW_FIELD] = state;
      try {
        await this.#store.commit(exe, {
          emits: emits.map((emit) => ({ targetId: emit.to, event: emit.event })),
          trace: { event: 'cancel', type: EVENT.cancel, workflow: state.workflow, status: 'cancelled' },
        });
        return true;
      } catch (error) {
        if (!(error instanceof StoreConflictError) || attempt >= CANCEL_RETRIES) throw error;
      }
    }
  }

  /**
   * Where workflow execution `executionId` stands: status, result or error, its steps (a child
   * step with its `childId`) and its unclaimed events, as copies. Undefined if there is no such
   * execution. Given the workflow first, the snapshot carries its input and result types, and
   * an execution of another workflow is refused.
   * @throws LeaseholdError WORKFLOW_UNKNOWN if the execution is not a workflow (or not `workflow`).
   * @throws TypeError / RangeError for a bad id or workflow.
   */
  get<I, O>(workflow: Workflow<I, O>, executionId: string): Promise<WorkflowSnapshot<I, O> | undefined>;
  get(executionId: string): Promise<WorkflowSnapshot | undefined>;
  async get(first: Workflow<unknown, unknown> | string, second?: string): Promise<WorkflowSnapshot | undefined> {
    const [workflow, executionId] = typeof first === 'string' ? [null, first] : [first, second];
    if (workflow !== null) checkObject('workflow', workflow);
    checkId('executionId', executionId);
    const stored = await this.#store.load(executionId);
    if (stored === undefined) return undefined;
    const state = this.#stateOf(stored);
    if (workflow !== null && state.workflow !== workflow.name) {
      throw new LeaseholdError('WORKFLOW_UNKNOWN', `execution ${JSON.stringify(executionId)} runs workflow ${JSON.stringify(state.workflow)}, not ${JSON.stringify(workflow.name)}`);
    }
    return snapshotOf(executionId, state);
  }

  /**
   * Resolves what workflow execution `executionId` returns, once it completes, with the
   * workflow's result type; a workflow that completed long ago resolves at once. It reads the
   * execution until it finishes (see {@link ResultOptions.pollMs}); some worker must be running
   * it.
   * @throws (rejects with) WorkflowFailedError if it fails or is cancelled; LeaseholdError
   *   NOT_FOUND if there is no such execution, WORKFLOW_UNKNOWN if it runs another workflow;
   *   the signal's reason when `options.signal` aborts; what the store throws.
   * @throws TypeError / RangeError for a bad workflow, id or option.
   */
  async result<O>(workflow: Workflow<never, O>, executionId: string, options?: ResultOptions): Promise<O> {
    checkOptions('options', options, ['signal', 'pollMs'], true);
    const pollMs = options?.pollMs ?? 1000;
    checkDuration('options.pollMs', pollMs, true);
    const signal = options?.signal;
    if (signal !== undefined) checkObject('options.signal', signal);
    for (let pause = 10; ; pause = Math.min(pollMs, pause * 2)) {
      const snapshot = await this.get(workflow as Workflow<unknown, O>, executionId);
      if (snapshot === undefined) throw new LeaseholdError('NOT_FOUND', `execution ${JSON.stringify(executionId)} does not exist`);
      if (snapshot.status === 'completed') return snapshot.result as O;
      if (snapshot.status !== 'running') throw new WorkflowFailedError(executionId, snapshot.status, snapshot.error ?? null);
      if (signal?.aborted) throw (signal as { reason?: unknown }).reason ?? new LeaseholdError('CLOSED', 'the wait for the result was aborted');
      await sleep(this.#scheduler, Math.min(pause, pollMs), signal ?? NEVER);
    }
  }

  /** One unit of the runtime's work; see `Runtime.step`. */
  step(): Promise<StepResult> {
    return this.#runtime.step();
  }

  /** Steps until `signal` aborts; see `Runtime.run`. */
  run(options: { signal: AbortSignalLike }): Promise<void> {
    return this.#runtime.run(options);
  }

  async #load(executionId: string): Promise<Execution> {
    const stored = await this.#store.load(executionId);
    if (stored === undefined) throw new LeaseholdError('NOT_FOUND', `execution ${JSON.stringify(executionId)} does not exist`);
    this.#stateOf(stored);
    return stored;
  }

  #stateOf(exe: Execution) {
    const state = readState(exe);
    if (state === undefined) throw new LeaseholdError('WORKFLOW_UNKNOWN', `execution ${JSON.stringify(exe.id)} is not a workflow`);
    return state;
  }
}
