/**
 * The model check: several workers step random executions while the clock jumps and workers die
 * at random points of a step. Whatever happens, once the survivors have drained everything,
 * every execution reached its final state, no event was applied twice, and nothing is left
 * queued, in the outbox, in the spawn list or armed. Seeded, so a failure replays exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../src/clock.js';
import { Runtime } from '../src/runtime/runtime.js';
import type { Effects, Handler } from '../src/runtime/types.js';
import type { Execution, ExecutionStore } from '../src/store/contract.js';
import type { Transport } from '../src/transport/contract.js';
import { runtimeBackendPairs, type RuntimeBackends } from './support/runtime-backends.js';
import { Crash, drainToQuiet, onFreshBackends, stepOrReplace as stepWorker, withFaults, type Faulty } from './support/runtime-faults.js';
import { ManualScheduler } from './support/runtime-scheduler.js';

const VISIBILITY_MS = 1_000;

interface Counter extends Execution {
  applied: string[];
  status: string;
  count: number;
  target: number;
  settled?: boolean;
  kidDone?: boolean;
  watchFired?: number;
  /** When the handler last armed `watch` (null: cancelled or fired). */
  watchAt?: number | null;
  /** Timeouts delivered for a time the handler had since re-armed or cancelled: must stay 0. */
  staleTimeouts?: number;
}

/**
 * Counts `inc` events to a target, re-arming a `watch` timer on each (so sweeps race re-arms);
 * at the target it arms `settle` and spawns a child, and is done once both the timer fired and
 * the child reported back.
 */
const counter: Handler = (exe, event, info) => {
  const c = exe as Counter;
  (c.applied ??= []).push(event.id);
  const effects: Effects = {};
  if (c.parentId !== undefined) {
    c.status = 'done';
    return { emit: [{ to: c.parentId as string, event: { type: 'kidDone' } }] };
  }
  const finish = (): void => {
    if (c.settled && c.kidDone) c.status = 'done';
  };
  if (event.type === 'inc') {
    c.count += 1;
    if (c.count < c.target) {
      c.watchAt = info.now + 50;
      effects.timers = [{ path: 'watch', at: c.watchAt }];
    } else {
      c.status = 'settling';
      c.watchAt = null;
      effects.timers = [{ path: 'watch', cancel: true }, { path: 'settle', afterMs: 100 }];
      effects.spawn = [{ childId: `${c.id}.kid`, context: { parent: c.id } }];
    }
  } else if (event.type === 'kidDone') {
    c.kidDone = true;
    finish();
  } else if (event.type === 'timeout' && event.path === 'settle') {
    c.settled = true;
    finish();
  } else if (event.type === 'timeout') {
    if (event.fireAt === c.watchAt) c.watchFired = (c.watchFired ?? 0) + 1;
    else c.staleTimeouts = (c.staleTimeouts ?? 0) + 1;
    c.watchAt = null;
  }
  return effects;
};

type Op =
  | { op: 'step' | 'crashAtClaim'; w: number }
  | { op: 'crashAt'; w: number; at: 'ack' | 'commit' | 'ackOutbox' | 'ackSpawn' | 'deleteTimer' }
  | { op: 'parallel' }
  | { op: 'advance'; ms: number; renewals: boolean }
  | { op: 'stall'; w: number }
  | { op: 'wake' }
  | { op: 'suspend' | 'resume'; e: number };

interface Scenario {
  targets: number[];
  workers: number;
  ops: Op[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  targets: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
  workers: fc.integer({ min: 1, max: 3 }),
  ops: fc.array(
    fc.oneof(
      { weight: 8, arbitrary: fc.record({ op: fc.constant('step' as const), w: fc.nat(2) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('parallel' as const) }) },
      {
        weight: 3,
        arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(1, 30, 60, 150, VISIBILITY_MS + 1), renewals: fc.boolean() }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('crashAtClaim' as const), w: fc.nat(2) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('stall' as const), w: fc.nat(2) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('wake' as const) }) },
      {
        weight: 3,
        arbitrary: fc.record({ op: fc.constant('crashAt' as const), w: fc.nat(2), at: fc.constantFrom('ack', 'commit', 'ackOutbox', 'ackSpawn', 'deleteTimer') }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('suspend' as const, 'resume' as const), e: fc.nat(3) }) },
    ),
    { maxLength: 120 },
  ),
});

interface Worker {
  runtime: Runtime;
  /** Set by a `stall`: the worker's next handler call waits for the next `wake`. */
  stalled: boolean;
  store: Faulty<ExecutionStore>;
  transport: Faulty<Transport>;
}

async function check(backends: RuntimeBackends, clock: ManualClock, s: Scenario): Promise<void> {
  const scheduler = new ManualScheduler(clock);
  let generation = 0;
  let ids = 0;
  let wake!: () => void;
  let wakeUp = new Promise<void>((resolve) => (wake = resolve));
  const zombies: Promise<unknown>[] = [];
  const hire = (): Worker => {
    const store = withFaults(backends.store);
    const transport = withFaults(backends.transport);
    const worker: Worker = { stalled: false } as Worker;
    const runtime = new Runtime({
      store: store.target,
      transport: transport.target,
      handler: async (exe, event, info) => {
        if (worker.stalled) await wakeUp;
        return counter(exe, event, info);
      },
      workerId: `w${++generation}`,
      visibilityMs: VISIBILITY_MS,
      clock: clock.now,
      scheduler,
      backoff: { baseMs: 10, maxMs: 100 },
      suspendHoldMs: 5_000,
      relayBatch: 2,
      newId: () => `e${++ids}`,
    });
    return Object.assign(worker, { runtime, store, transport });
  };
  let workers = Array.from({ length: s.workers }, hire);
  const stepOrReplace = (i: number): Promise<boolean> => stepWorker(workers, i, (worker) => worker.runtime.step(), hire);

  const ids0 = s.targets.map((_, i) => `c${i}`);
  for (const [i, target] of s.targets.entries()) {
    await workers[0]!.runtime.createExecution(ids0[i]!, { applied: [], status: 'counting', count: 0, target });
    for (let n = 0; n < target; n++) await workers[0]!.runtime.send(ids0[i]!, { id: `c${i}-inc${n}`, type: 'inc' });
  }

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
        // Through the scheduler, stalled workers' renewals fire on the way; through the clock alone their leases run out.
        if (op.renewals) await scheduler.advance(op.ms);
        else clock.advance(op.ms);
        break;
      case 'stall':
        // The worker's step hangs in its handler (if it claimed anything); a new worker takes its place.
        workers[w]!.stalled = true;
        zombies.push(workers[w]!.runtime.step().catch((error: unknown) => expect(error).toBeInstanceOf(Crash)));
        workers[w] = hire();
        break;
      case 'wake':
        wake();
        await Promise.all(zombies.splice(0));
        wakeUp = new Promise<void>((resolve) => (wake = resolve));
        break;
      case 'crashAtClaim':
        await workers[w]!.transport.target.claim(workers[w]!.runtime.workerId, VISIBILITY_MS);
        workers[w] = hire();
        break;
      case 'crashAt':
        (op.at === 'ack' ? workers[w]!.transport : workers[w]!.store).crashAt(op.at as never);
        break;
      case 'suspend':
      case 'resume':
        await workers[0]!.runtime[op.op](ids0[op.e % ids0.length]!);
        break;
    }
  }

  // The stalled workers finish; the survivors (fresh, with no faults armed) resume everything and drain it.
  wake();
  await Promise.all(zombies);
  workers = Array.from({ length: s.workers }, hire);
  for (const id of ids0) await workers[0]!.runtime.resume(id);
  const quiet = await drainToQuiet(backends, clock, VISIBILITY_MS, async () => (await Promise.all(workers.map((_, i) => stepOrReplace(i)))).some(Boolean));
  expect(quiet).toBe(true);
  expect(await backends.store.pendingOutbox()).toEqual([]);
  expect(await backends.store.pendingSpawns()).toEqual([]);
  expect(await backends.transport.deadLetters()).toEqual([]);
  for (const [i, id] of ids0.entries()) {
    const c = (await backends.store.load(id)) as Counter;
    expect(c).toMatchObject({ status: 'done', count: s.targets[i], settled: true, kidDone: true });
    expect(c.staleTimeouts).toBeUndefined();
    const incs = c.applied.filter((e) => e.includes('-inc'));
    expect(incs).toEqual(Array.from({ length: s.targets[i]! }, (_, n) => `c${i}-inc${n}`));
    expect(new Set(c.applied).size).toBe(c.applied.length);
    const kid = (await backends.store.load(`${id}.kid`)) as Counter;
    expect(kid).toMatchObject({ status: 'done', applied: [`spawned:${id}:${id}.kid`] });
    for (const execution of [id, `${id}.kid`]) {
      // One trace step per commit: an event committed twice would appear twice.
      const committed = (await backends.store.readTrace(execution)).filter((step) => step.error === undefined).map((step) => step.event);
      expect(new Set(committed).size).toBe(committed.length);
    }
  }
}

const RUNS: Record<string, number> = { 0: 400, 1: 150 };

describe('Runtime model check', () => {
  for (const [index, pair] of runtimeBackendPairs.entries()) {
    it(`converges under random steps, clock jumps and crashes on ${pair.name}`, async () => {
      await fc.assert(fc.asyncProperty(scenario, onFreshBackends(pair.make, check)), { seed: 0x1ea5e, numRuns: pair.runs ?? RUNS[index] ?? 30 });
    }, pair.timeout);
  }
});
