/**
 * One lease a consumer holds, from its claim to its ack or nack: the handler's abort signal and
 * the renewal that keeps the lease alive while the handler runs. The consumer's renewal tick
 * calls `renew()`; the signal's AbortController is made only if the handler reads `signal`
 * (making one per message was the largest cost of a consumer whose handlers ignore it).
 * @internal
 */
import { ClosedError, LeaseLostError } from '../errors.js';
import type { Lease } from '../transport/contract.js';
import type { ConsumeConfig } from './options.js';
import type { ConsumeSignal, HandlerContext } from './types.js';

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
  /** The handler has returned: the lease is being acked or nacked, and is renewed no more. */
  settling = false;
  /** What the handler receives; `signal` is made on first read. */
  readonly context: HandlerContext;
  readonly #cfg: ConsumeConfig<E>;
  readonly #Controller: AbortControllerClass;
  #controller: AbortControllerLike | undefined;
  #abort: { reason: unknown } | undefined;
  #pending: Promise<void> | undefined;

  constructor(cfg: ConsumeConfig<E>, lease: Lease<E>, Controller: AbortControllerClass) {
    this.#cfg = cfg;
    this.lease = lease;
    this.#Controller = Controller;
    const job = this;
    this.context = {
      get signal() {
        return job.#signal();
      },
    };
  }

  #signal(): ConsumeSignal {
    if (!this.#controller) {
      this.#controller = new this.#Controller();
      if (this.#abort) this.#controller.abort(this.#abort.reason);
    }
    return this.#controller.signal;
  }

  /** Aborts the handler's signal (`reason` undefined: the host's AbortError). */
  abort(reason?: unknown): void {
    if (this.#abort) return;
    this.#abort = { reason };
    this.#controller?.abort(reason);
  }

  /** Whether the renewal tick should extend the lease now (at `now`, by the transport's clock). */
  due(now: number): boolean {
    return !this.settling && !this.released && !this.lost && !this.#pending && this.lease.expiresAt - now <= this.#cfg.visibilityMs / 2;
  }

  /** Waits for an extend already under way, so `lease` and `lost` are final. */
  async renewed(): Promise<void> {
    await this.#pending;
  }

  renew(): void {
    const { transport, visibilityMs, onError } = this.#cfg;
    this.#pending = transport.extend(this.lease, visibilityMs).then(
      (renewed) => {
        this.lease = renewed;
      },
      (error: unknown) => {
        if (this.released || this.settling) return;
        onError(error, { phase: 'extend', lease: this.lease });
        if (error instanceof LeaseLostError) {
          this.lost = true;
          this.abort(error);
        } else if (error instanceof ClosedError) {
          this.lost = true; // nothing can be acked any more: treat it as gone
        }
        // Any other failure (a busy database) is retried next tick; if the lease runs out
        // meanwhile but nobody claims the message, the ack still lands.
      },
    );
    void this.#pending.then(() => (this.#pending = undefined));
  }
}
