/**
 * How `run()` waits when idle: until the transport says something changed, a timeout passes, or
 * the signal aborts — whichever comes first — and every listener is removed afterwards.
 * @internal
 */
import { isChangeNotifier, type Transport } from '../transport/contract.js';
import type { AbortSignalLike, Scheduler } from './types.js';

/** Resolves after `ms` (by `scheduler`), or at once when `signal` aborts. Never rejects. */
export function sleep(scheduler: Scheduler, ms: number, signal: AbortSignalLike, wake?: (listener: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    let unsubscribe: (() => void) | undefined;
    const done = (): void => {
      scheduler.clearTimeout(handle);
      signal.removeEventListener('abort', done);
      unsubscribe?.();
      resolve();
    };
    const handle = scheduler.setTimeout(done, ms);
    signal.addEventListener('abort', done);
    unsubscribe = wake?.(done);
  });
}

/**
 * Watches `transport` for change notices for the whole of a `run()`. `dirty` records a notice
 * that arrived while a step was running (between the claim that found nothing and the wait), so
 * it is not missed; `listen` lets a wait be woken by the next one.
 */
export class ChangeWatch {
  dirty = false;
  readonly #listeners = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(transport: Transport) {
    this.#unsubscribe = isChangeNotifier(transport)
      ? transport.onChange(() => {
          this.dirty = true;
          for (const listener of [...this.#listeners]) listener();
        })
      : () => {};
  }

  listen = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  };

  close(): void {
    this.#unsubscribe();
    this.#listeners.clear();
  }
}
