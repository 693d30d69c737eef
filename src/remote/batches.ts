/**
 * Group commit for a host: calls queue up while a batch runs and share the next transaction.
 * Fair queues for the calls, and the task that serves them.
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
import { ClosedError } from '../errors.js';
import type { HostedCall, SqlHost } from './host.js';

/** A call waiting to be served, with the way to answer it. */
export interface Queued {
  call: HostedCall;
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

/** Most calls in one transaction: enough to share a commit widely, few enough to answer soon. */
export const MAX_GROUP = 64;

/**
 * Serves calls to a {@link SqlHost} in batches: when idle, a call is applied at once (in a
 * microtask, so calls posted in the same task join it); after every batch a follow-up task takes
 * whatever arrived while it ran. Why batches: a commit on OPFS costs a fixed number of file calls
 * whatever it holds (two per written page), so N calls that share one COMMIT cost little more
 * than one. The host runs one batch at a time, synchronously; calls that arrive meanwhile wait in
 * the event loop and make the next one.
 */
export class GroupCommit {
  readonly #host: SqlHost;
  readonly #onChange: ((queue: string) => void) | undefined;
  readonly #queues = new CallQueues();
  readonly #tasks = taskScheduler();
  /** A batch ran and its follow-up task has not yet taken the calls that came meanwhile. */
  #busy = false;
  #closed = false;

  /** `onChange`: called after a batch committed, once for each queue in which it may have made work claimable. */
  constructor(host: SqlHost, onChange?: (queue: string) => void) {
    this.#host = host;
    this.#onChange = onChange;
  }

  /**
   * Queues `call` behind `caller`'s earlier calls and settles once the batch that applied it has
   * committed: with its answer, or its own error (the backend's, a TypeError for a call the host
   * does not serve, the COMMIT's, or a ClosedError once {@link close} was called). Callers are
   * served in turn; one caller's calls are applied in the order they came.
   */
  serve(call: HostedCall, caller = 'default'): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ClosedError('database'));
    try {
      this.#host.check(call);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#queues.push(caller, { call, resolve, reject });
      this.#schedule();
    });
  }

  /** Stops serving: calls still queued reject with a ClosedError. */
  close(): void {
    this.#closed = true;
    this.#tasks.close();
    for (const item of this.#queues.drain()) item.reject(new ClosedError('database'));
  }

  #schedule(): void {
    if (this.#busy) return;
    this.#busy = true;
    queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    if (this.#closed || this.#queues.size === 0) {
      this.#busy = false;
      return;
    }
    const batch = this.#queues.take(MAX_GROUP);
    const settled = this.#host.applyBatch(batch.map((item) => item.call));
    const changed = new Set<string>();
    batch.forEach((item, i) => {
      const outcome = settled[i]!;
      if (!outcome.ok) return item.reject(outcome.error);
      if (outcome.changed !== null) changed.add(outcome.changed);
      item.resolve(outcome.value);
    });
    for (const queue of changed) {
      try {
        this.#onChange?.(queue);
      } catch (error) {
        // A notice listener's failure is not the batch's: report it, keep serving.
        void Promise.reject(error);
      }
    }
    this.#tasks.schedule(() => this.#drain());
  }
}
