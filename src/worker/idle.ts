/**
 * How the worker loops wait when there is nothing to claim, shared so they wake alike: on the
 * transport's change notices (where it has them), at the next time the transport says a lease or
 * a delay runs out (`stats().nextReadyAt`), and otherwise on a poll that backs off from
 * `idleMinMs`, doubling up to `idleMaxMs`.
 * @internal
 */
import { isChangeNotifier, type TransportStats } from '../transport/contract.js';
import { readClock } from '../validate.js';
import type { LoopConfig } from './options.js';
import type { AbortSignalLike, Scheduler } from './types.js';

/**
 * Resolves after `ms` (by `scheduler`), at once when `signal` aborts, or when `wake` (given a
 * listener, returning its removal) calls back — whichever comes first; every listener is removed
 * afterwards. Never rejects.
 */
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
 * Counts the transport's change notices for a loop's whole run and passes each to `onNotice`:
 * a loop compares `count` before and after a claim that found nothing, so a notice that arrived
 * meanwhile is not lost in the wait that follows.
 */
export class Notices {
  count = 0;
  readonly #unsubscribe: () => void;

  constructor(transport: unknown, onNotice: () => void) {
    this.#unsubscribe = isChangeNotifier(transport)
      ? transport.onChange(() => {
          this.count += 1;
          onNotice();
        })
      : () => {};
  }

  close(): void {
    this.#unsubscribe();
  }
}

export type IdleConfig = Pick<LoopConfig, 'clock' | 'idleMinMs' | 'idleMaxMs'> & { transport: { stats(): Promise<TransportStats> } };

/** The idle poll's back-off and the transport's next ready time, for one loop. */
export class IdleTimer {
  readonly #cfg: IdleConfig;
  readonly #report: (error: unknown) => void;
  #idleMs: number;
  #readyAt: number | null = null;
  #readyRead = -Infinity;

  constructor(cfg: IdleConfig, report: (error: unknown) => void) {
    this.#cfg = cfg;
    this.#report = report;
    this.#idleMs = cfg.idleMinMs;
  }

  /** Work was found: the next poll starts from `idleMinMs` again. */
  busy(): void {
    this.#idleMs = this.#cfg.idleMinMs;
  }

  /** A message was parked or held back: the next wait reads the ready time afresh. */
  changed(): void {
    this.#readyRead = -Infinity;
  }

  /**
   * How long to wait now, and whether that wait is a poll (which doubles the next one, see
   * {@link waited}) or ends at the transport's next ready time.
   */
  async next(): Promise<{ delayMs: number; polling: boolean }> {
    const readyAt = await this.#nextReadyAt();
    const delayMs = this.#idleMs;
    if (readyAt !== null) {
      const untilMs = Math.max(1, readyAt - readClock(this.#cfg.clock));
      if (untilMs < delayMs) return { delayMs: untilMs, polling: false };
    }
    return { delayMs, polling: true };
  }

  /** A wait of {@link next} ran to its end with nothing new: a poll backs off. */
  waited(polling: boolean): void {
    if (polling) this.#idleMs = Math.min(this.#idleMs * 2, this.#cfg.idleMaxMs);
  }

  /**
   * When the transport next frees a lease or park, read at most once per `idleMinMs`: a loop
   * with more slots than busy groups goes idle after every message, and counting groups is not
   * free on a large queue.
   */
  async #nextReadyAt(): Promise<number | null> {
    const now = readClock(this.#cfg.clock);
    if (now - this.#readyRead < this.#cfg.idleMinMs && (this.#readyAt === null || this.#readyAt > now)) return this.#readyAt;
    this.#readyRead = now;
    try {
      this.#readyAt = (await this.#cfg.transport.stats()).nextReadyAt;
    } catch (error) {
      this.#report(error);
      this.#readyAt = null;
    }
    return this.#readyAt;
  }
}
