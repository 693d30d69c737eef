/**
 * Schedules under random interleavings (fast-check): three workers stepping in any order, the
 * clock jumping by up to three slots, workers dying inside a firing (after its publish, before
 * its commit), pauses and resumes. After every run: each slot id was published as one message,
 * the target applied each slot once, in order, on the grid, never before its time, and — while
 * the schedule was never paused — every slot from the first to the last, as many as the
 * schedule counts (catch-up 'all').
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { ClosedError } from '../src/errors.js';
import { Runtime } from '../src/runtime/runtime.js';
import { Schedules } from '../src/schedule/schedules.js';
import type { Transport } from '../src/transport/contract.js';
import { runtimeBackendPairs } from './support/runtime-backends.js';
import { drain } from './support/runtime-workflows.js';
import { storeWithFault } from './support/workflow-faults.js';

const EVERY = 60_000;
const VISIBILITY_MS = 30_000;
const START = Date.UTC(2026, 0, 1);

type Command = { kind: 'advance'; ms: number } | { kind: 'step' | 'die'; worker: number } | { kind: 'pause' | 'resume' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 * EVERY }).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 2 }).map((worker) => ({ kind: 'step' as const, worker })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 }).map((worker) => ({ kind: 'die' as const, worker })) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'pause' as const }, { kind: 'resume' as const }) },
);

describe('schedules under random steps, clock jumps, deaths and pauses', () => {
  for (const pair of runtimeBackendPairs.filter((p) => p.caps === undefined)) {
    it(`publishes and applies each slot once (${pair.name})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 60 }), async (commands) => {
          const clock = new ManualClock(START);
          const backends = await pair.make({ clock: clock.now });
          try {
            const published = new Map<string, Set<number>>();
            const transport = new Proxy(backends.transport, {
              get(target, key) {
                const value = Reflect.get(target, key, target) as unknown;
                if (key !== 'publish') return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
                return async (group: string, event: { id: string }, options: object) => {
                  const seq = await target.publish(group, event, options);
                  if (group === 'ticks') published.set(event.id, (published.get(event.id) ?? new Set()).add(seq));
                  return seq;
                };
              },
            }) as Transport;
            const schedules = new Schedules({ store: backends.store, transport, clock: clock.now });
            const dying = [false, false, false];
            const workers = [0, 1, 2].map(
              (i) =>
                new Runtime({
                  store: storeWithFault(backends.store, (exe) => {
                    if (exe.id === '$schedules' && dying[i] && exe.$runtime !== undefined) {
                      dying[i] = false;
                      throw new ClosedError('store (the worker died inside a firing)');
                    }
                  }),
                  transport,
                  workerId: `w${i}`,
                  visibilityMs: VISIBILITY_MS,
                  clock: clock.now,
                  backoff: { baseMs: 100, maxMs: 1_000 },
                  handler: schedules.handler((exe, event, info) => {
                    (exe.seen as unknown[]).push([event.slot, info.now]);
                  }),
                }),
            );
            await workers[0]!.createExecution('ticks', { seen: [] });
            await schedules.schedule('m', { everyMs: EVERY, startAt: START + EVERY, catchUp: 'all' }, { group: 'ticks', event: { type: 'tick' } });
            let paused = false;
            let everPaused = false;
            for (const c of commands) {
              if (c.kind === 'advance') clock.advance(c.ms);
              else if (c.kind === 'pause') [paused, everPaused] = [(await schedules.pause('m')).paused, true];
              else if (c.kind === 'resume') paused = (await schedules.resume('m')).paused;
              else if (c.kind === 'step' || c.kind === 'die') {
                if (c.kind === 'die') dying[c.worker] = true;
                await workers[c.worker]!.step().catch((error: unknown) => {
                  if (!(error instanceof ClosedError)) throw error;
                });
              }
            }
            // Let every lease of a dead worker run out, and finish.
            dying.fill(false);
            clock.advance(VISIBILITY_MS + 1);
            await drain(workers);
            expect(paused).toBe((await schedules.get('m'))!.paused);

            const state = (await schedules.get('m'))!;
            const seen = (await backends.store.load('ticks'))!.seen as [number, number][];
            const slots = seen.map(([slot]) => slot);
            for (const [id, seqs] of published) expect([id, seqs.size]).toEqual([id, 1]);
            expect(slots).toEqual([...slots].sort((a, b) => a - b));
            expect(new Set(slots).size).toBe(slots.length);
            // A firing that had published but not committed when a pause landed still delivers its
            // slot (docs/schedules.md): then more slots arrive than the schedule counts, never fewer.
            if (everPaused) expect(slots.length).toBeGreaterThanOrEqual(state.fired);
            else expect(slots.length).toBe(state.fired);
            for (const [slot, handledAt] of seen) {
              expect((slot - START) % EVERY).toBe(0);
              expect(handledAt).toBeGreaterThanOrEqual(slot);
            }
            expect([...published.keys()].sort()).toEqual(slots.map((slot) => `schedule:m:${slot}`).sort());
            if (!everPaused) expect(slots).toEqual(Array.from({ length: slots.length }, (_, k) => START + (k + 1) * EVERY));
          } finally {
            await backends.dispose();
          }
        }),
        { numRuns: 60 },
      );
    }, 120_000);
  }
});
