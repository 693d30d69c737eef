import { describe, expect, expectTypeOf, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { LeaseholdError, StoreConflictError } from '../src/errors.js';
import { InMemoryStore } from '../src/store/memory.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { defineWorkflow, WorkflowFailedError, Workflows, type WorkflowEvent, type WorkflowSnapshot, type WorkflowStep, type WorkflowsOptions } from '../src/workflow/index.js';
import { ManualScheduler } from './support/runtime-scheduler.js';
import { drain } from './support/workflow-harness.js';

const clock = new ManualClock(1_000);
const noop = defineWorkflow('noop', async () => 'done');

function options(overrides: Partial<WorkflowsOptions> = {}): WorkflowsOptions {
  return {
    store: new InMemoryStore(),
    transport: new InMemoryTransport({ clock: clock.now }),
    workerId: 'w',
    clock: clock.now,
    scheduler: new ManualScheduler(clock),
    workflows: [noop],
    ...overrides,
  };
}

describe('defineWorkflow', () => {
  it('names a function and freezes the result', () => {
    const flow = defineWorkflow('greet', async (input: { name: string }) => `hi ${input.name}`);
    expect(flow.name).toBe('greet');
    expect(Object.isFrozen(flow)).toBe(true);
    expectTypeOf(flow.fn).parameter(0).toEqualTypeOf<{ name: string }>();
  });

  const one = async (): Promise<number> => 1;
  it.each([
    ['', one, RangeError, 'name'],
    [7, one, TypeError, 'name'],
    ['x', 'not a function', TypeError, 'fn'],
  ])('rejects bad arguments (%#)', (name, fn, kind, argument) => {
    expect(() => defineWorkflow(name as never, fn as never)).toThrow(kind);
    expect(() => defineWorkflow(name as never, fn as never)).toThrow(argument);
  });
});

describe('Workflows options and arguments', () => {
  it('refuses a handler, a misspelt option, a duplicate name, and the Runtime option errors', () => {
    expect(() => new Workflows({ ...options(), handler: () => {} } as never)).toThrow(/options has no option "handler"/);
    expect(() => new Workflows({ ...options(), workflow: [] } as never)).toThrow(/did you mean "workflows"\?/);
    expect(() => new Workflows(options({ workflows: 'x' as never }))).toThrow('options.workflows must be an array');
    expect(() => new Workflows(options({ workflows: [noop, defineWorkflow('noop', async () => 2)] }))).toThrow(RangeError);
    expect(() => new Workflows(options({ workflows: [{ name: 'x' } as never] }))).toThrow('options.workflows[0].fn');
    expect(() => new Workflows(options({ workerId: '' }))).toThrow('options.workerId');
    expect(() => new Workflows(options({ visibilityMs: -1 }))).toThrow('options.visibilityMs');
  });

  it('validates every argument before touching the store', async () => {
    const store = new InMemoryStore();
    const workflows = new Workflows(options({ store }));
    const other = defineWorkflow('other', async () => 1);
    await expect(workflows.start(other, 'x')).rejects.toThrow(/registered with this Workflows/);
    await expect(workflows.start(defineWorkflow('noop', async () => 1), 'x')).rejects.toThrow(TypeError);
    await expect(workflows.start('nope', 'x')).rejects.toThrow(TypeError);
    await expect(workflows.start(noop, '')).rejects.toThrow(/executionId/);
    await expect(workflows.start(noop, 'x', { big: 1n } as never)).rejects.toThrow(/input .*BigInt/);
    await expect(workflows.send('', { name: 'a' })).rejects.toThrow(/executionId/);
    await expect(workflows.send('x', { name: '' })).rejects.toThrow(/event\.name/);
    await expect(workflows.send('x', { name: 'a', nmae: 1 } as never)).rejects.toThrow(/event has no option "nmae"/);
    await expect(workflows.send('x', { name: 'a', payload: () => 1 })).rejects.toThrow(/event\.payload/);
    await expect(workflows.send('x', { name: 'a' }, { priority: 7 })).rejects.toThrow(/options\.priority/);
    await expect(workflows.cancel(3 as never)).rejects.toThrow(TypeError);
    await expect(workflows.get('')).rejects.toThrow(RangeError);
    expect(await store.load('x')).toBeUndefined();
    await expect(workflows.cancel('x')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await workflows.get('x')).toBeUndefined();
  });

  it('refuses an id another workflow or a plain execution holds', async () => {
    const other = defineWorkflow('other', async () => 1);
    const workflows = new Workflows(options({ workflows: [noop, other] }));
    await workflows.start(noop, 'a');
    await expect(workflows.start(other, 'a')).rejects.toThrow(StoreConflictError);
    await workflows.runtime.createExecution('plain');
    await expect(workflows.start(noop, 'plain')).rejects.toThrow(StoreConflictError);
    await expect(workflows.get('plain')).rejects.toMatchObject({ code: 'WORKFLOW_UNKNOWN' });
    await expect(workflows.cancel('plain')).rejects.toBeInstanceOf(LeaseholdError);
    await expect(workflows.send('plain', { name: 'go' })).rejects.toMatchObject({ code: 'WORKFLOW_UNKNOWN' });
    await expect(workflows.send('nope', { name: 'go' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(workflows.send('a', { name: 'go' }, { ifMissing: 'create' as never })).rejects.toThrow(RangeError);
  });

  it('fails the workflow when a step is called with bad arguments, naming the argument', async () => {
    const cases: [string, (step: WorkflowStep) => Promise<unknown>, RegExp][] = [
      ['run-name', (step) => step.run('', () => 1), /^RangeError: name/],
      ['run-fn', (step) => step.run('x', 5 as never), /^TypeError: fn/],
      ['run-attempts', (step) => step.run('x', () => 1, { maxAttempts: 0 }), /^RangeError: options\.maxAttempts/],
      ['sleep', (step) => step.sleep(-1), /^RangeError: ms/],
      ['sleep-until', (step) => step.sleepUntil(Number.NaN), /^RangeError: time/],
      ['wait-options', (step) => step.waitForEvent('e', { timeout: 5 } as never), /did you mean "timeoutMs"/],
      ['wait-timeout', (step) => step.waitForEvent('e', { timeoutMs: -5 }), /options\.timeoutMs/],
      ['child-unregistered', (step) => step.child('c', defineWorkflow('ghost', async () => 1), undefined), /registered/],
      ['child-input', (step) => step.child('c', noop, { n: Number.NaN }), /input .*NaN/],
    ];
    const flows = cases.map(([name, body]) => defineWorkflow(name, async (_input: undefined, step: WorkflowStep) => body(step)));
    const workflows = new Workflows(options({ workflows: [noop, ...flows] }));
    for (const flow of flows) await workflows.start(flow, flow.name);
    await drain([workflows]);
    for (const [name, , message] of cases) {
      const snapshot = await workflows.get(name);
      expect(snapshot?.status, name).toBe('failed');
      expect(`${snapshot!.error!.name}: ${snapshot!.error!.message}`, name).toMatch(message);
    }
  });

  it('does not re-run a step when its result is not JSON; the event fails and retries', async () => {
    const flow = defineWorkflow('unstorable', async (_input: undefined, step: WorkflowStep) => step.run('map', () => new Map()));
    const workflows = new Workflows(options({ workflows: [flow] }));
    await workflows.start(flow, 'u');
    const results = await drain([workflows]);
    expect(results.at(-1)).toMatchObject({ kind: 'failed', error: { message: expect.stringMatching(/the result of step\.run\("map"\) is a Map/) } });
    expect((await workflows.get('u'))!.status).toBe('running');
  });

  it('runs with run({ signal }): through its steps, asleep until the timer, stopped by abort', async () => {
    const clock = new ManualClock(5_000);
    const scheduler = new ManualScheduler(clock);
    const transport = new InMemoryTransport({ clock: clock.now });
    const flow = defineWorkflow('looped', async (_input: undefined, step: WorkflowStep) => {
      await step.run('one', () => 1);
      await step.sleep(10_000);
      return step.run('two', () => 2);
    });
    const workflows = new Workflows(options({ transport, clock: clock.now, scheduler, workflows: [flow] }));
    await workflows.start(flow, 'looped');
    const controller = new AbortController();
    const running = workflows.run({ signal: controller.signal });
    await scheduler.advance(1_000);
    expect((await workflows.get('looped'))!.steps.map((s) => [s.name, s.pending])).toEqual([['one', false], ['sleep', true]]);
    await scheduler.advance(10_000);
    expect(await workflows.get('looped')).toMatchObject({ status: 'completed', result: 2 });
    controller.abort();
    await running;
    expect(scheduler.pending).toBe(0);
  });

  it('types step results, events and child results from the definitions', () => {
    const child = defineWorkflow('child', async (input: { n: number }) => ({ doubled: input.n * 2 }));
    defineWorkflow('parent', async (_input: undefined, step) => {
      expectTypeOf(await step.run('n', () => 3)).toEqualTypeOf<number>();
      expectTypeOf(await step.waitForEvent<{ ok: boolean }>('e')).toEqualTypeOf<WorkflowEvent<{ ok: boolean }> | null>();
      expectTypeOf(await step.child('c', child, { n: 1 })).toEqualTypeOf<{ doubled: number }>();
      // @ts-expect-error: the child's input type is checked
      await step.child('c', child, { n: 'one' });
    });
  });
});

describe('Workflows.result and a typed get', () => {
  const order = defineWorkflow('order', async (input: { amount: number }, step: WorkflowStep) => {
    const charged = await step.run('charge', () => input.amount * 2);
    if (charged < 0) throw new Error('negative charge');
    await step.waitForEvent('ship');
    return { charged };
  });
  const parent = defineWorkflow('parent', async (_input: undefined, step: WorkflowStep) => step.child('sub', noop, undefined, { id: 'kid' }));

  function setup() {
    const scheduler = new ManualScheduler(clock);
    const workflows = new Workflows(options({ workflows: [order, noop, parent], scheduler }));
    return { scheduler, workflows };
  }

  it('resolves the typed result once the workflow completes, and at once when it has', async () => {
    const { scheduler, workflows } = setup();
    await workflows.start(order, 'o1', { amount: 21 });
    let settled: unknown = 'pending';
    const waiting = workflows.result(order, 'o1');
    expectTypeOf(waiting).toEqualTypeOf<Promise<{ charged: number }>>();
    void waiting.then((value) => (settled = value));
    await drain([workflows]);
    await scheduler.advance(1_000);
    expect(settled).toBe('pending'); // waits for its event
    await workflows.send('o1', { name: 'ship' });
    await drain([workflows]);
    await scheduler.advance(1_000);
    expect(settled).toEqual({ charged: 42 });
    await expect(workflows.result(order, 'o1')).resolves.toEqual({ charged: 42 });
    const snapshot = await workflows.get(order, 'o1');
    expectTypeOf(snapshot).toEqualTypeOf<WorkflowSnapshot<{ amount: number }, { charged: number }> | undefined>();
    expect(snapshot).toMatchObject({ input: { amount: 21 }, result: { charged: 42 } });
  });

  it('rejects with WorkflowFailedError for a failed or cancelled workflow, and names what is wrong', async () => {
    const { workflows } = setup();
    await workflows.start(order, 'bad', { amount: -1 });
    await drain([workflows]);
    const failed = await workflows.result(order, 'bad').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    expect(failed).toMatchObject({ code: 'WORKFLOW_FAILED', status: 'failed', error: { name: 'Error', message: 'negative charge' } });
    await workflows.start(order, 'gone', { amount: 1 });
    await workflows.cancel('gone');
    await expect(workflows.result(order, 'gone')).rejects.toMatchObject({ code: 'WORKFLOW_FAILED', status: 'cancelled' });
    await expect(workflows.result(order, 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await workflows.start(noop, 'other');
    await expect(workflows.result(order, 'other')).rejects.toMatchObject({ code: 'WORKFLOW_UNKNOWN', message: expect.stringContaining('runs workflow "noop", not "order"') });
    await expect(workflows.get(order, 'other')).rejects.toMatchObject({ code: 'WORKFLOW_UNKNOWN' });
    await expect(workflows.result(order, 'bad', { pollMs: 0 })).rejects.toThrow(RangeError);
    await expect(workflows.result(order, 'bad', { poll: 5 } as never)).rejects.toThrow(/did you mean "pollMs"/);
  });

  it('stops waiting when its signal aborts, with the signal\'s reason', async () => {
    const { scheduler, workflows } = setup();
    await workflows.start(order, 'o2', { amount: 1 });
    const controller = new AbortController();
    const waiting = workflows.result(order, 'o2', { signal: controller.signal });
    await scheduler.advance(100);
    controller.abort(new Error('page closed'));
    await expect(waiting).rejects.toThrow('page closed');
  });

  it("shows a child step's execution id in the parent's snapshot", async () => {
    const { workflows } = setup();
    await workflows.start(parent, 'p');
    await drain([workflows]);
    expect((await workflows.get('p'))!.steps).toEqual([{ kind: 'child', name: 'sub', pending: false, childId: 'kid' }]);
    await expect(workflows.result(parent, 'p')).resolves.toBe('done');
  });
});
