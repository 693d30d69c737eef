/**
 * The SQL host: one database served to callers elsewhere. The browser's owner tab and a Durable
 * Object are both this, plus a way to receive calls. It owns the transaction: a call is
 * dispatched from the method table to the backend's operation (see sqlite/operation.ts), which
 * runs inside the host's transaction or savepoint on the clock reading the call carries, next to
 * the host's own write of the call's answer to the journal. What the caller gets is what the
 * journal keeps, so a call retried after its answer was lost is answered exactly as the first
 * time, by construction, and never applied twice.
 *
 * Group commit: {@link SqlHost.applyBatch} applies calls in one transaction, each under its own
 * savepoint (a failing call undoes only itself and gets its own error), and settles them only
 * after the COMMIT. What changed and when something next comes due are return values, not
 * listener side effects, so a platform decides what to announce.
 * @internal
 */
import { ClosedError } from '../errors.js';
import type { SqlDatabase, SqlStatement } from '../sqlite/driver.js';
import { type Operation, operation, type Outcome } from '../sqlite/operation.js';
import { SqliteStore } from '../store/sqlite.js';
import { DEFAULT_QUEUE, type DeadLetterPolicy } from '../transport/contract.js';
import { SqliteTransport } from '../transport/sqlite.js';
import { checkId } from '../validate.js';
import { migrateHost } from './journal.js';
import { type MethodSpec, methodSpec } from './methods.js';
import type { RemoteCall } from './wire.js';

/** A call as a host serves it. */
export interface HostedCall extends RemoteCall {
  /** The clock reading the call is applied at: every lease, park and delay is measured on it. */
  now: number;
  /**
   * Set when the caller may send this call again after losing its answer (it came from another
   * tab, whose host resends it to the next owner): a write is then journaled under this id, and
   * a call that comes again with it is answered from the journal.
   */
  journalId?: string;
}

/** How one call ended, known once its transaction committed. */
export type Settled =
  /** `changed`: the queue in which the call may have made work claimable (a change notice is due), or null. */
  | { ok: true; value: unknown; changed: string | null }
  | { ok: false; error: unknown };

/** Records the SQL a call ran (the browser demo's SQL panel): wraps the database, then each call. */
export interface CallTracer {
  wrap(db: SqlDatabase): SqlDatabase;
  around<T>(call: HostedCall, apply: () => T): T;
}

/** Options of a {@link SqlHost}. */
export interface SqlHostOptions {
  /** The transports' `maxAttempts` (dead letters). */
  maxAttempts?: number;
  /** The transports' `maxEventBytes` (default 1 MiB). */
  maxEventBytes?: number;
  /** The transports' `onDeadLetter` (left out: each queue's own, `'continue'` for a new one). */
  onDeadLetter?: DeadLetterPolicy;
  /** The store's `traceMax`. */
  traceMax?: number;
  /** Keep the call journal, for callers that resend calls (see {@link HostedCall.journalId}). */
  journal?: boolean;
  tracer?: CallTracer;
}

/** Journal entries older than this are pruned: retries come within seconds, not minutes. */
const JOURNAL_KEEP_MS = 10 * 60_000;
const PRUNE_EVERY = 1_000;

type Backend = { [operation](method: string, args: readonly unknown[]): Operation };

export class SqlHost {
  readonly store: SqliteStore;
  /** What the backends run on: the host's database, whose transactions become savepoints while a batch is open. */
  readonly #backendDb: SqlDatabase;
  readonly #db: SqlDatabase;
  readonly #options: SqlHostOptions;
  /** One transport per named queue, created on the queue's first call. */
  readonly #transports = new Map<string, SqliteTransport>();
  readonly #journal: { read: SqlStatement; write: SqlStatement; prune: SqlStatement } | undefined;
  readonly #earliestLock: SqlStatement;
  readonly #earliestTimer: SqlStatement;
  #sinceLastPrune = 0;
  #inBatch = false;
  #closed = false;

  /**
   * @throws StorageError when the schema cannot be created or migrated; SchemaTooNewError when a
   *   newer leasehold wrote it; TypeError / RangeError for bad options.
   */
  constructor(db: SqlDatabase, options: SqlHostOptions = {}) {
    const tracer = options.tracer;
    if (tracer) db = tracer.wrap(db);
    this.#db = db;
    this.#options = options;
    const savepoint = db.savepoint?.bind(db);
    this.#backendDb = {
      filename: db.filename,
      get closed() {
        return db.closed;
      },
      prepare: (sql) => db.prepare(sql),
      exec: (sql) => db.exec(sql),
      close: () => db.close(),
      schemaVersion: (component) => db.schemaVersion(component),
      setSchemaVersion: (component, version) => db.setSchemaVersion(component, version),
      // A queue's first call creates its transport (its counters row) while a batch may be open.
      transaction: (body) => (this.#inBatch ? savepoint!(body) : db.transaction(body)),
    };
    if (savepoint) this.#backendDb.savepoint = savepoint;
    this.store = new SqliteStore(this.#backendDb, options.traceMax === undefined ? {} : { traceMax: options.traceMax });
    this.transport(DEFAULT_QUEUE);
    if (options.journal) {
      migrateHost(db);
      this.#journal = {
        read: db.prepare('SELECT result FROM lh_calls WHERE id = ?'),
        write: db.prepare('INSERT INTO lh_calls (id, result, at) VALUES (?, ?, ?)'),
        prune: db.prepare('DELETE FROM lh_calls WHERE at < ?'),
      };
    }
    this.#earliestLock = db.prepare('SELECT min(locked_until) AS t FROM lh_groups WHERE locked_until >= ?');
    this.#earliestTimer = db.prepare('SELECT min(fire_at) AS t FROM lh_timers WHERE fire_at > ?');
  }

  /** Whether the database can run several calls in one transaction (a driver with savepoints). */
  get groupsCommits(): boolean {
    return this.#db.savepoint !== undefined;
  }

  /** The transport of `queue`, created (with its counters row) on first use. */
  transport(queue: string = DEFAULT_QUEUE): SqliteTransport {
    let transport = this.#transports.get(queue);
    if (!transport) {
      const { maxAttempts, maxEventBytes, onDeadLetter } = this.#options;
      transport = new SqliteTransport(this.#backendDb, {
        queue,
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
        ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
      });
      this.#transports.set(queue, transport);
    }
    return transport;
  }

  /**
   * Checks that `call` is a call the host serves, before it is queued: the target and method are
   * in the method table, the arguments are an array, the clock reading is finite. Returns the
   * method's spec.
   * @throws TypeError naming what is wrong.
   */
  check(call: HostedCall): MethodSpec {
    if (typeof call !== 'object' || call === null) throw new TypeError('a call must be an object');
    const spec = methodSpec(call.target, call.method);
    if (!spec) throw new TypeError(`${String(call.target)}.${String(call.method)} is not a method of the contract`);
    if (!Array.isArray(call.args)) throw new TypeError('call arguments must be an array');
    if (typeof call.now !== 'number' || !Number.isFinite(call.now)) throw new TypeError('call.now must be a finite number');
    if (call.queue !== undefined) checkId('call.queue', call.queue);
    return spec;
  }

  /** Applies one call in a transaction of its own (see {@link applyBatch}). */
  apply(call: HostedCall): Settled {
    return this.applyBatch([call])[0]!;
  }

  /**
   * Applies `calls` in order. Several share one transaction, each under its own savepoint, when
   * the driver has savepoints; one call (or a driver without them) runs in a transaction of its
   * own, which isolates it just as well and costs two statements less. Each call settles with its
   * answer or its own error; if the shared COMMIT fails, every call settles with that error and
   * nothing of the batch remains.
   */
  applyBatch(calls: readonly HostedCall[]): Settled[] {
    if (this.#closed) return calls.map(() => ({ ok: false, error: new ClosedError('database') }));
    const settled: Settled[] = [];
    const settle = (call: HostedCall, inBatch: boolean) => {
      try {
        settled.push({ ok: true, ...this.#traced(call, inBatch) });
      } catch (error) {
        settled.push({ ok: false, error });
      }
    };
    if (calls.length === 1 || !this.groupsCommits) {
      for (const call of calls) settle(call, false);
    } else {
      try {
        this.#db.transaction(() => {
          this.#inBatch = true;
          for (const call of calls) settle(call, true);
        });
      } catch (error) {
        return calls.map(() => ({ ok: false, error }));
      } finally {
        this.#inBatch = false;
      }
    }
    this.#pruneIfDue();
    return settled;
  }

  /**
   * The earliest clock reading after `now` at which something becomes due without any call, in
   * any queue: a lease, park or delay runs out (claimable at its end + 1) or a timer comes due;
   * null when none. What is already due was announced when it came due; announcing it again
   * would make an alarm that never stops firing while nobody acts on it.
   */
  nextDeadline(now: number): number | null {
    const lock = this.#earliestLock.get<{ t: number | null }>(now)?.t ?? null;
    const timer = this.#earliestTimer.get<{ t: number | null }>(now)?.t ?? null;
    const candidates = [lock === null ? null : lock + 1, timer].filter((t): t is number => t !== null);
    return candidates.length === 0 ? null : Math.min(...candidates);
  }

  /** Closes the backends and the database. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const transport of this.#transports.values()) await transport.close();
    await this.store.close();
    this.#db.close();
  }

  #traced(call: HostedCall, inBatch: boolean): { value: unknown; changed: string | null } {
    const tracer = this.#options.tracer;
    return tracer ? tracer.around(call, () => this.#applyOne(call, inBatch)) : this.#applyOne(call, inBatch);
  }

  #applyOne(call: HostedCall, inBatch: boolean): { value: unknown; changed: string | null } {
    const spec = this.check(call);
    const backend: Backend = call.target === 'transport' ? this.transport(call.queue) : this.store;
    const op = backend[operation](call.method, call.args);
    const journal = spec.kind === 'write' && call.journalId !== undefined ? this.#journal : undefined;
    if (journal) {
      const answered = journal.read.get<{ result: string | null }>(call.journalId!);
      if (answered) return { value: answered.result === null ? undefined : JSON.parse(answered.result), changed: null };
      this.#sinceLastPrune++;
    }
    const body = (): Outcome => {
      const outcome = op.run(() => call.now);
      // The answer the caller gets, written in the call's own transaction or savepoint: applying
      // the call and remembering its answer are one atomic step.
      if (journal) journal.write.run(call.journalId!, outcome.value === undefined ? null : JSON.stringify(outcome.value), Date.now());
      return outcome;
    };
    const outcome = inBatch ? this.#db.savepoint!(body) : op.transaction || journal ? this.#db.transaction(body) : body();
    return { value: outcome.value, changed: outcome.changed ? (call.queue ?? DEFAULT_QUEUE) : null };
  }

  /**
   * Drops journal entries older than {@link JOURNAL_KEEP_MS}, every {@link PRUNE_EVERY} journaled
   * calls, in a transaction of its own after the calls' commit: a prune that fails is no call's
   * failure (the journal only grows until the next try), so it can never fail or hold up a batch.
   */
  #pruneIfDue(): void {
    const journal = this.#journal;
    if (!journal || this.#sinceLastPrune < PRUNE_EVERY) return;
    this.#sinceLastPrune = 0;
    try {
      this.#db.transaction(() => journal.prune.run(Date.now() - JOURNAL_KEEP_MS));
    } catch {
      // Tried again after the next PRUNE_EVERY journaled calls.
    }
  }
}
