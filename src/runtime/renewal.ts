/**
 * Keeps a lease alive while its handler runs: every `renewEveryMs` it calls `extend`, so a
 * handler slower than `visibilityMs` is not taken over by another worker. Driven by the
 * injected scheduler, so tests move it with a manual clock instead of real time.
 * @internal
 */
import { LeaseLostError } from '../errors.js';
import type { Execution } from '../store/contract.js';
import type { Lease } from '../transport/contract.js';
import type { Config } from './options.js';

/** Starts renewing `lease` on construction; call `stop()` before committing. */
export class Renewal<X extends Execution> {
  /** The latest lease (same `(seq, attempt)` as the claimed one; a later `expiresAt`). */
  lease: Lease;
  /** Set when an extend found the lease gone: another worker owns the event now. */
  lost = false;
  readonly #cfg: Config<X>;
  #handle: unknown;
  #pending: Promise<void> | undefined;
  #stopped = false;

  constructor(cfg: Config<X>, lease: Lease) {
    this.#cfg = cfg;
    this.lease = lease;
    this.#schedule();
  }

  /** Stops renewing and waits for an extend already under way, so `lease` and `lost` are final. */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#cfg.scheduler.clearTimeout(this.#handle);
    }
    await this.#pending;
  }

  #schedule(): void {
    this.#handle = this.#cfg.scheduler.setTimeout(() => this.#renew(), this.#cfg.renewEveryMs);
  }

  #renew(): void {
    if (this.#stopped) return;
    this.#pending = this.#cfg.transport.extend(this.lease, this.#cfg.visibilityMs).then(
      (renewed) => {
        this.lease = renewed;
      },
      (error: unknown) => {
        // A failed renewal that is not a lost lease (a busy database) is retried next tick;
        // if the lease runs out meanwhile, the commit's CAS and the dedupe mark still protect us.
        if (error instanceof LeaseLostError) this.lost = true;
      },
    );
    void this.#pending.then(() => {
      this.#pending = undefined;
      if (!this.#stopped && !this.lost) this.#schedule();
    });
  }
}
