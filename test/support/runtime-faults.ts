/**
 * Fault injection for the model check: wraps a real store or transport so that the next call of
 * one chosen method throws a {@link Crash} instead of running — the worker "dies" at exactly that
 * point of a step, with everything before it done and nothing after it. Every other call goes
 * straight to the real backend.
 */

import { ManualClock } from '../../src/clock.js';
import type { ExecutionStore } from '../../src/store/contract.js';
import type { Transport } from '../../src/transport/contract.js';
import { END_OF_TIME } from '../conformance/store-harness.js';
import type { MakeRuntimeBackends, RuntimeBackends } from './runtime-backends.js';

/** What a worker that died mid-step throws. */
export class Crash extends Error {
  override name = 'Crash';
}

export interface Faulty<T extends object> {
  /** The wrapped backend, to hand to one worker. */
  target: T;
  /** The next call of `method` throws a Crash without reaching the backend. */
  crashAt(method: keyof T & string): void;
}

export function withFaults<T extends object>(real: T): Faulty<T> {
  let armed: string | undefined;
  const target = new Proxy(real, {
    get(inner, property) {
      const value = Reflect.get(inner, property) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === armed) {
          armed = undefined;
          return Promise.reject(new Crash(`crashed at ${String(property)}`));
        }
        // Bound to the real object: the backends keep their state in private fields.
        return (value as (...a: unknown[]) => unknown).apply(inner, args);
      };
    },
  });
  return { target, crashAt: (method) => void (armed = method) };
}

/**
 * Steps `workers[i]` with `step`; a worker whose step crashed is gone, and `hire()` puts a new
 * one (a new worker id) in its place. Resolves whether the step did anything (a crash counts).
 */
export async function stepOrReplace<W>(workers: W[], i: number, step: (worker: W) => Promise<{ kind: string }>, hire: () => W): Promise<boolean> {
  try {
    return (await step(workers[i]!)).kind !== 'idle';
  } catch (error) {
    if (!(error instanceof Crash)) throw error;
    workers[i] = hire();
    return true;
  }
}

/**
 * Runs `round` (every worker steps once; resolves whether any was busy) until a round is idle
 * with no group queued and no timer armed, moving the clock past a lease whenever work is left
 * only behind a lease or a timer. Resolves whether it got there within `rounds`.
 */
export async function drainToQuiet(
  backends: { store: ExecutionStore; transport: Transport },
  clock: ManualClock,
  visibilityMs: number,
  round: () => Promise<boolean>,
  rounds = 400,
): Promise<boolean> {
  for (let i = 0; i < rounds; i++) {
    if (await round()) continue;
    const groups = (await backends.transport.inspect()).groups.length;
    const armed = (await backends.store.dueTimers(END_OF_TIME)).length;
    if (groups === 0 && armed === 0) return true;
    clock.advance(visibilityMs + 1);
  }
  return false;
}

/**
 * The property of a model check on one backend pair: each run gets a fresh clock at 1 000 000
 * and fresh backends on it, checks scenario `s` with `check`, and disposes the backends.
 */
export function onFreshBackends<S>(make: MakeRuntimeBackends, check: (backends: RuntimeBackends, clock: ManualClock, s: S) => Promise<void>): (s: S) => Promise<void> {
  return async (s) => {
    const clock = new ManualClock(1_000_000);
    const backends = await make({ clock: clock.now });
    try {
      await check(backends, clock, s);
    } finally {
      await backends.dispose();
    }
  };
}
