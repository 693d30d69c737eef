/**
 * The few host facilities the worker loops need (timers, ids, deep copies), reached through
 * `globalThis` with narrow structural types: the core compiles against ES2022 alone, with no
 * DOM or Node types, and runs on any JavaScript runtime. Every one of them can be injected.
 * @internal
 */
import type { Scheduler } from './types.js';

interface HostGlobals {
  setTimeout?: (callback: () => void, ms: number) => unknown;
  clearTimeout?: (handle: unknown) => void;
  crypto?: { randomUUID?: () => string };
  structuredClone?: <T>(value: T) => T;
}

const host = globalThis as unknown as HostGlobals;

/** `globalThis.setTimeout`, or a TypeError when the host has none (then pass `scheduler`). */
export function hostScheduler(): Scheduler {
  if (typeof host.setTimeout !== 'function' || typeof host.clearTimeout !== 'function') {
    throw new TypeError('options.scheduler is required: this runtime has no global setTimeout');
  }
  // Called through `host` each time: some hosts reject a detached setTimeout ("Illegal invocation").
  return {
    setTimeout: (callback, ms) => host.setTimeout!(callback, ms),
    clearTimeout: (handle) => host.clearTimeout!(handle),
  };
}

let fallbackCounter = 0;

/** A random UUID where the host has `crypto.randomUUID`, else a unique-enough time + counter + random id. */
export function hostNewId(): string {
  const uuid = host.crypto?.randomUUID;
  if (typeof uuid === 'function') return uuid.call(host.crypto);
  fallbackCounter += 1;
  return `${Date.now().toString(36)}-${fallbackCounter.toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/**
 * A deep copy: `structuredClone` where the host has it, else a JSON round trip (enough for
 * executions the SQL store can hold; in-memory executions with functions need `options.clone`).
 */
export function hostClone<T>(value: T): T {
  if (typeof host.structuredClone === 'function') return host.structuredClone(value);
  return JSON.parse(JSON.stringify(value)) as T;
}
