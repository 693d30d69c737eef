/**
 * The workflow API's behaviour on one store + transport pair: steps recorded once and
 * replayed, crashes on either side of a step's commit, sleeps and waits on a manual clock,
 * events sent before and after a wait, cancel, children, and the nondeterminism check.
 * Called once per pair from test/workflow.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClosedError } from '../../src/errors.js';
import type { StepResult } from '../../src/runtime/types.js';
import { ChildWorkflowError, StepFailedError, WorkflowNondeterminismError } from '../../src/workflow/errors.js';
import type { WorkflowStep } from '../../src/workflow/types.js';
import { defineWorkflow } from '../../src/workflow/workflows.js';
import { END_OF_TIME } from '../conformance/store-harness.js';
import type { MakeRuntimeBackends } from './runtime-backends.js';
import { drain, makeWorkflowHarness, storeWithFault, transportDyingAtAck, VISIBILITY_MS, type WorkflowHarness } from './workflow-harness.js';

const kinds = (results: StepResult[]): string[] => results.map((r) => r.kind);

/** How often each step's fn ran, by step name. */
type Calls = Record<string, number>;

/** A three-step workflow whose steps count their runs in `calls`. */
function threeSteps(calls: Calls) {
  const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1);
  return defineWorkflow('three-steps', async (input: { base: number }, step: WorkflowStep) => {
    const a = await step.run('a', () => (count('a'), input.base + 1));
    const b = await step.run('b', async () => (count('b'), { doubled: a * 2 }));
    await step.run('c', () => void count('c'));
    return { a, b };
  });
}

export function describeWorkflows(name: string, make: MakeRuntimeBackends): void {
  describe(`Workflows on ${name}`, () => {
    let h: WorkflowHarness;
    beforeEach(async () => {
      h = await makeWorkflowHarness(make);
    });
    afterEach(() => h.dispose());

    it('runs each step once, one commit per step, and records the result', async () => {
      const calls: Calls = {};
      const flow = threeSteps(calls);
      const worker = h.worker('w1', [flow]);
      expect(await worker.start(flow, 'wf-1', { base: 1 })).toBe(true);
      await drain([worker]);
      expect(calls).toEqual({ a: 1, b: 1, c: 1 });
      const snapshot = await worker.get('wf-1');
      expect(snapshot).toMatchObject({ id: 'wf-1', workflow: 'three-steps', status: 'completed', input: { base: 1 }, result: { a: 2, b: { doubled: 4 } } });
      expect(snapshot!.steps).toEqual(['a', 'b', 'c'].map((n) => ({ kind: 'run', name: n, pending: false })));
      // One commit per step (and one for the return): each step is its own trace entry.
      const trace = await h.store.readTrace('wf-1');
      expect(trace.map((t) => t.step ?? t.status)).toEqual(['step.run("a")', 'step.run("b")', 'step.run("c")', 'completed']);
      // Starting it again creates nothing and runs nothing.
      expect(await worker.start(flow, 'wf-1', { base: 1 })).toBe(false);
      await drain([worker]);
      expect(calls).toEqual({ a: 1, b: 1, c: 1 });
      expect(await h.store.pendingOutbox()).toEqual([]);
      expect((await h.transport.inspect()).groups).toEqual([]);
    });

    it('re-runs only the step whose commit a crash prevented (at least once per step)', async () => {
      const calls: Calls = {};
      const flow = threeSteps(calls);
      let crashed = false;
      // The worker dies after b's fn ran and before b's result was committed.
      const dying = h.worker('dying', [flow], {
        store: storeWithFault(h.store, (exe) => {
          const steps = (exe.$workflow as { steps: unknown[] }).steps;
          if (steps.length === 2 && !crashed) {
            crashed = true;
            throw new ClosedError('store (the worker died before its commit)');
          }
        }),
      });
      await dying.start(flow, 'wf-1', { base: 1 });
      await expect(drain([dying])).rejects.toThrow(ClosedError);
      expect(calls).toEqual({ a: 1, b: 1 });
      // Its lease runs out; another worker takes the workflow over.
      h.clock.advance(VISIBILITY_MS + 1);
      const survivor = h.worker('survivor', [flow]);
      await drain([survivor]);
      expect(calls).toEqual({ a: 1, b: 2, c: 1 });
      expect(await survivor.get('wf-1')).toMatchObject({ status: 'completed', result: { a: 2, b: { doubled: 4 } } });
    });

    it('never re-runs a step whose result was committed, even when the worker dies before its ack', async () => {
      const calls: Calls = {};
      const flow = threeSteps(calls);
      const dying = h.worker('dying', [flow], { transport: transportDyingAtAck(h.transport, () => calls.b === 1 && calls.c === undefined) });
      await dying.start(flow, 'wf-1', { base: 1 });
      await expect(drain([dying])).rejects.toThrow(ClosedError);
      expect(calls).toEqual({ a: 1, b: 1 });
      h.clock.advance(VISIBILITY_MS + 1);
      const survivor = h.worker('survivor', [flow]);
      const results = await drain([survivor]);
      expect(kinds(results)).toContain('duplicate');
      expect(calls).toEqual({ a: 1, b: 1, c: 1 });
      expect((await survivor.get('wf-1'))!.status).toBe('completed');
    });

    it('retries a step whose fn throws, with back-off, and records nothing until it succeeds', async () => {
      let tries = 0;
      const flow = defineWorkflow('flaky', async (_input: undefined, step: WorkflowStep) =>
        step.run('call', () => {
          if (++tries < 3) throw new Error(`outage ${tries}`);
          return 'ok';
        }),
      );
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      const first = await drain([worker]);
      expect(first.at(-1)).toMatchObject({ kind: 'failed', retryInMs: 100, error: new Error('outage 1') });
      expect((await worker.get('wf-1'))!.steps).toEqual([]);
      h.clock.advance(101);
      expect(kinds(await drain([worker]))).toEqual(['failed']);
      h.clock.advance(201);
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'ok' });
      expect(tries).toBe(3);
    });

    it('gives up on a step after maxAttempts: its failure is recorded and thrown into the workflow', async () => {
      let tries = 0;
      const flow = defineWorkflow('doomed', async (_input: undefined, step: WorkflowStep) => {
        try {
          await step.run('call', () => {
            throw new Error(`outage ${++tries}`);
          }, { maxAttempts: 3 });
        } catch (error) {
          if (!(error instanceof StepFailedError)) throw error;
          return `gave up after ${error.attempts}: ${error.reason}`;
        }
      });
      const unguarded = defineWorkflow('unguarded', async (_input: undefined, step: WorkflowStep) => {
        await step.run('call', () => Promise.reject(new RangeError('never works')), { maxAttempts: 1 });
      });
      const worker = h.worker('w1', [flow, unguarded]);
      await worker.start(flow, 'wf-1');
      await worker.start(unguarded, 'wf-2');
      await drain([worker]);
      h.clock.advance(101);
      await drain([worker]);
      expect(tries).toBe(2);
      h.clock.advance(201);
      await drain([worker]);
      expect(tries).toBe(3);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'gave up after 3: Error: outage 3', steps: [{ kind: 'run', name: 'call', pending: false }] });
      expect(await worker.get('wf-2')).toMatchObject({ status: 'failed', error: { name: 'StepFailedError', message: 'step.run("call") failed on attempt 1 of 1: RangeError: never works' } });
    });

    it('sleeps on the store timers and the runtime clock, with no real waiting', async () => {
      const seen: number[] = [];
      const flow = defineWorkflow('sleeper', async (_input: undefined, step: WorkflowStep) => {
        await step.run('before', () => void seen.push(h.clock.now()));
        await step.sleep(60_000);
        await step.run('middle', () => void seen.push(h.clock.now()));
        await step.sleepUntil(new Date(2_000_000));
        await step.run('after', () => void seen.push(h.clock.now()));
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      expect(seen).toEqual([1_000_000]);
      expect((await worker.get('wf-1'))!.steps.at(-1)).toEqual({ kind: 'sleep', name: 'sleep', pending: true });
      expect(await h.store.dueTimers(END_OF_TIME)).toEqual([{ executionId: 'wf-1', path: 'workflow:1', fireAt: 1_060_000 }]);
      h.clock.advance(59_999);
      expect(kinds(await drain([worker]))).toEqual([]);
      h.clock.advance(1);
      await drain([worker]);
      expect(seen).toEqual([1_000_000, 1_060_000]);
      h.clock.set(2_000_000);
      await drain([worker]);
      expect(seen).toEqual([1_000_000, 1_060_000, 2_000_000]);
      expect((await worker.get('wf-1'))!.status).toBe('completed');
      expect(await h.store.dueTimers(END_OF_TIME)).toEqual([]);
    });

    it('waits for an event sent after the wait started, and cancels its timeout timer', async () => {
      const flow = defineWorkflow('approval', async (_input: undefined, step: WorkflowStep) => {
        const approval = await step.waitForEvent<{ by: string }>('approved', { timeoutMs: 3_600_000 });
        return approval === null ? 'timed out' : `approved by ${approval.payload.by}`;
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      expect((await worker.get('wf-1'))!.steps).toEqual([{ kind: 'wait', name: 'approved', pending: true }]);
      expect(await worker.send('wf-1', { name: 'approved', payload: { by: 'ada' }, id: 'approval-1' })).toMatchObject({ id: 'approval-1' });
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'approved by ada' });
      expect(await h.store.dueTimers(END_OF_TIME)).toEqual([]);
    });

    it('resolves a wait with null when its timeout passes first, and drops a later event', async () => {
      const flow = defineWorkflow('approval', async (_input: undefined, step: WorkflowStep) => {
        const approval = await step.waitForEvent('approved', { timeoutMs: 1_000 });
        return approval === null ? 'timed out' : 'approved';
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      h.clock.advance(999);
      expect(kinds(await drain([worker]))).toEqual([]);
      h.clock.advance(1);
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'timed out' });
      await worker.send('wf-1', { name: 'approved' });
      expect(kinds(await drain([worker]))).toEqual(['handled']);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'timed out', inbox: [] });
    });

    it('keeps an event sent before its wait starts, and hands events of one name to waits in order', async () => {
      const flow = defineWorkflow('inbox', async (_input: undefined, step: WorkflowStep) => {
        await step.sleep(1_000);
        const first = await step.waitForEvent<number>('item');
        const second = await step.waitForEvent<number>('item');
        return [first!.payload, second!.payload];
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      await worker.send('wf-1', { name: 'item', payload: 1, id: 'i1' });
      await worker.send('wf-1', { name: 'item', payload: 1, id: 'i1' }); // the same id: one event
      await worker.send('wf-1', { name: 'other', payload: 'x' });
      await drain([worker]);
      expect((await worker.get('wf-1'))!.inbox.map((e) => e.name)).toEqual(['item', 'other']);
      h.clock.advance(1_000);
      await drain([worker]);
      expect((await worker.get('wf-1'))!.steps.at(-1)).toEqual({ kind: 'wait', name: 'item', pending: true });
      await worker.send('wf-1', { name: 'item', payload: 2 });
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: [1, 2], inbox: [] });
    });

    it('keeps an event sent before the workflow was even started', async () => {
      const flow = defineWorkflow('late-start', async (_input: undefined, step: WorkflowStep) => (await step.waitForEvent<string>('go'))!.payload);
      const worker = h.worker('w1', [flow]);
      await expect(worker.send('wf-1', { name: 'go', payload: 'early bird' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await worker.send('wf-1', { name: 'go', payload: 'early bird' }, { ifMissing: 'queue' });
      expect(kinds(await drain([worker]))).toEqual(['missing']);
      await worker.start(flow, 'wf-1');
      h.clock.advance(101);
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'early bird' });
    });

    it('cancels: nothing more runs, later events and timers are dropped, a second cancel says false', async () => {
      const calls: Calls = {};
      const flow = defineWorkflow('cancellable', async (_input: undefined, step: WorkflowStep) => {
        await step.waitForEvent('go', { timeoutMs: 5_000 });
        await step.run('after', () => void (calls.after = 1));
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      expect(await worker.cancel('wf-1')).toBe(true);
      expect((await worker.get('wf-1'))!.status).toBe('cancelled');
      await worker.send('wf-1', { name: 'go' });
      h.clock.advance(5_000);
      await drain([worker]);
      expect(calls).toEqual({});
      expect((await worker.get('wf-1'))!.status).toBe('cancelled');
      expect(await worker.cancel('wf-1')).toBe(false);
    });

    it('a step running when cancel lands loses its commit', async () => {
      let worker = h.worker('w1', []);
      const flow = defineWorkflow('raced', async (_input: undefined, step: WorkflowStep) => {
        await step.run('slow', async () => {
          await worker.cancel(step.executionId); // another worker cancels while this fn runs
          return 1;
        });
        await step.run('never', () => 2);
      });
      worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      const results = await drain([worker]);
      expect(kinds(results)).toContain('conflict');
      expect(await worker.get('wf-1')).toMatchObject({ status: 'cancelled', steps: [] });
    });

    it('fails loudly when the code no longer matches the history, and commits nothing', async () => {
      const v1 = defineWorkflow('versioned', async (_input: undefined, step: WorkflowStep) => {
        await step.run('charge', () => 'charged');
        await step.waitForEvent('shipped');
        return 'v1';
      });
      const v2 = defineWorkflow('versioned', async (_input: undefined, step: WorkflowStep) => {
        await step.run('reserve', () => 'reserved'); // inserted before charge
        await step.run('charge', () => 'charged');
        await step.waitForEvent('shipped');
        return 'v2';
      });
      await h.worker('old', [v1]).start(v1, 'wf-1');
      await drain([h.worker('old', [v1])]);
      const before = await h.worker('old', [v1]).get('wf-1');
      const worker = h.worker('new', [v2]);
      await worker.send('wf-1', { name: 'shipped' });
      const [result] = await drain([worker]);
      expect(result).toMatchObject({ kind: 'failed', executionId: 'wf-1' });
      const error = (result as { error: unknown }).error;
      expect(error).toBeInstanceOf(WorkflowNondeterminismError);
      expect(error).toMatchObject({ code: 'WORKFLOW_NONDETERMINISM', index: 0, expected: 'step.run("charge")', found: 'step.run("reserve")' });
      expect((error as Error).message).toMatch(/no longer matches its history/);
      expect(await worker.get('wf-1')).toEqual(before);
      // The old code, deployed again, finishes it.
      h.clock.advance(1_000);
      await drain([h.worker('old', [v1])]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'completed', result: 'v1' });
    });

    it('detects steps removed from the end of the code too', async () => {
      const v1 = defineWorkflow('shrinking', async (_input: undefined, step: WorkflowStep) => {
        await step.run('one', () => 1);
        await step.sleep(1_000);
        return 'v1';
      });
      const v2 = defineWorkflow('shrinking', async (_input: undefined, step: WorkflowStep) => {
        await step.run('one', () => 1);
        return 'v2';
      });
      await h.worker('old', [v1]).start(v1, 'wf-1');
      await drain([h.worker('old', [v1])]);
      h.clock.advance(1_000);
      const [, result] = await drain([h.worker('new', [v2])]);
      expect(result).toMatchObject({ kind: 'failed', error: { code: 'WORKFLOW_NONDETERMINISM', expected: 'step.sleep()', found: 'return' } });
    });

    it('runs a child workflow and resolves its result in the parent', async () => {
      const calls: Calls = {};
      const ship = defineWorkflow('ship', async (input: { sku: string }, step: WorkflowStep) => {
        const label = await step.run('label', () => ((calls.label = (calls.label ?? 0) + 1), `label-${input.sku}`));
        await step.sleep(500);
        return { label };
      });
      const order = defineWorkflow('order', async (input: { sku: string }, step: WorkflowStep) => {
        const shipped = await step.child('ship', ship, { sku: input.sku });
        return `shipped with ${shipped.label}`;
      });
      const worker = h.worker('w1', [order, ship]);
      await worker.start(order, 'order-1', { sku: 'apple' });
      await drain([worker]);
      const child = await worker.get('order-1/ship/0');
      expect(child).toMatchObject({ workflow: 'ship', parentId: 'order-1', status: 'running', input: { sku: 'apple' } });
      h.clock.advance(500);
      await drain([worker]);
      expect(await worker.get('order-1/ship/0')).toMatchObject({ status: 'completed', result: { label: 'label-apple' } });
      expect(await worker.get('order-1')).toMatchObject({ status: 'completed', result: 'shipped with label-apple' });
      expect(calls).toEqual({ label: 1 });
    });

    it('throws a failed child into its parent, and cancels children with their parent', async () => {
      const broken = defineWorkflow('broken', async () => {
        throw new RangeError('no such sku');
      });
      const waiting = defineWorkflow('waiting', async (_input: undefined, step: WorkflowStep) => {
        await step.waitForEvent('never');
      });
      const parent = defineWorkflow('parent', async (_input: undefined, step: WorkflowStep) => {
        try {
          await step.child('broken', broken, undefined, { id: 'kid-broken' });
        } catch (error) {
          if (!(error instanceof ChildWorkflowError)) throw error;
          await step.run('note', () => `${error.status}: ${error.reason}`);
        }
        await step.child('waiting', waiting, undefined, { id: 'kid-waiting' });
      });
      const worker = h.worker('w1', [parent, broken, waiting]);
      await worker.start(parent, 'p');
      await drain([worker]);
      expect(await worker.get('kid-broken')).toMatchObject({ status: 'failed', error: { name: 'RangeError', message: 'no such sku' } });
      expect((await worker.get('p'))!.steps.map((s) => [s.name, s.pending])).toEqual([['broken', false], ['note', false], ['waiting', true]]);
      expect(await worker.cancel('p')).toBe(true);
      await drain([worker]);
      expect((await worker.get('kid-waiting'))!.status).toBe('cancelled');
      expect((await worker.get('p'))!.status).toBe('cancelled');
    });

    it('fails the workflow when its own code throws, with the error recorded', async () => {
      const flow = defineWorkflow('thrower', async (_input: undefined, step: WorkflowStep) => {
        await step.run('one', () => 1);
        throw new TypeError('bad input');
      });
      const worker = h.worker('w1', [flow]);
      await worker.start(flow, 'wf-1');
      await drain([worker]);
      expect(await worker.get('wf-1')).toMatchObject({ status: 'failed', error: { name: 'TypeError', message: 'bad input' } });
    });

    it('hands a workflow over between workers: the next one goes on without re-running finished steps', async () => {
      const ran: string[] = [];
      const flow = defineWorkflow('shared', async (_input: undefined, step: WorkflowStep) => {
        for (const name of ['a', 'b', 'c', 'd']) await step.run(name, () => void ran.push(name));
        return 'done';
      });
      const first = h.worker('w1', [flow]);
      await first.start(flow, 'wf-1');
      while (ran.length < 2) await first.step();
      // w1 goes away (a tab closed) between steps; w2 shares the store and transport.
      await drain([h.worker('w2', [flow])]);
      expect(ran).toEqual(['a', 'b', 'c', 'd']);
      const trace = await h.store.readTrace('wf-1');
      expect(trace.map((t) => [t.worker, t.step ?? t.status])).toEqual([
        ['w1', 'step.run("a")'],
        ['w1', 'step.run("b")'],
        ['w2', 'step.run("c")'],
        ['w2', 'step.run("d")'],
        ['w2', 'completed'],
      ]);
    });
  });
}
