/**
 * One lease a consumer holds, from its claim to its ack or nack: the handler's abort signal and
 * the renewal that keeps the lease alive while the handler runs (an extend every half
 * visibility, on the injected scheduler, so tests move it with a manual clock).
 * @internal
 */
import { ClosedError, LeaseLostError } from '../errors.js';
import type { Lease } from '../transport/contract.js';
import type { ConsumeConfig } from './options.js';
import type { ConsumeSignal } from './types.js';

interface AbortControllerLike {
  readonly signal: ConsumeSignal;
  abort(reason?: unknown): void;
}

type AbortControllerClass = new () => AbortControllerLike;

/** The host's AbortController (every current runtime has one). */
export function abortControllerClass(): AbortControllerClass {
  const ctor = (globalThis as { AbortController?: AbortControllerClass }).AbortController;
  if (typeof ctor !== 'function') throw new TypeError('consume() needs AbortController, which this JavaScript runtime lacks');
  return ctor;
}

export class Job<E> {
  /** The latest lease: the claimed one, or the last renewal (same `(seq, attempt)`). */
  lease: Lease<E>;
  /** An extend found the lease gone: another worker owns the message now. */
  lost = false;
  /** `stop()` gave the lease back: nothing the handler does afterwards counts. */
  released = false;
  /** The handler has returned: the lease is being acked or nacked, `stop()` leaves it be. */
  settling = false;
  readonly #cfg: ConsumeConfig<E>;
  readonly #controller: AbortControllerLike;
  #timer: unknown;
  #pending: Promise<void> | undefined;
  #renewing = true;

  constructor(cfg: ConsumeConfig<E>, lease: Lease<E>, Controller: AbortControllerClass) {
    this.#cfg = cfg;
    this.lease = lease;
    this.#controller = new Controller();
    this.#schedule();
  }

  get signal(): ConsumeSignal {
    return this.#controller.signal;
  }

  /** Aborts the handler's signal (`reason` undefined: the host's AbortError). */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  /** Stops renewing and waits for an extend already under way, so `lease` and `lost` are final. */
  async stopRenewal(): Promise<void> {
    if (this.#renewing) {
      this.#renewing = false;
      this.#cfg.scheduler.clearTimeout(this.#timer);
    }
    await this.#pending;
  }

  #schedule(): void {
    this.#timer = this.#cfg.scheduler.setTimeout(() => this.#renew(), this.#cfg.visibilityMs / 2);
  }

  #renew(): void {
    if (!this.#renewing) return;
    const { transport, visibilityMs, onError } = this.#cfg;
    this.#pending = transport.extend(this.lease, visibilityMs).then(
      (renewed) => {
        this.lease = renewed;
      },
      (error: unknown) => {
        if (this.released) return;
        onError(error, { phase: 'extend', lease: this.lease });
        if (error instanceof LeaseLostError) {
          this.lost = true;
          this.abort(error);
        } else if (error instanceof ClosedError) {
          this.#renewing = false;
        }
        // Any other failure (a busy database) is retried next tick; if the lease runs out
        // meanwhile but nobody claims the message, the ack still lands.
      },
    );
    void this.#pending.then(() => {
      this.#pending = undefined;
      if (this.#renewing && !this.lost) this.#schedule();
    });
  }
}
