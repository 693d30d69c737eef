/**
 * What the receiver asks of a store, and the rules every store applies the same way: which
 * delivery runs the app's apply, which is answered from its receipt, and how a queue's received
 * numbers become removed / still-to-come / lost ranges.
 *
 * Terminology
 * - **receipt**: one row per (origin, queue, counter): the highest revision seen, whether it
 *   was applied or refused, the answer given (status and JSON body), the highest low-water mark
 *   any delivery of it carried, and when.
 * - **repeat**: a delivery of content already applied (same revision): answered from the receipt.
 * - **stale**: a delivery of older content than the receipt's (a late request of a lost lease):
 *   answered from the receipt and never applied — it would overwrite newer content.
 */
import type { Delivery } from './protocol.js';

/**
 * Thrown by an app's `apply` to refuse a delivery for good: its writes are rolled back, the
 * number is recorded as received (refused), and the client is answered `status` with
 * `{ error: reason }` — which `leasehold/http` turns into a `RejectError` (a dead letter on the
 * device). A later delivery of the same number (a redrive the user fixed, or a newer revision)
 * runs apply again.
 */
export class Refusal extends Error {
  override name = 'Refusal';
  /** The answer's status: 400, 409, 410 or 422. */
  readonly status: 400 | 409 | 410 | 422;

  /**
   * @param reason why, as the client's dead letter will show it (a non-empty string).
   * @param options `status` (default 422).
   * @throws TypeError / RangeError for an empty reason or a status other than 400, 409, 410, 422.
   */
  constructor(reason: string, options: { status?: 400 | 409 | 410 | 422 } = {}) {
    super(reason);
    if (typeof reason !== 'string' || reason.length === 0) throw new TypeError('a Refusal needs a reason: a non-empty string');
    const status = options?.status ?? 422;
    if (status !== 400 && status !== 409 && status !== 410 && status !== 422) {
      throw new RangeError(`a Refusal's status must be 400, 409, 410 or 422 (statuses leasehold/http treats as refusals), got ${String(status)}`);
    }
    this.status = status;
  }
}

/** An answer as a store keeps it: the status and the body's JSON text (null once pruned). */
export interface StoredAnswer {
  readonly status: number;
  readonly body: string | null;
}

/** How a delivery was answered: applied now, or from its receipt (`'same'` or `'stale'`). */
export type Repeat = false | 'same' | 'stale';

/** What a store made of one delivery. */
export interface Receipt extends StoredAnswer {
  readonly repeat: Repeat;
}

/** One queue of an origin as the store counts it, before the mark splits its gaps. */
export interface QueueCounts {
  readonly queue: string;
  readonly received: number;
  readonly highest: number;
  readonly lowWater: number;
  /** The numbers from 1 to `highest` never received, as ascending `[from, to]` ranges. */
  readonly gaps: readonly (readonly [number, number])[];
}

/** What a store knows of one origin, or null for an origin it never received from. */
export interface OriginCounts {
  readonly lost: boolean;
  readonly queues: readonly QueueCounts[];
}

/**
 * A place to keep receipts: `sqliteReceipts(db)` or `postgresReceipts(db)`. `Tx` is the handle
 * the app's `apply` writes through, in the receipt's own transaction; `Sync` says whether apply
 * must be synchronous (SQLite, where a transaction never awaits).
 */
export interface ReceiptStore<Tx = unknown, Sync extends boolean = boolean> {
  /** True when apply runs inside a synchronous transaction and must not return a promise. */
  readonly synchronous: Sync;
  /** A label for messages. */
  readonly label: string;
  /**
   * Runs one delivery in one transaction: reads its receipt (serializing concurrent deliveries
   * of one number), and either answers from it or runs `apply` under a savepoint — a
   * {@link Refusal} undoes apply's writes and is recorded as refused — and writes the receipt.
   * Any other throw rolls the whole transaction back and is rethrown: nothing is recorded.
   * @internal
   */
  deliver(delivery: Delivery, now: number, apply: (tx: Tx) => StoredAnswer | Promise<StoredAnswer>): Promise<Receipt>;
  /** @internal */
  counts(origin: string): Promise<OriginCounts | null>;
  /** Marks `origin` lost; false (nothing changed) when the store never received from it. @internal */
  markLost(origin: string, now: number): Promise<boolean>;
  /** Drops the answer bodies of applied receipts below their queue's mark, written before `before`. @internal */
  prune(before: number): Promise<number>;
}

/**
 * Whether a delivery of `revision` runs apply, given the receipt of its number (if any): a new
 * number or a higher revision does; so does the same revision when the receipt is a refusal (a
 * redriven dead letter the user fixed). The same revision as an applied receipt is a repeat; a
 * lower revision than the receipt's is stale, whatever its outcome.
 */
export function decide(receipt: { revision: number; refused: boolean } | undefined, revision: number): 'apply' | Exclude<Repeat, false> {
  if (receipt === undefined || revision > receipt.revision) return 'apply';
  if (revision < receipt.revision) return 'stale';
  return receipt.refused ? 'apply' : 'same';
}

/** The answer a {@link Refusal} is kept and sent as. */
export function refusalAnswer(refusal: Refusal): StoredAnswer {
  return { status: refusal.status, body: JSON.stringify({ error: refusal.message }) };
}

/** The numbers below `mark` and those from it, of ascending ranges. */
export function splitAt(ranges: readonly (readonly [number, number])[], mark: number): { below: [number, number][]; from: [number, number][] } {
  const below: [number, number][] = [];
  const from: [number, number][] = [];
  for (const [a, b] of ranges) {
    if (b < mark) below.push([a, b]);
    else if (a >= mark) from.push([a, b]);
    else {
      below.push([a, mark - 1]);
      from.push([mark, b]);
    }
  }
  return { below, from };
}
