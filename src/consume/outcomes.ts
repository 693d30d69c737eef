/**
 * What a `consume()` handler can throw to say how its message should leave, other than by
 * failing: later (an outage), or never (a refusal).
 */
import { checkDuration } from '../validate.js';

/**
 * Thrown by a handler: the message could not be handled **now** — the network is down, the
 * server answered 429 or 503 — and nothing is wrong with it. The consumer gives it back with
 * `release` (no attempt spent, so `maxAttempts` never turns an outage into dead letters) for
 * `afterMs`, and claims nothing at all for that long: an outage concerns every message, not one.
 * Not reported to `onError`; counted in `Consumer.retried`.
 */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError';
  /** How long the message waits, and the consumer claims nothing (ms, finite, ≥ 0). */
  readonly afterMs: number;
  /**
   * True when the server could not be reached at all (no answer: the network is down, DNS
   * failed, the request timed out), false when it answered "later" (429, 503). What a status
   * shows as offline rather than retrying.
   */
  readonly offline: boolean;

  /**
   * @param options `afterMs`: e.g. from a `Retry-After` header (seconds × 1000); `offline`
   *   (default false): no answer came at all.
   * @param message why, as a status would show it (default "retry in N ms").
   * @throws TypeError / RangeError for a bad `afterMs` or `offline`.
   */
  constructor(options: { afterMs: number; offline?: boolean }, message = `retry in ${String(options?.afterMs)} ms`) {
    super(message);
    if (typeof options !== 'object' || options === null) throw new TypeError('RetryLaterError needs { afterMs }');
    checkDuration('afterMs', options.afterMs, false);
    if (options.offline !== undefined && typeof options.offline !== 'boolean') throw new TypeError(`offline must be a boolean, got ${typeof options.offline}`);
    this.afterMs = options.afterMs;
    this.offline = options.offline ?? false;
  }
}

/**
 * Thrown by a handler: the message is refused for good (a 4xx answer). The consumer moves it to
 * the dead letters at once with `reject(lease, message)`, whatever attempts remain; with the
 * queue's `onDeadLetter: 'hold'` its group then waits for a redrive or discard. Not reported to
 * `onError`; counted in `Consumer.rejected`.
 */
export class RejectError extends Error {
  override name = 'RejectError';

  /** @param reason kept with the dead letter (a non-empty string). */
  constructor(reason: string) {
    super(reason);
  }
}
