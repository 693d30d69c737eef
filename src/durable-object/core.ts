/**
 * The object's side of a remote call, free of Workers APIs so it is plain to read and test: a
 * `SqliteTransport` and a `SqliteStore` on the object's database, a dispatcher that accepts only
 * forwarded contract methods, and the deadline the object's alarm must wake up for.
 * @internal
 */
import type { SqlDatabase, SqlStatement } from '../sqlite/driver.js';
import { SqliteStore } from '../store/sqlite.js';
import { DEFAULT_QUEUE } from '../transport/contract.js';
import { SqliteTransport } from '../transport/sqlite.js';
import { checkId, checkInteger, checkObject } from '../validate.js';
import { isForwarded, VERSION_BUMPING } from './methods.js';

/** Options of a leasehold Durable Object. */
export interface ObjectOptions {
  /** The transport's `maxAttempts` (dead letters); default unlimited. */
  maxAttempts?: number;
  /** The store's `traceMax`; default 200. */
  traceMax?: number;
}

/** Checks `options` as the constructors would, naming the bad field. */
export function checkObjectOptions(options: unknown): ObjectOptions {
  checkObject('options', options, true);
  const { maxAttempts, traceMax } = (options ?? {}) as ObjectOptions;
  if (maxAttempts !== undefined) checkInteger('options.maxAttempts', maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  if (traceMax !== undefined) checkInteger('options.traceMax', traceMax, 0, Number.MAX_SAFE_INTEGER);
  return { ...(maxAttempts === undefined ? {} : { maxAttempts }), ...(traceMax === undefined ? {} : { traceMax }) };
}

export { DEFAULT_QUEUE };

export class ObjectCore {
  store!: SqliteStore;
  readonly #db: SqlDatabase;
  readonly #clock: () => number;
  #options: ObjectOptions = {};
  /** One transport per named queue, created on the queue's first call. */
  #transports = new Map<string, SqliteTransport>();
  readonly #earliestLock: SqlStatement;
  readonly #earliestTimer: SqlStatement;
  readonly #onChange: (queue: string) => void;

  constructor(db: SqlDatabase, clock: () => number, options: ObjectOptions, onChange: (queue: string) => void) {
    this.#db = db;
    this.#clock = clock;
    this.#onChange = onChange;
    this.configure(options, true);
    this.#earliestLock = db.prepare('SELECT min(locked_until) AS t FROM lh_groups WHERE locked_until >= ?');
    this.#earliestTimer = db.prepare('SELECT min(fire_at) AS t FROM lh_timers WHERE fire_at > ?');
  }

  /** (Re)builds the backends when the options changed (only tests change them at run time). */
  configure(options: ObjectOptions, force = false): void {
    if (!force && options.maxAttempts === this.#options.maxAttempts && options.traceMax === this.#options.traceMax) return;
    this.#options = options;
    for (const transport of this.#transports.values()) void transport.close();
    this.#transports = new Map();
    this.store = new SqliteStore(this.#db, options.traceMax === undefined ? {} : { traceMax: options.traceMax });
  }

  /** The transport of `queue`, created (with its tables' rows) on first use. */
  transport(queue: string = DEFAULT_QUEUE): SqliteTransport {
    let transport = this.#transports.get(queue);
    if (!transport) {
      const { maxAttempts } = this.#options;
      transport = new SqliteTransport(this.#db, { clock: this.#clock, queue, ...(maxAttempts === undefined ? {} : { maxAttempts }) });
      transport.onChange(() => this.#onChange(queue));
      this.#transports.set(queue, transport);
    }
    return transport;
  }

  /**
   * Runs one forwarded call and resolves its result; for `save`/`commit`, the new version.
   * @throws TypeError for a target or method that is not forwarded, or args that are not an array;
   *   otherwise whatever the backend throws.
   */
  async serve(target: unknown, method: unknown, args: unknown, queue: unknown = DEFAULT_QUEUE): Promise<unknown> {
    if (!isForwarded(target, method)) throw new TypeError(`${String(target)}.${String(method)} is not a method leasehold forwards`);
    if (!Array.isArray(args)) throw new TypeError('args must be an array');
    checkId('queue', queue);
    const backend = (target === 'transport' ? this.transport(queue) : this.store) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const result = await backend[method as string]!(...args);
    return target === 'store' && VERSION_BUMPING.has(method as string) ? (args[0] as { version: number }).version : result;
  }

  /**
   * The earliest clock reading after `now` at which something becomes due without any call, in
   * any queue: a lease, park or delay runs out (claimable at its end + 1) or a timer comes due.
   * null when none.
   * What is already due was announced when it came due; announcing it again would make an
   * alarm that never stops firing while nobody acts on it.
   */
  nextDeadline(now: number): number | null {
    const lock = this.#earliestLock.get<{ t: number | null }>(now)?.t ?? null;
    const timer = this.#earliestTimer.get<{ t: number | null }>(now)?.t ?? null;
    const candidates = [lock === null ? null : lock + 1, timer].filter((t): t is number => t !== null);
    return candidates.length === 0 ? null : Math.min(...candidates);
  }
}
