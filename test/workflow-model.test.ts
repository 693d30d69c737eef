/**
 * The workflow model check: several workers step random workflows (runs, a sleep, a wait with a
 * timeout) while the clock jumps, events arrive at random times and workers die at random
 * points of a step. Once fresh workers have drained everything, every workflow completed, each
 * step's recorded result is the one of its last run (no run after the commit), every step ran at
 * least once and was committed once, and nothing is left queued, in the outbox or armed.
 * Seeded, so a failure replays exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../src/clock.js';
import type { ExecutionStore } from '../src/store/contract.js';
import type { Transport } from '../src/transport/contract.js';
import type { WorkflowStep } from '../src/workflow/types.js';
import { defineWorkflow, Workflows } from '../src/workflow/workflows.js';
import { runtimeBackendPairs, type RuntimeBackends } from './support/runtime-backends.js';
import { Crash, drainToQuiet, onFreshBackends, stepOrReplace as stepWorker, withFaults, type Faulty } from './support/runtime-faults.js';
import { ManualScheduler } from './support/runtime-scheduler.js';

const VISIBILITY_MS = 1_000;

interface Plan {
  steps: number;
  sleepAt: number;
  waitAt: number;
}

const scenario = fc.record({
  workers: fc.integer({ min: 1, max: 3 }),
  plans: fc.array(fc.record({ steps: fc.integer({ min: 1, max: 5 }), sleepAt: fc.nat(5), waitAt: fc.nat(5) }), { minLength: 1, maxLength: 3 }),
  ops: fc.array(
    fc.oneof(
      { weight: 8, arbitrary: fc.record({ op: fc.constant('step' as const), w: fc.nat(2) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('parallel' as const) }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(1, 30, 60, 250, VISIBILITY_MS + 1) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('poke' as const), e: fc.nat(2) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('crashAtClaim' as const), w: fc.nat(2) }) },
      {
        weight: 3,
        arbitrary: fc.record({ op: fc.constant('crashAt' as const), w: fc.nat(2), at: fc.constantFrom('ack', 'publish', 'commit', 'ackOutbox', 'deleteTimer') }),
      },
    ),
    { maxLength: 100 },
  ),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

interface Worker {
  workflows: Workflows;
  store: Faulty<ExecutionStore>;
  transport: Faulty<Transport>;
}

async function check(backends: RuntimeBackends, clock: ManualClock, s: Scenario): Promise<void> {
  const scheduler = new ManualScheduler(clock);
  /** How often each step's fn ran, by `<execution>/<step>`. */
  const runs = new Map<string, number>();
  const flow = defineWorkflow('model', async (plan: Plan, step: WorkflowStep) => {
    const out: string[] = [];
    for (let i = 0; i < plan.steps; i++) {
      if (i === plan.sleepAt) await step.sleep(50);
      if (i === plan.waitAt) out.push((await step.waitForEvent('poke', { timeoutMs: 200 })) === null ? 'timeout' : 'poked');
      out.push(
        await step.run(`s${i}`, () => {
          const key = `${step.executionId}/s${i}`;
          runs.set(key, (runs.get(key) ?? 0) + 1);
          return `s${i}:${runs.get(key)}`;
        }),
      );
    }
    return out;
  });
  let generation = 0;
  let ids = 0;
  const hire = (): Worker => {
    const store = withFaults(backends.store);
    const transport = withFaults(backends.transport);
    const workflows = new Workflows({
      store: store.target,
      transport: transport.target,
      workflows: [flow],
      workerId: `w${++generation}`,
      visibilityMs: VISIBILITY_MS,
      clock: clock.now,
      scheduler,
      backoff: { baseMs: 10, maxMs: 100 },
      relayBatch: 2,
      newId: () => `e${++ids}`,
    });
    return { workflows, store, transport };
  };
  let workers = Array.from({ length: s.workers }, hire);
  const stepOrReplace = (i: number): Promise<boolean> => stepWorker(workers, i, (worker) => worker.workflows.step(), hire);

  const names = s.plans.map((_, i) => `wf${i}`);
  for (const [i, plan] of s.plans.entries()) await workers[0]!.workflows.start(flow, names[i]!, plan);
  for (const op of s.ops) {
    const w = 'w' in op ? op.w % workers.length : 0;
    switch (op.op) {
      case 'step':
        await stepOrReplace(w);
        break;
      case 'parallel':
        await Promise.all(workers.map((_, i) => stepOrReplace(i)));
        break;
      case 'advance':
        clock.advance(op.ms);
        break;
      case 'poke':
        try {
          await workers[0]!.workflows.send(names[op.e % names.length]!, { name: 'poke' });
        } catch (error) {
          // Its publish was armed to crash: the sender died, the poke was never sent.
          if (!(error instanceof Crash)) throw error;
          workers[0] = hire();
        }
        break;
      case 'crashAtClaim':
        await workers[w]!.transport.target.claim(workers[w]!.workflows.runtime.workerId, VISIBILITY_MS);
        workers[w] = hire();
        break;
      case 'crashAt':
        (op.at === 'ack' || op.at === 'publish' ? workers[w]!.transport : workers[w]!.store).crashAt(op.at as never);
        break;
    }
  }

  workers = Array.from({ length: s.workers }, hire);
  const quiet = await drainToQuiet(backends, clock, VISIBILITY_MS, async () => (await Promise.all(workers.map((_, i) => stepOrReplace(i)))).some(Boolean));
  expect(quiet).toBe(true);
  expect(await backends.store.pendingOutbox()).toEqual([]);
  expect(await backends.transport.deadLetters()).toEqual([]);
  for (const [i, plan] of s.plans.entries()) {
    const snapshot = (await workers[0]!.workflows.get(names[i]!))!;
    expect(snapshot.status).toBe('completed');
    expect(snapshot.inbox).toEqual([]);
    const result = (snapshot.result as string[]).filter((r) => r !== 'poked' && r !== 'timeout');
    // The recorded result of each step is its last run's: nothing ran it after the commit.
    expect(result).toEqual(Array.from({ length: plan.steps }, (_, k) => `s${k}:${runs.get(`${names[i]}/s${k}`)}`));
    const runSteps = snapshot.steps.filter((st) => st.kind === 'run').map((st) => st.name);
    expect(runSteps).toEqual(Array.from({ length: plan.steps }, (_, k) => `s${k}`));
    // One commit per step: each step appears once among the trace's committed entries.
    const committed = (await backends.store.readTrace(names[i]!)).filter((t) => t.error === undefined && typeof t.step === 'string').map((t) => t.step);
    expect(new Set(committed).size).toBe(committed.length);
  }
}

const RUNS: Record<string, number> = { 0: 150, 1: 60 };

describe('Workflow model check', () => {
  for (const [index, pair] of runtimeBackendPairs.entries()) {
    it(`completes every workflow, committing each step once, under random steps, clock jumps, events and crashes on ${pair.name}`, async () => {
      await fc.assert(fc.asyncProperty(scenario, onFreshBackends(pair.make, check)), { seed: 0x3f10e, numRuns: pair.runs ?? RUNS[index] ?? 30 });
    }, pair.timeout ?? 120_000);
  }
});
