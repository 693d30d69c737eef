/**
 * Runs a workflow function against its history, once per delivered event: recorded steps
 * return their recorded outcome, the first step not yet recorded is performed (a `run` calls
 * its `fn`; a sleep, a wait or a child is recorded as pending with its timer or spawn), and
 * the replay stops there. So each delivery adds at most one step, which the handler commits
 * alone, with its effects.
 *
 * Why stopping is a promise that never settles and not a thrown sentinel: the workflow's own
 * `try/catch/finally` must not see replay machinery. A suspended async function holding only
 * such a promise is garbage once the replay lets go of it.
 * @internal
 */
import type { Effects } from '../runtime/types.js';
import { checkDuration, checkId, checkInteger, checkOptions, checkTime } from '../validate.js';
import { ChildWorkflowError, describeStep, StepFailedError, WorkflowNondeterminismError } from './errors.js';
import { CHILD_ROOT, errorInfo, jsonCopy, timerPath, type StepRecord, type WorkflowState } from './state.js';
import type { ChildOptions, RunOptions, StepKind, WaitOptions, Workflow, WorkflowEvent, WorkflowStep } from './types.js';

/**
 * How a replay ended:
 * - `stepped`: a new step to append to the history, with the effects that commit with it;
 * - `blocked`: it reached the pending step; nothing changes;
 * - `returned` / `threw`: the workflow function finished (its outcome is final);
 * - `fatal`: the engine cannot go on (a step's `fn` threw, a result is not JSON, the code no
 *   longer matches the history): the handler throws it, nothing commits, the event is retried.
 */
export type Outcome =
  | { kind: 'stepped'; step: StepRecord; effects: Effects }
  | { kind: 'blocked' }
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'fatal'; error: unknown };

export interface Replay {
  executionId: string;
  workflow: Workflow;
  /** Its inbox loses the event a new wait takes (the caller commits that with the step). */
  state: WorkflowState;
  /** The delivery's time: sleeps and timeouts count from here. */
  now: number;
  /** Which delivery of the event this is (1 for the first): a new `run` step's attempt. */
  attempt: number;
  /** Whether `step.child` may start this workflow (it must be registered, to run anywhere). */
  isRegistered(workflow: unknown): boolean;
}

const copy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
const never = <T>(): Promise<T> => new Promise<T>(() => {});

/** Runs the checks of a step's arguments; a failure rejects the step's promise. */
function checked<T>(check: () => void, then: () => Promise<T>): Promise<T> {
  try {
    check();
  } catch (error) {
    return Promise.reject(error);
  }
  return then();
}

export function replay(r: Replay): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    let finished = false;
    let inFlight = false; // a new step's fn is running: the replay ends with it, whatever else happens
    let index = 0;
    const finish = (outcome: Outcome): void => {
      if (finished) return;
      finished = true;
      resolve(outcome);
    };
    const mismatch = (at: number, found: string): void => {
      const expected = r.state.steps[at]!;
      finish({ kind: 'fatal', error: new WorkflowNondeterminismError(r.executionId, r.workflow.name, at, describeStep(expected.kind, expected.name), found) });
    };

    /** The next position in the history: its record, or none for a new step; undefined when the call must wait forever. */
    const claim = (kind: StepKind, name: string): { index: number; record?: StepRecord } | undefined => {
      if (finished || inFlight) return undefined;
      const at = index++;
      const record = r.state.steps[at];
      if (record === undefined) return { index: at };
      if (record.kind !== kind || record.name !== name) {
        mismatch(at, describeStep(kind, name));
        return undefined;
      }
      if (record.pending) {
        finish({ kind: 'blocked' });
        return undefined;
      }
      return { index: at, record };
    };
    const stepped = (step: StepRecord, effects: Effects = {}): Promise<never> => {
      finish({ kind: 'stepped', step, effects });
      return never();
    };

    const sleepTo = (at: number): Promise<void> => {
      const c = claim('sleep', 'sleep');
      if (!c) return never();
      if (c.record) return Promise.resolve();
      if (at <= r.now) return stepped({ kind: 'sleep', name: 'sleep', at });
      return stepped({ kind: 'sleep', name: 'sleep', at, pending: true }, { timers: [{ path: timerPath(c.index), at }] });
    };

    const step: WorkflowStep = {
      executionId: r.executionId,

      run<T>(name: string, fn: () => T | Promise<T>, options?: RunOptions): Promise<T> {
        return checked(
          () => {
            checkId('name', name);
            if (typeof fn !== 'function') throw new TypeError(`fn must be a function, got ${fn === null ? 'null' : typeof fn}`);
            checkOptions('options', options, ['maxAttempts'], true);
            if (options?.maxAttempts !== undefined) checkInteger('options.maxAttempts', options.maxAttempts, 1, Number.MAX_SAFE_INTEGER);
          },
          () => {
            const c = claim('run', name);
            if (!c) return never();
            const failed = c.record?.failed;
            if (failed) return Promise.reject(new StepFailedError(name, c.record!.attempts!, `${failed.name}: ${failed.message}`));
            if (c.record) return Promise.resolve(copy(c.record.result) as T);
            inFlight = true;
            void (async () => {
              try {
                const value = await fn();
                const record: StepRecord = { kind: 'run', name };
                if (value !== undefined) record.result = jsonCopy(`the result of ${describeStep('run', name)}`, value);
                finish({ kind: 'stepped', step: record, effects: {} });
              } catch (error) {
                const limit = options?.maxAttempts;
                // The last attempt's failure becomes the step's recorded outcome; earlier ones retry.
                if (limit !== undefined && r.attempt >= limit) finish({ kind: 'stepped', step: { kind: 'run', name, failed: errorInfo(error), attempts: r.attempt }, effects: {} });
                else finish({ kind: 'fatal', error });
              }
            })();
            return never();
          },
        );
      },

      sleep(ms: number): Promise<void> {
        return checked(() => checkDuration('ms', ms, false), () => sleepTo(r.now + ms));
      },

      sleepUntil(time: number | Date): Promise<void> {
        const at = time instanceof Date ? time.getTime() : time;
        return checked(() => checkTime('time', at), () => sleepTo(at));
      },

      waitForEvent<T = unknown>(name: string, options?: WaitOptions): Promise<WorkflowEvent<T> | null> {
        return checked(
          () => {
            checkId('name', name);
            checkOptions('options', options, ['timeoutMs'], true);
            if (options?.timeoutMs !== undefined) checkDuration('options.timeoutMs', options.timeoutMs, false);
          },
          () => {
            const c = claim('wait', name);
            if (!c) return never();
            if (c.record) return Promise.resolve(copy((c.record.event ?? null) as WorkflowEvent<T> | null));
            const taken = r.state.inbox.findIndex((event) => event.name === name);
            if (taken >= 0) return stepped({ kind: 'wait', name, event: r.state.inbox.splice(taken, 1)[0]! });
            const timeoutMs = options?.timeoutMs;
            if (timeoutMs === 0) return stepped({ kind: 'wait', name, event: null });
            if (timeoutMs === undefined) return stepped({ kind: 'wait', name, pending: true });
            const at = r.now + timeoutMs;
            return stepped({ kind: 'wait', name, pending: true, at }, { timers: [{ path: timerPath(c.index), at }] });
          },
        );
      },

      child<I, O>(name: string, workflow: Workflow<I, O>, input: I, options?: ChildOptions): Promise<O> {
        let encoded: unknown;
        return checked(
          () => {
            checkId('name', name);
            if (!r.isRegistered(workflow)) throw new TypeError('workflow must be a workflow registered with this Workflows (its `workflows` option)');
            checkOptions('options', options, ['id'], true);
            if (options?.id !== undefined) checkId('options.id', options.id);
            encoded = jsonCopy('input', input);
          },
          () => {
            const c = claim('child', name);
            if (!c) return never();
            const record = c.record;
            if (record) {
              if (record.error) return Promise.reject(new ChildWorkflowError(record.childId!, record.error.status, record.error.message));
              return Promise.resolve(copy(record.result) as O);
            }
            const childId = options?.id ?? `${r.executionId}/${name}/${c.index}`;
            const context: Record<string, unknown> = { workflow: workflow.name };
            if (encoded !== undefined) context.input = encoded;
            return stepped({ kind: 'child', name, childId, pending: true }, { spawn: [{ childId, rootPath: CHILD_ROOT, context }] });
          },
        );
      },
    };

    let result: Promise<unknown>;
    try {
      result = Promise.resolve(r.workflow.fn(copy(r.state.input), step));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => {
        if (inFlight || finished) return;
        // Returning before the end of the history means the code took another path than it did.
        if (index < r.state.steps.length) return mismatch(index, 'return');
        try {
          finish({ kind: 'returned', value: jsonCopy("the workflow's result", value) });
        } catch (error) {
          finish({ kind: 'threw', error });
        }
      },
      (error: unknown) => {
        if (inFlight || finished) return;
        if (index < r.state.steps.length) return mismatch(index, `a throw (${String(error)})`);
        finish({ kind: 'threw', error });
      },
    );
  });
}
