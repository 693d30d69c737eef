/**
 * One lease a consumer holds, from its claim to its ack or nack: the handler's abort signal,
 * beside what the shared lease keeper tracks (the latest lease, whether it was lost). The
 * signal's AbortController is made only if the handler reads `signal` (making one per message
 * was the largest cost of a consumer whose handlers ignore it).
 * @internal
 */
import type { Lease } from '../transport/contract.js';
import { Kept } from '../worker/keeper.js';
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

export class Job<E> extends Kept<E> {
  /** `stop()` gave the lease back: nothing the handler does afterwards counts. */
  released = false;
  /** Its ack, nack, release or reject failed this many times on a fault that may pass. */
  settleFailures = 0;
  /** The consumer's clock reading after which a failed settle is not tried again (set at the first failure). */
  settleUntil: number | null = null;
  /** What the handler receives; `signal` is made on first read. */
  readonly context: HandlerContext;
  readonly #Controller: AbortControllerClass;
  #controller: AbortControllerLike | undefined;
  #abort: { reason: unknown } | undefined;

  constructor(lease: Lease<E>, Controller: AbortControllerClass) {
    super(lease);
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
}
