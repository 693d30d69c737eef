/**
 * The owner's side of the browser host, free of DOM APIs so it runs (and is tested) anywhere:
 * a SqliteTransport and a SqliteStore on one database, a dispatcher that accepts only the
 * contracts' own methods, the call journal that makes a retried call safe, and group commit:
 * calls wait in per-caller queues (see batches.ts) and are applied in batches, one transaction
 * per batch, each call under its own savepoint (a call that comes alone runs in a transaction
 * of its own, which isolates it just as well).
 *
 * Why batches: a commit on OPFS costs a fixed number of file calls whatever it holds (two per
 * written page; ~0.5 ms each in a private window, ~10 µs on disk), so N calls that share one
 * COMMIT cost little more than one. The worker runs one batch at a time, synchronously; calls
 * that arrive meanwhile queue up in the event loop and make the next batch.
 * @internal
 */
import { ClosedError } from '../errors.js';
import type { SqlDatabase } from '../sqlite/driver.js';
import { SqliteStore } from '../store/sqlite.js';
import { SqliteTransport } from '../transport/sqlite.js';
import { CallQueues, type Queued, taskScheduler } from './batches.js';
import type { SqlTracer } from './trace.js';
import { DEFAULT_QUEUE } from '../transport/contract.js';
import { checkId } from '../validate.js';
import type { CallMessage } from './wire.js';
import { migrateHost } from './journal.js';

/** Calls that change data: journaled, so a retry is answered instead of applied again. */
const CHANGING: Record<'transport' | 'store', ReadonlySet<string>> = {
  transport: new Set(['publish', 'publishMany', 'claim', 'claimMany', 'ack', 'ackMany', 'ackAndClaim', 'ackAndClaimMany', 'nack', 'extend', 'redrive', 'cancel']),
  store: new Set(['save', 'commit', 'ackOutbox', 'ackSpawn', 'deleteTimer', 'appendTrace', 'delete']),
};
const READING: Record<'transport' | 'store', ReadonlySet<string>> = {
  transport: new Set(['inspect', 'deadLetters', 'stats']),
  store: new Set(['load', 'isProcessed', 'pendingOutbox', 'pendingSpawns', 'dueTimers', 'readTrace']),
};

/** Journal entries older than this are pruned: retries come within seconds, not minutes. */
const JOURNAL_KEEP_MS = 10 * 60_000;
const PRUNE_EVERY = 1_000;

/** Most calls in one transaction: enough to share a commit widely, few enough to answer soon. */
const MAX_BATCH = 64;

export interface CoreOptions {
  maxAttempts?: number;
  traceMax?: number;
  /** Called after a commit that may make work claimable in `queue`. */
  onChange?: (queue: string) => void;
  /** Records the SQL of claims and acks (the demo's SQL panel). Absent: nothing is wrapped or recorded. */
  trace?: SqlTracer;
}

type Method = (...args: unknown[]) => Promise<unknown>;

export class HostCore {
  /** The default queue's transport. */
  readonly transport: SqliteTransport;
  /** Every named queue opened so far; each is created on its first call. */
  readonly #transports = new Map<string, SqliteTransport>();
  readonly #openQueue: (queue: string) => SqliteTransport;
  readonly store: SqliteStore;
  readonly #db: SqlDatabase;
  /** The clock the backends read: the clock reading carried by the call being served. */
  #now = 0;
  /** The id of the changing call being served, while its transaction runs. */
  #journalId: string | null = null;
  #sinceLastPrune = 0;
  /** A batch's transaction is open: the backends' transactions become savepoints in it. */
  #inBatch = false;
  /** A batch ran and its follow-up task has not yet taken the calls that came meanwhile. */
  #busy = false;
  #closed = false;
  readonly #queues = new CallQueues();
  readonly #tasks = taskScheduler();
  readonly #readJournal;
  readonly #writeJournal;
  readonly #pruneJournal;
  /** {@link HostCore.#apply}, or the same inside the tracer: chosen once, so tracing off costs nothing per call. */
  readonly #applyOne: (item: Queued) => Promise<unknown>;

  constructor(db: SqlDatabase, options: CoreOptions = {}) {
    const trace = options.trace;
    if (trace) db = trace.wrap(db);
    this.#applyOne = trace ? (item) => trace.around(item.call, () => this.#apply(item)) : (item) => this.#apply(item);
    this.#db = db;
    const savepoint = db.savepoint?.bind(db);
    const journaled: SqlDatabase = {
      filename: db.filename,
      get closed() {
        return db.closed;
      },
      prepare: (sql) => db.prepare(sql),
      exec: (sql) => db.exec(sql),
      close: () => db.close(),
      schemaVersion: (component) => db.schemaVersion(component),
      setSchemaVersion: (component, version) => db.setSchemaVersion(component, version),
      // Every changing call runs exactly one transaction whose body returns the call's result;
      // writing that result here, inside the same transaction (or savepoint), makes applying a
      // call and remembering its answer one atomic step.
      transaction: (body) => {
        const run = () => {
          const result = body();
          if (this.#journalId !== null) {
            this.#writeJournal.run(this.#journalId, result === undefined ? null : JSON.stringify(result), Date.now());
            this.#journalId = null;
          }
          return result;
        };
        return this.#inBatch ? savepoint!(run) : db.transaction(run);
      },
    };
    if (savepoint) journaled.savepoint = savepoint;
    const clock = () => this.#now;
    this.#openQueue = (queue) => {
      const transport = new SqliteTransport(journaled, { clock, queue, ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }) });
      const onChange = options.onChange;
      if (onChange) transport.onChange(() => onChange(queue));
      this.#transports.set(queue, transport);
      return transport;
    };
    this.transport = this.#openQueue(DEFAULT_QUEUE);
    this.store = new SqliteStore(journaled, options.traceMax === undefined ? {} : { traceMax: options.traceMax });
    migrateHost(db);
    this.#readJournal = db.prepare('SELECT result FROM lh_calls WHERE id = ?');
    this.#writeJournal = db.prepare('INSERT INTO lh_calls (id, result, at) VALUES (?, ?, ?)');
    this.#pruneJournal = db.prepare('DELETE FROM lh_calls WHERE at < ?');
  }

  /**
   * Serves one call: queues it behind `caller`'s earlier calls and settles once the batch that
   * applied it has committed. Rejects with the backend's own error (to be sent across as data),
   * a TypeError for a method that is not part of the contracts, the commit's error if the shared
   * COMMIT failed, or a ClosedError once {@link close} was called.
   *
   * `journaled`: the call may be a retry (it came from another tab, whose host sends it again if
   * the owner changes), so its result is journaled and a retry is answered from the journal. The
   * owner's own page never retries (if the owner's tab dies, so does the page), so its calls skip
   * the journal and the write it costs.
   *
   * `caller`: who is waiting (the owner's page, or a forwarding tab's host id). Callers are served
   * in turn; one caller's calls are applied in the order they came.
   */
  serve(call: CallMessage, journaled = true, caller = 'default'): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ClosedError('database'));
    try {
      this.#check(call);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#queues.push(caller, { call, journaled, resolve, reject });
      this.#schedule();
    });
  }

  /** Closes the backends and the database; calls still queued reject with a ClosedError. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#tasks.close();
    for (const item of this.#queues.drain()) item.reject(new ClosedError('database'));
    for (const transport of this.#transports.values()) await transport.close();
    await this.store.close();
    this.#db.close();
  }

  #check(call: CallMessage): void {
    if (call.target !== 'transport' && call.target !== 'store') throw new TypeError(`unknown call target ${String(call.target)}`);
    if (!CHANGING[call.target].has(call.method) && !READING[call.target].has(call.method)) {
      throw new TypeError(`${call.target}.${String(call.method)} is not a method of the contract`);
    }
    if (!Array.isArray(call.args)) throw new TypeError('call arguments must be an array');
    if (typeof call.now !== 'number' || !Number.isFinite(call.now)) throw new TypeError('call.now must be a finite number');
    if (call.queue !== undefined) checkId('call.queue', call.queue);
  }

  /**
   * When idle, a call is served at once (in a microtask, so calls posted in the same task join
   * it). After every batch a follow-up task takes whatever arrived while it ran: those calls
   * wait in the event loop behind the batch, and share the next transaction.
   */
  #schedule(): void {
    if (this.#busy) return;
    this.#busy = true;
    queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    if (this.#closed || this.#queues.size === 0) {
      this.#busy = false;
      return;
    }
    this.#runBatch();
    this.#tasks.schedule(() => this.#drain());
  }

  /**
   * Applies the next batch in one transaction, each call under its own savepoint (a failing call
   * undoes only itself and gets its own error), then answers every call after the COMMIT.
   */
  #runBatch(): void {
    if (this.#closed) return;
    const batch = this.#queues.take(MAX_BATCH);
    const outcomes: Promise<unknown>[] = [];
    let failed: { error: unknown } | undefined;
    if (!this.#db.savepoint || batch.length === 1) {
      // A driver without savepoints: one transaction per call, still in turn. A batch of one
      // call is the same thing: its own transaction isolates it, and SAVEPOINT + RELEASE cost
      // two more statements per call when calls come one at a time.
      for (const item of batch) outcomes.push(this.#applyOne(item));
      if (this.#pruneDue()) this.#db.transaction(() => this.#prune());
    } else {
      try {
        this.#db.transaction(() => {
          this.#inBatch = true;
          for (const item of batch) outcomes.push(this.#applyOne(item));
          if (this.#pruneDue()) this.#prune();
        });
      } catch (error) {
        failed = { error };
      } finally {
        this.#inBatch = false;
      }
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i] ?? Promise.reject(failed!.error);
      outcome.then((value) => (failed ? item.reject(failed.error) : item.resolve(value)), item.reject);
    });
  }

  /** Runs one call; the backends do all their work synchronously inside it, before it returns. */
  #apply({ call, journaled }: Queued): Promise<unknown> {
    this.#now = call.now;
    try {
      // A queue's first call creates its transport (and its counters row): inside the try, so
      // a failure there is this call's error alone.
      const target = (call.target === 'transport' ? this.#transportFor(call.queue) : this.store) as unknown as Record<string, Method>;
      if (!CHANGING[call.target as 'transport' | 'store'].has(call.method)) return target[call.method]!(...call.args);
      if (!journaled) return target[call.method]!(...call.args).then((value) => this.#result(call, value));
      const answered = this.#readJournal.get<{ result: string | null }>(call.id);
      if (answered) return Promise.resolve(answered.result === null ? undefined : JSON.parse(answered.result));
      this.#sinceLastPrune++;
      this.#journalId = call.id;
      try {
        return target[call.method]!(...call.args).then((value) => this.#result(call, value));
      } finally {
        this.#journalId = null;
      }
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #transportFor(queue: string | undefined): SqliteTransport {
    if (queue === undefined) return this.transport;
    return this.#transports.get(queue) ?? this.#openQueue(queue);
  }

  /** save and commit bump the version of the host's copy: the page needs the new version. */
  #result(call: CallMessage, value: unknown): unknown {
    return call.target === 'store' && (call.method === 'save' || call.method === 'commit') ? (call.args[0] as { version: number }).version : value;
  }

  #pruneDue(): boolean {
    return this.#sinceLastPrune >= PRUNE_EVERY;
  }

  #prune(): void {
    this.#sinceLastPrune = 0;
    this.#pruneJournal.run(Date.now() - JOURNAL_KEEP_MS);
  }
}
