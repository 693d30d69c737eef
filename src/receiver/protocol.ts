/**
 * What a delivery request carries, read strictly: the headers `leasehold/http` sends and this
 * receiver reads. Anything that does not parse is the client's mistake (or a forgery) and gets a
 * 400 before anything is read from the store.
 *
 * - `Idempotency-Key: "<origin>/<queue>/<counter>/<revision>"`: the lease's `deliveryId` as an
 *   RFC 8941 sf-string (as the IETF httpapi Idempotency-Key draft asks); the queue
 *   percent-encoded by `encodeURIComponent`, so the id is printable ASCII and splits on `/`.
 * - `Leasehold-Low-Water: <n>`: the lease's `lowWater`, an integer from 1 to the counter.
 * - `Leasehold-Attempt: <n>`: the delivery's attempt (optional; kept for the app's logs).
 */

/** The header names of the protocol, lower case (as `Headers` reports them). */
export const HEADERS = {
  idempotencyKey: 'idempotency-key',
  lowWater: 'leasehold-low-water',
  attempt: 'leasehold-attempt',
  lost: 'leasehold-lost',
  repeat: 'leasehold-repeat',
} as const;

/** A database origin as leasehold makes it: 32 lowercase hex digits. */
const ORIGIN = /^[0-9a-f]{32}$/;
/** A canonical positive integer: no sign, no leading zero. */
const POSITIVE = /^[1-9][0-9]*$/;
/** A canonical non-negative integer. */
const NATURAL = /^(?:0|[1-9][0-9]*)$/;
/** An RFC 8941 sf-string: printable ASCII in quotes, `"` and `\` escaped by `\`. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
/** Longest Idempotency-Key read: far above any real id, far below a header that costs anything. */
export const MAX_KEY_LENGTH = 2048;

/** Who a delivery is, as its Idempotency-Key and Low-Water headers say. */
export interface Delivery {
  /** The delivery id: `<origin>/<queue>/<counter>/<revision>` (`lease.deliveryId`). */
  readonly id: string;
  /** The device database's origin (32 lowercase hex digits). */
  readonly origin: string;
  /** The queue's name, decoded. */
  readonly queue: string;
  /** The message's gap-free number in its (origin, queue), ≥ 1. */
  readonly counter: number;
  /** The content's revision, ≥ 0: higher after a `replace`/`merge` changed the queued event. */
  readonly revision: number;
  /** The lowest number still queued on the device when it claimed this delivery (≤ counter). */
  readonly lowWater: number;
  /** Which delivery of the message this is (1 for the first), or null when the client did not say. */
  readonly attempt: number | null;
}

/** A request the protocol refuses: its status (400) and why, for the answer's `{ error }`. */
export class BadDelivery extends Error {
  override name = 'BadDelivery';
  constructor(message: string) {
    super(message);
  }
}

/** A body longer than the receiver reads (413); also how `toNodeListener`'s body stream stops. */
export class BodyTooLarge extends Error {
  override name = 'BodyTooLarge';
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
  }
}

/** Whether `origin` is one leasehold makes. */
export function isOrigin(origin: unknown): origin is string {
  return typeof origin === 'string' && ORIGIN.test(origin);
}

/** `value` as a canonical integer ≥ `min` that is safe, or null. Numbers pass when they are such integers. */
function integer(value: unknown, min: 0 | 1): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= min ? value : null;
  if (typeof value !== 'string' || !(min === 1 ? POSITIVE : NATURAL).test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** The id inside an sf-string, unescaped; or null when `key` is not one. */
function sfString(key: string): string | null {
  const match = SF_STRING.exec(key);
  return match ? match[1]!.replace(/\\(["\\])/g, '$1') : null;
}

/**
 * Reads a delivery from its three header values (strings as sent; the low-water mark and the
 * attempt may also be numbers, for apps that parsed them).
 * @throws BadDelivery naming what is wrong: a missing or malformed key, an origin that is not
 *   32 lowercase hex digits, a queue that is empty or not `encodeURIComponent`'s own encoding,
 *   a counter or revision that is not a canonical safe integer (counter ≥ 1, revision ≥ 0), a
 *   low-water mark missing, not an integer ≥ 1 or above the counter, a bad attempt.
 */
export function parseDelivery(idempotencyKey: unknown, lowWater: unknown, attempt: unknown): Delivery {
  if (idempotencyKey === undefined || idempotencyKey === null || idempotencyKey === '') throw new BadDelivery('the Idempotency-Key header is missing: send the lease\'s deliveryId as "<origin>/<queue>/<counter>/<revision>"');
  if (typeof idempotencyKey !== 'string') throw new BadDelivery('the Idempotency-Key must be a string');
  if (idempotencyKey.length > MAX_KEY_LENGTH) throw new BadDelivery(`the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters`);
  const id = sfString(idempotencyKey.trim());
  if (id === null) throw new BadDelivery('the Idempotency-Key must be a quoted string (RFC 8941), e.g. "<origin>/<queue>/<counter>/<revision>"');
  const parts = id.split('/');
  if (parts.length !== 4) throw new BadDelivery(`the Idempotency-Key must have 4 parts separated by "/" (origin, queue, counter, revision), got ${parts.length}`);
  const [origin, encodedQueue, counterText, revisionText] = parts as [string, string, string, string];
  if (!ORIGIN.test(origin)) throw new BadDelivery('the Idempotency-Key\'s origin must be 32 lowercase hex digits');
  let queue: string;
  try {
    queue = decodeURIComponent(encodedQueue);
  } catch {
    throw new BadDelivery('the Idempotency-Key\'s queue is not valid percent-encoding');
  }
  if (queue === '') throw new BadDelivery('the Idempotency-Key\'s queue is empty');
  // Only the encoding the client makes: one queue has one id, so no two ids name one receipt.
  if (encodeURIComponent(queue) !== encodedQueue) throw new BadDelivery('the Idempotency-Key\'s queue is not encoded as encodeURIComponent encodes it');
  const counter = integer(counterText, 1);
  if (counter === null) throw new BadDelivery('the Idempotency-Key\'s counter must be an integer ≥ 1 without leading zeros');
  const revision = integer(revisionText, 0);
  if (revision === null) throw new BadDelivery('the Idempotency-Key\'s revision must be an integer ≥ 0 without leading zeros');
  if (lowWater === undefined || lowWater === null || lowWater === '') throw new BadDelivery('the Leasehold-Low-Water header is missing: send the lease\'s lowWater');
  const mark = integer(lowWater, 1);
  if (mark === null) throw new BadDelivery('Leasehold-Low-Water must be an integer ≥ 1 without leading zeros');
  if (mark > counter) throw new BadDelivery(`Leasehold-Low-Water (${mark}) is above the delivery's counter (${counter}): a lease's lowWater is never above its counter`);
  let tries: number | null = null;
  if (attempt !== undefined && attempt !== null && attempt !== '') {
    tries = integer(attempt, 1);
    if (tries === null) throw new BadDelivery('Leasehold-Attempt must be an integer ≥ 1 without leading zeros');
  }
  return { id, origin, queue, counter, revision, lowWater: mark, attempt: tries };
}
