/**
 * Fair queues for the owner's calls, and the task that serves them.
 *
 * One FIFO per caller (the owner's own page, each forwarding tab), taken in turn: a tab that
 * keeps many calls in flight gets one call into a batch for every one of each other caller's,
 * so it cannot starve them. Within a caller, order is kept.
 *
 * Why a queue at all, when the worker is single-threaded: Chromium delivers a worker's
 * BroadcastChannel messages ahead of its page's postMessage while both are waiting. An owner that
 * served each forwarded call as its message arrived was busy for as long as another tab kept
 * calls in flight, and its own page's calls (and close) waited behind them: up to 105 s measured
 * in a private window, where every file call is slow. Enqueueing is cheap, so the waiting
 * messages drain at once and the page's turn comes.
 * @internal
 */
import type { CallMessage } from './wire.js';

/** A call waiting to be served, with the way to answer it. */
export interface Queued {
  call: CallMessage;
  /** Forwarded from another tab, so it may be a retry: answered from the journal if applied. */
  journaled: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class CallQueues {
  /** Insertion order is turn order: a caller that still waits after a batch moves to the back. */
  readonly #byCaller = new Map<string, Queued[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(caller: string, item: Queued): void {
    const queue = this.#byCaller.get(caller);
    if (queue) queue.push(item);
    else this.#byCaller.set(caller, [item]);
    this.#size++;
  }

  /** Takes up to `max` calls, one from each caller in turn, oldest first within a caller. */
  take(max: number): Queued[] {
    const taken: Queued[] = [];
    while (taken.length < max && this.#size > 0) {
      for (const queue of this.#byCaller.values()) {
        if (taken.length === max) break;
        const item = queue.shift();
        if (item) {
          taken.push(item);
          this.#size--;
        }
      }
    }
    for (const [caller, queue] of [...this.#byCaller]) {
      this.#byCaller.delete(caller);
      if (queue.length > 0) this.#byCaller.set(caller, queue);
    }
    return taken;
  }

  /** Empties every queue (the database is closing). */
  drain(): Queued[] {
    const all = [...this.#byCaller.values()].flat();
    this.#byCaller.clear();
    this.#size = 0;
    return all;
  }
}

/**
 * Runs a callback as a new task (not a microtask), behind the messages already waiting, so the
 * calls that arrived during a batch join the next one. A MessageChannel rather than setTimeout:
 * nested timers are clamped to 4 ms.
 */
export function taskScheduler(): { schedule(run: () => void): void; close(): void } {
  if (typeof MessageChannel !== 'function') {
    return { schedule: (run) => void setTimeout(run, 0), close: () => {} };
  }
  const channel = new MessageChannel();
  const waiting: (() => void)[] = [];
  channel.port1.onmessage = () => waiting.shift()?.();
  // Node: a listening port keeps the process alive; the scheduler must not.
  (channel.port1 as { unref?: () => void }).unref?.();
  return {
    schedule(run) {
      waiting.push(run);
      channel.port2.postMessage(null);
    },
    close() {
      channel.port1.close();
      waiting.length = 0;
    },
  };
}
