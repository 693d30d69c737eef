/**
 * `httpDelivery()`: a `consume()` handler that POSTs each event to a server and turns the answer
 * into what the consumer does next — ack, retry later without spending an attempt, or a dead
 * letter — naming the delivery by its content so a server (`leasehold/receiver`) applies it once.
 */
import { RejectError, RetryLaterError } from '../consume/outcomes.js';
import type { HandlerContext } from '../consume/types.js';
import type { Lease } from '../transport/contract.js';
import { checkDuration, checkOptions, MAX_REASON } from '../validate.js';

/** What `classify` may decide: ack (`'ack'`), an error to throw (a `RetryLaterError`, a `RejectError`, any error), or undefined for the default rule. */
export type Classification = 'ack' | Error | undefined;

/** Options of {@link httpDelivery}. */
export interface HttpDeliveryOptions<E> {
  /** Where to send: a URL, or a function of the event and lease. */
  url: string | URL | ((event: E, lease: Lease<E>) => string | URL);
  /** The HTTP method. Default `'POST'`. */
  method?: string;
  /** Extra headers (authorization…), or a function of the event and lease that returns them. */
  headers?: Record<string, string> | ((event: E, lease: Lease<E>) => Record<string, string>);
  /** The request body. Default `JSON.stringify(event)` sent as `application/json`. */
  body?: (event: E, lease: Lease<E>) => string;
  /** How long to wait for the answer (headers and body), in ms (> 0). Default 30 000: then retried later, as unreachable. */
  timeoutMs?: number;
  /**
   * The first wait when the answer names none (no answer, a status without `Retry-After`), in ms
   * (≥ 0). Default 5 000. While such failures go on, each wait is about as long as the trouble has
   * lasted (so it doubles), within ±20 % so that devices spread out, up to `maxRetryMs`; any
   * 2xx or refusal ends the run.
   */
  retryMs?: number;
  /** The longest wait of that back-off, in ms (≥ `retryMs`). Default 60 000, or `retryMs` when larger. A `Retry-After` is kept as the server gave it. */
  maxRetryMs?: number;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
  /** Reads `Retry-After` dates, and times the back-off, against this clock (ms). Default `Date.now`. */
  clock?: () => number;
  /**
   * Decides first: given the response (or, when there was none, the network error) and the
   * lease, return `'ack'`, an error to throw, or undefined for the default rule.
   */
  classify?: (outcome: Response | Error, lease: Lease<E>) => Classification | Promise<Classification>;
  /** Called with a 2xx answer before the ack (e.g. to read the server's answer). A throw fails the delivery as a handler throw does. */
  onDelivered?: (response: Response, event: E, lease: Lease<E>) => void | Promise<void>;
}

/** Statuses that refuse the message for good: the same request will never succeed. */
const REFUSED = new Set([400, 409, 410, 413, 422]);
/** Statuses that say "later", with a `Retry-After` the server may give. */
const LATER = new Set([429, 503]);

/**
 * A `Retry-After` value in ms from `now`: delta-seconds or an HTTP-date, never below 0; null
 * when there is none or it does not parse.
 */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every HTTP-date form starts with the day's name; Date.parse alone takes "-3" for a year.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** The reason a refusal's dead letter keeps: the status and what the server said, cut to {@link MAX_REASON}. */
async function refusalReason(response: Response): Promise<string> {
  const head = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  let said = '';
  try {
    said = (await response.text()).trim();
    const parsed = JSON.parse(said) as unknown;
    const error = (parsed as { error?: unknown } | null)?.error;
    if (typeof error === 'string' && error.length > 0) said = error;
  } catch {
    // not JSON (or no body): the text as it is
  }
  const reason = said ? `${head}: ${said}` : head;
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}

/** The error text of a failed fetch: undici's "fetch failed" hides the cause (ECONNREFUSED…). */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown } | null)?.cause;
  const inner = cause instanceof Error ? (((cause as { code?: string }).code ?? '') || cause.message) : '';
  return inner && !message.includes(inner) ? `${message} (${inner})` : message;
}

/**
 * Makes a `consume()` handler that delivers each event over HTTP:
 *
 * ```ts
 * consume(outbox, httpDelivery({ url: '/api/mutations', headers: { authorization } }));
 * ```
 *
 * Each request carries `Idempotency-Key: "<lease.deliveryId>"` (an RFC 8941 string: the same
 * on every delivery of the same content, a new one once a `replace`/`merge` changed it),
 * `Leasehold-Low-Water: <lease.lowWater>` and `Leasehold-Attempt: <lease.attempt>` — what
 * `leasehold/receiver` reads.
 *
 * The answer, unless `classify` decides: 2xx acks (after `onDelivered`); 400, 409, 410, 413, 422
 * throw a `RejectError` (a dead letter at once) whose reason is `"<status> <text>: <the body's
 * error or text>"`; 429 and 503 throw a `RetryLaterError` after `Retry-After` (else the
 * back-off: `retryMs`, then about as long as the trouble has lasted, up to `maxRetryMs`); every
 * other status (401, 403, 404, 408, 3xx, 5xx) a `RetryLaterError` after the back-off — a wrong
 * token or route must not dead-letter every message; no answer at all (network down, DNS, the
 * timeout) the same, with `offline: true`. None of these spends an attempt but the
 * refusals. When the consumer's signal aborts (stop, a lost lease) the request is cancelled and
 * the abort rethrown.
 *
 * @throws TypeError / RangeError now for bad options (a misspelt one names the one meant); the
 *   handler throws a TypeError for a lease without `deliveryId` or `lowWater` (one written by
 *   hand, not issued by a transport).
 */
export function httpDelivery<E>(options: HttpDeliveryOptions<E>): (event: E, lease: Lease<E>, context?: Partial<HandlerContext>) => Promise<void> {
  checkOptions('options', options, ['url', 'method', 'headers', 'body', 'timeoutMs', 'retryMs', 'maxRetryMs', 'fetch', 'clock', 'classify', 'onDelivered']);
  const { url, headers, body, classify, onDelivered } = options;
  if (typeof url !== 'string' && !(url instanceof URL) && typeof url !== 'function') throw new TypeError('options.url must be a string, a URL or a function (event, lease) => string | URL');
  if (typeof url === 'string' && url.length === 0) throw new RangeError('options.url must not be empty');
  const method = options.method ?? 'POST';
  if (typeof method !== 'string' || !/^[A-Za-z]+$/.test(method)) throw new TypeError(`options.method must be an HTTP method name, got ${String(method)}`);
  if (headers !== undefined && typeof headers !== 'function' && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) throw new TypeError('options.headers must be an object of header values or a function that returns one');
  for (const [name, value] of [['body', body], ['classify', classify], ['onDelivered', onDelivered], ['clock', options.clock]] as const) {
    if (value !== undefined && typeof value !== 'function') throw new TypeError(`options.${name} must be a function`);
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  checkDuration('options.timeoutMs', timeoutMs, true);
  const retryMs = options.retryMs ?? 5_000;
  checkDuration('options.retryMs', retryMs, false);
  const maxRetryMs = options.maxRetryMs ?? Math.max(60_000, retryMs);
  checkDuration('options.maxRetryMs', maxRetryMs, false);
  if (maxRetryMs < retryMs) throw new RangeError(`options.maxRetryMs (${maxRetryMs}) must be at least options.retryMs (${retryMs})`);
  const fetcher = options.fetch ?? globalThis.fetch;
  if (typeof fetcher !== 'function') throw new TypeError('options.fetch must be a function (this runtime has no global fetch)');
  const clock = options.clock ?? Date.now;
  // When the current run of answers that name no wait began (null: the server last answered 2xx
  // or refused). Shared by every delivery of this handler: an outage is the endpoint's, and
  // concurrent deliveries failing together must not each push the back-off a step.
  let troubleSince: number | null = null;
  const backOff = (): number => {
    const now = clock();
    troubleSince ??= now;
    const lasted = now - troubleSince;
    if (lasted < retryMs) return retryMs;
    return Math.min(maxRetryMs, Math.round(Math.min(maxRetryMs, lasted) * (0.8 + 0.4 * Math.random())));
  };

  return async (event, lease, context) => {
    const signal = context?.signal as AbortSignal | undefined;
    if (typeof lease?.deliveryId !== 'string' || typeof lease.lowWater !== 'number') {
      throw new TypeError('httpDelivery needs a lease issued by a transport (with deliveryId and lowWater), not one written by hand');
    }
    const target = typeof url === 'function' ? url(event, lease) : url;
    const sent = new Headers(typeof headers === 'function' ? headers(event, lease) : headers);
    if (body === undefined && !sent.has('content-type')) sent.set('content-type', 'application/json');
    sent.set('idempotency-key', `"${lease.deliveryId.replace(/["\\]/g, '\\$&')}"`);
    sent.set('leasehold-low-water', String(lease.lowWater));
    sent.set('leasehold-attempt', String(lease.attempt));
    const payload = body === undefined ? JSON.stringify(event) : body(event, lease);

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const stop = () => controller.abort(signal?.reason);
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    /** What a failure means: the consumer's own abort rethrown; a timeout or network error: unreachable. */
    const unreachable = (error: unknown): unknown => {
      if (signal?.aborted) return signal.reason ?? error;
      const wait = backOff();
      return new RetryLaterError({ afterMs: wait, offline: true }, `unreachable: ${timedOut ? `no answer within ${timeoutMs} ms` : describe(error)}`);
    };
    try {
      let response: Response;
      try {
        response = await fetcher(target, { method, headers: sent, body: method === 'GET' || method === 'HEAD' ? null : payload, signal: controller.signal });
      } catch (error) {
        const failure = unreachable(error);
        if (classify && failure instanceof RetryLaterError) {
          const decided = await classify(error instanceof Error ? error : new Error(String(error)), lease);
          if (decided === 'ack') return;
          if (decided !== undefined) throw decided;
        }
        throw failure;
      }
      try {
        const decided = classify ? await classify(response, lease) : undefined;
        if (decided instanceof Error) throw decided;
        const status = response.status;
        if (decided === 'ack' || (decided === undefined && status >= 200 && status < 300)) {
          troubleSince = null;
          if (onDelivered) await onDelivered(response, event, lease);
          else await response.body?.cancel();
          return;
        }
        if (REFUSED.has(status)) {
          troubleSince = null;
          throw new RejectError(await refusalReason(response));
        }
        await response.body?.cancel();
        const statusText = `${status}${response.statusText ? ` ${response.statusText}` : ''}`;
        if (LATER.has(status)) {
          const named = retryAfterMs(response.headers.get('retry-after'), clock());
          const after = named ?? backOff();
          throw new RetryLaterError({ afterMs: after }, `${statusText}: retry in ${after} ms`);
        }
        const wait = backOff();
        throw new RetryLaterError({ afterMs: wait }, `${statusText}: retry in ${wait} ms`);
      } catch (error) {
        // A body read cut off by the timeout or the consumer's abort.
        if (controller.signal.aborted && !(error instanceof RetryLaterError) && !(error instanceof RejectError)) throw unreachable(error);
        throw error;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  };
}

/** A receiver's gaps report of one origin (see `leasehold/receiver`'s `GapsReport`). */
export interface LostOriginReport {
  origin: string;
  lost: boolean;
  queues: { queue: string; received: number; highest: number; lowWater: number; removed: [number, number][]; stillToCome: [number, number][]; lost: [number, number][] }[];
}

/** Options of {@link reportLostOrigin}. */
export interface ReportLostOriginOptions {
  /** The receiver's URL (the one deliveries go to). */
  url: string | URL;
  /** The lost database's origin (`db.lostOrigin`). */
  origin: string;
  /** Extra headers (authorization…). */
  headers?: Record<string, string>;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Tells a receiver that the database `origin` was lost on this device (`db.lostOrigin` in the
 * browser): the numbers it was still waiting for from it will never come.
 * @returns the receiver's gaps report of that origin (its `lost` ranges), or null when the
 *   receiver never received anything from it (nothing it knew of was lost).
 * @throws TypeError / RangeError for bad options; Error (with the status) when the receiver
 *   refused or failed, or could not be reached: try again later.
 */
export async function reportLostOrigin(options: ReportLostOriginOptions): Promise<LostOriginReport | null> {
  checkOptions('options', options, ['url', 'origin', 'headers', 'fetch']);
  const { url, origin, headers } = options;
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError('options.url must be a string or a URL');
  if (typeof origin !== 'string' || !/^[0-9a-f]{32}$/.test(origin)) throw new RangeError('options.origin must be 32 lowercase hex digits (db.lostOrigin)');
  const fetcher = options.fetch ?? globalThis.fetch;
  if (typeof fetcher !== 'function') throw new TypeError('options.fetch must be a function');
  const sent = new Headers(headers);
  sent.set('leasehold-lost', origin);
  const response = await fetcher(url, { method: 'POST', headers: sent });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok) throw new Error(`the receiver answered the lost report with ${response.status}: ${(await response.text()).slice(0, MAX_REASON)}`);
  return (await response.json()) as LostOriginReport;
}
