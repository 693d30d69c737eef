/**
 * The server half of an outbox: each delivery applied once, in the app's own transaction, with
 * its answer kept for every repeat; per origin, what was received, what was removed on purpose,
 * what is still to come and what was lost (docs/receiver.md, docs/offline-first.md).
 */
import { LeaseholdError, StorageError } from '../errors.js';
import { checkInteger, checkOptions, checkTime, readClock, toJson } from '../validate.js';
import { BadDelivery, BodyTooLarge, HEADERS, isOrigin, parseDelivery, type Delivery } from './protocol.js';
import { splitAt, type ReceiptStore, type Repeat, type StoredAnswer } from './store.js';

/** What `apply` gets besides the event. */
export interface ApplyContext<Tx> {
  /** Who the delivery is: its id, origin, queue, counter, revision, low-water mark and attempt. */
  readonly delivery: Delivery;
  /** The store's transaction handle: write through it, and the writes commit with the receipt. */
  readonly tx: Tx;
}

/** What `apply` may return: nothing (answered 200 `{ "ok": true }`), or the answer to keep and send. */
export type ApplyResult = void | {
  /** A 2xx status (default 200). */
  status?: number;
  /** A JSON value, sent now and to every repeat of this delivery (default `{ "ok": true }`). */
  body?: unknown;
};

/**
 * Applies one delivery's event, inside the transaction of its receipt. On a synchronous store
 * (SQLite) it must be synchronous: it runs inside `db.transaction()`, which never awaits.
 * Throw a {@link Refusal} to refuse the event for good; throw anything else to fail this try
 * (answered 500, nothing recorded, the client tries again later).
 */
export type ApplyFunction<E, Tx, Sync extends boolean> = (event: E, context: ApplyContext<Tx>) => Sync extends true ? ApplyResult : ApplyResult | Promise<ApplyResult>;

/** Options of {@link createReceiver}. */
export interface ReceiverOptions<E, Tx, Sync extends boolean> {
  /** Where receipts are kept, and in whose transactions apply runs: `sqliteReceipts(db)` or `postgresReceipts(db)`. */
  store: ReceiptStore<Tx, Sync>;
  /** Applies an event (see {@link ApplyFunction}). */
  apply: ApplyFunction<E, Tx, Sync>;
  /** The largest request body read, in bytes (integer ≥ 1); a larger one is answered 413 unread. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Turns the body's text into the event (default `JSON.parse`); a throw is answered 400 with its message. */
  parse?: (text: string) => E;
  /** The time a receipt is stamped with, in ms (default `Date.now`); `prune({ before })` compares with it. */
  clock?: () => number;
  /** Told of every failure answered 500 or 503 (an apply that threw, the store failing). Default `console.error`. */
  onError?: (error: unknown, delivery: Delivery | null) => void;
}

/** A delivery as an app with its own router hands it over (header values as received). */
export interface ReceiveInput {
  /** The `Idempotency-Key` header's value. */
  idempotencyKey: string | null | undefined;
  /** The `Leasehold-Low-Water` header's value. */
  lowWater: string | number | null | undefined;
  /** The `Leasehold-Attempt` header's value, if any. */
  attempt?: string | number | null;
  /** The raw body, parsed by the receiver's `parse`. Give this or `event`. */
  body?: string;
  /** The event, already parsed by the app's router. Give this or `body`. */
  event?: unknown;
}

/** How a delivery was answered. */
export interface ReceiveAnswer {
  /** The HTTP status: apply's (2xx), a refusal's, or a 4xx for a malformed delivery. */
  status: number;
  /** The JSON body: apply's, `{ error }` for a refusal or bad input, `{ duplicate: true }` for a repeat whose answer was pruned. */
  body: unknown;
  /** false: this delivery ran apply (or was refused now); `'same'`: a repeat of applied content; `'stale'`: older content than the receipt's, not applied. */
  repeat: Repeat;
}

/** One queue of an origin: the numbers received and those never received, sorted by why. */
export interface QueueGaps {
  queue: string;
  /** How many numbers were received (applied or refused). */
  received: number;
  /** The highest number received. */
  highest: number;
  /** The highest `lowWater` a delivery carried: every number below it left the device's queue on purpose. */
  lowWater: number;
  /** Numbers below the mark never received: cancelled, discarded, refused and not redriven, acked without sending. */
  removed: [number, number][];
  /** Numbers from the mark up to `highest` not received yet: still in the device's queue (empty once the origin was reported lost). */
  stillToCome: [number, number][];
  /** The numbers `stillToCome` would hold, once the origin was reported lost: gone with the device's database. */
  lost: [number, number][];
}

/** What the receiver knows of one origin. */
export interface GapsReport {
  origin: string;
  /** Whether the device reported this database lost. */
  lost: boolean;
  queues: QueueGaps[];
}

/** The receiver: a fetch-style handler and the same operations as plain functions. */
export interface Receiver {
  /**
   * Answers one HTTP request (Workers, Bun, Deno, Node 20 through `toNodeListener`): `POST` with
   * `Idempotency-Key` is a delivery; `POST` with `Leasehold-Lost: <origin>` a lost report
   * (answered with the gaps report); `GET ?origin=<origin>` the gaps report. Never rejects:
   * bad input is a 4xx, an apply that threw a 500, a store failure a 503 (both told to `onError`).
   */
  handle(request: Request): Promise<Response>;
  /**
   * Runs one delivery (see {@link handle}) for an app with its own router.
   * @returns the answer to send: a malformed delivery is a 400 (413 for a body too large) and
   *   changes nothing.
   * @throws what apply threw (other than a Refusal) or the store's StorageError: rolled back,
   *   nothing recorded.
   */
  receive(input: ReceiveInput): Promise<ReceiveAnswer>;
  /**
   * What was received from `origin`, per queue (see {@link QueueGaps}).
   * @throws TypeError / RangeError when `origin` is not 32 lowercase hex digits;
   *   LeaseholdError `NOT_FOUND` for an origin never received from.
   */
  gaps(origin: string): Promise<GapsReport>;
  /**
   * Records that the device lost the database `origin` (`db.lostOrigin` in the browser): its
   * numbers still to come are lost. Idempotent.
   * @returns the gaps report after it.
   * @throws as {@link gaps}; an unknown origin changes nothing.
   */
  reportLost(origin: string): Promise<GapsReport>;
  /**
   * Drops the stored answer bodies of applied receipts below their queue's low-water mark
   * (written before `before`, default: all): the rows stay, so dedupe stays exact, and a repeat
   * of a pruned answer is answered 200 `{ "duplicate": true }`.
   * @returns how many answers were dropped.
   * @throws TypeError / RangeError for a bad `before`.
   */
  prune(options?: { before?: number }): Promise<number>;
}

const MiB = 1024 * 1024;
const DEFAULT_BODY = '{"ok":true}';
const PRUNED_BODY = '{"duplicate":true}';

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function json(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });
}

const problem = (status: number, message: string, headers?: Record<string, string>) => json(status, JSON.stringify({ error: message }), headers);

/**
 * Reads a request body, never more than `max` bytes: a declared length above it, or a
 * stream that runs past it, stops the read (413) instead of buffering it.
 */
async function readBody(request: Request, max: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) throw new BodyTooLarge(max);
  if (request.body === null) return new Uint8Array(0);
  // Firefox's Request has no body stream (`body` is undefined): read it whole, then measure. An
  // error here would be answered 400, which the client takes for a refusal and dead-letters.
  if (request.body === undefined) {
    const whole = new Uint8Array(await request.arrayBuffer());
    if (whole.byteLength > max) throw new BodyTooLarge(max);
    return whole;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.cancel().catch(() => {});
      throw new BodyTooLarge(max);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Makes a receiver on `store` that runs `apply` once per delivered content.
 *
 * What it guarantees, per (origin, queue, counter) — one receipt each:
 * - a new number, or a higher revision of one (a merged edit), runs apply in the receipt's own
 *   transaction; its answer is kept with the receipt;
 * - the same revision as an applied receipt is answered with the kept answer
 *   (`Leasehold-Repeat: 1`) without running apply; a lower revision (a late request of a lost
 *   lease) too (`Leasehold-Repeat: stale`): it would overwrite newer content;
 * - a {@link Refusal} rolls apply back and records the number as refused (so gaps() counts it
 *   received); a later delivery of it (a redrive) runs apply again;
 * - any other throw rolls everything back: nothing is recorded, the client tries again;
 * - concurrent deliveries of one number run one at a time, so apply runs once.
 *
 * @throws TypeError / RangeError for bad options (a misspelt one names the one meant).
 */
export function createReceiver<E, Tx, Sync extends boolean>(options: ReceiverOptions<E, Tx, Sync>): Receiver {
  checkOptions('options', options, ['store', 'apply', 'maxBodyBytes', 'parse', 'clock', 'onError']);
  const { store, apply } = options;
  if (typeof store !== 'object' || store === null || typeof store.deliver !== 'function') throw new TypeError('options.store must be a receipt store: sqliteReceipts(db) or postgresReceipts(db)');
  if (typeof apply !== 'function') throw new TypeError('options.apply must be a function (event, { delivery, tx }) => void | { status?, body? }');
  const maxBodyBytes = options.maxBodyBytes ?? MiB;
  checkInteger('options.maxBodyBytes', maxBodyBytes, 1, 2 ** 31 - 1);
  for (const name of ['parse', 'clock', 'onError'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`options.${name} must be a function`);
  }
  const parse = options.parse ?? ((text: string) => JSON.parse(text) as E);
  const clock = options.clock ?? Date.now;
  const onError = options.onError ?? ((error: unknown) => console.error('leasehold receiver:', error));

  /** apply's result as the answer to keep. @throws TypeError for a status that is not 2xx, or a body JSON cannot carry. */
  const answerOf = (result: ApplyResult): StoredAnswer => {
    if (result === undefined || result === null) return { status: 200, body: DEFAULT_BODY };
    if (typeof result !== 'object') throw new TypeError(`apply must return nothing or { status?, body? }, got ${typeof result}`);
    const status = result.status ?? 200;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 299) throw new RangeError(`apply's status must be a 2xx integer (throw a Refusal to refuse), got ${String(status)}`);
    return { status, body: result.body === undefined ? DEFAULT_BODY : toJson("apply's body", result.body) };
  };

  const checkOrigin = (origin: unknown): void => {
    if (typeof origin !== 'string') throw new TypeError(`origin must be a string, got ${typeof origin}`);
    if (!isOrigin(origin)) throw new RangeError('origin must be 32 lowercase hex digits (a lease\'s origin, db.lostOrigin)');
  };

  async function gaps(origin: string): Promise<GapsReport> {
    checkOrigin(origin);
    const counts = await store.counts(origin);
    if (counts === null) throw new LeaseholdError('NOT_FOUND', `the receiver never received a delivery from origin ${origin}`);
    return {
      origin,
      lost: counts.lost,
      queues: counts.queues.map((q) => {
        const { below, from } = splitAt(q.gaps, q.lowWater);
        return { queue: q.queue, received: q.received, highest: q.highest, lowWater: q.lowWater, removed: below, stillToCome: counts.lost ? [] : from, lost: counts.lost ? from : [] };
      }),
    };
  }

  async function reportLost(origin: string): Promise<GapsReport> {
    checkOrigin(origin);
    if (!(await store.markLost(origin, readClock(clock)))) throw new LeaseholdError('NOT_FOUND', `the receiver never received a delivery from origin ${origin}: nothing it knows of was lost`);
    return gaps(origin);
  }

  /** Runs a checked delivery; what apply or the store threw propagates. */
  async function deliver(delivery: Delivery, event: E): Promise<{ status: number; text: string; repeat: Repeat }> {
    const run = (tx: Tx): StoredAnswer | Promise<StoredAnswer> => {
      const result = apply(event, { delivery, tx });
      if (!isThenable(result)) return answerOf(result as ApplyResult);
      if (store.synchronous) {
        Promise.resolve(result).catch(() => {}); // its failure, if any, is this TypeError's business
        throw new TypeError(`apply returned a promise, but ${store.label} runs it inside a synchronous transaction: make apply synchronous (nothing was recorded)`);
      }
      return Promise.resolve(result).then((r) => answerOf(r as ApplyResult));
    };
    const receipt = await store.deliver(delivery, readClock(clock), run);
    const pruned = receipt.body === null;
    return { status: pruned ? 200 : receipt.status, text: pruned ? PRUNED_BODY : receipt.body!, repeat: receipt.repeat };
  }

  const parseEvent = (text: string): E => {
    try {
      return parse(text);
    } catch (error) {
      throw new BadDelivery(`the body could not be parsed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  async function receive(input: ReceiveInput): Promise<ReceiveAnswer> {
    checkOptions('input', input, ['idempotencyKey', 'lowWater', 'attempt', 'body', 'event']);
    const hasBody = input.body !== undefined;
    if (hasBody === ('event' in input && input.event !== undefined)) throw new TypeError('input needs exactly one of body (the raw text) and event (already parsed)');
    if (hasBody && typeof input.body !== 'string') throw new TypeError(`input.body must be a string, got ${typeof input.body}`);
    let delivery: Delivery;
    let event: E;
    try {
      delivery = parseDelivery(input.idempotencyKey, input.lowWater, input.attempt);
      if (hasBody && new TextEncoder().encode(input.body).byteLength > maxBodyBytes) return { status: 413, body: { error: new BodyTooLarge(maxBodyBytes).message }, repeat: false };
      event = hasBody ? parseEvent(input.body!) : (input.event as E);
    } catch (error) {
      if (error instanceof BadDelivery) return { status: 400, body: { error: error.message }, repeat: false };
      throw error;
    }
    const answer = await deliver(delivery, event);
    return { status: answer.status, body: JSON.parse(answer.text) as unknown, repeat: answer.repeat };
  }

  /** The answer to a failure: 503 for the store (try again later), 500 for the rest. */
  const failed = (error: unknown, delivery: Delivery | null): Response => {
    try {
      onError(error, delivery);
    } catch {
      // a logger that throws must not turn the answer into a crash
    }
    if (error instanceof StorageError) return problem(503, 'the receiver\'s store is unavailable; try again later', { 'retry-after': '5' });
    return problem(500, 'the receiver failed; nothing was recorded');
  };

  /** A report, or its 400 / 404. */
  const report = async (origin: string | null, run: (origin: string) => Promise<GapsReport>): Promise<Response> => {
    if (!isOrigin(origin)) return problem(400, 'name an origin: 32 lowercase hex digits');
    try {
      return json(200, JSON.stringify(await run(origin)));
    } catch (error) {
      if (error instanceof LeaseholdError && error.code === 'NOT_FOUND') return problem(404, error.message);
      return failed(error, null);
    }
  };

  async function handle(request: Request): Promise<Response> {
    if (request.method === 'GET') return report(new URL(request.url).searchParams.get('origin'), gaps);
    if (request.method !== 'POST') return problem(405, 'POST a delivery or a lost report; GET ?origin=<origin> for a gaps report', { allow: 'GET, POST' });
    const lost = request.headers.get(HEADERS.lost);
    if (lost !== null) return report(lost.trim(), reportLost);
    let delivery: Delivery;
    let event: E;
    try {
      delivery = parseDelivery(request.headers.get(HEADERS.idempotencyKey), request.headers.get(HEADERS.lowWater), request.headers.get(HEADERS.attempt));
      let bytes: Uint8Array;
      try {
        bytes = await readBody(request, maxBodyBytes);
      } catch (error) {
        if (error instanceof BodyTooLarge) return problem(413, error.message);
        throw new BadDelivery('the body could not be read');
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new BadDelivery('the body is not UTF-8');
      }
      event = parseEvent(text);
    } catch (error) {
      if (error instanceof BadDelivery) return problem(400, error.message);
      return failed(error, null);
    }
    try {
      const answer = await deliver(delivery, event);
      const repeat: Record<string, string> = answer.repeat === false ? {} : { [HEADERS.repeat]: answer.repeat === 'same' ? '1' : 'stale' };
      return json(answer.status, answer.text, repeat);
    } catch (error) {
      return failed(error, delivery);
    }
  }

  async function prune(options?: { before?: number }): Promise<number> {
    checkOptions('options', options, ['before'], true);
    const before = options?.before;
    if (before !== undefined) checkTime('options.before', before);
    return store.prune(before ?? Number.MAX_VALUE);
  }

  return { handle, receive, gaps, reportLost, prune };
}
