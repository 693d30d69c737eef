/**
 * The owner's side of the browser host, free of DOM APIs so it runs (and is tested) anywhere:
 * a SqliteTransport and a SqliteStore on one database, a dispatcher that accepts only the
 * contracts' own methods, and the call journal that makes a retried call safe.
 * @internal
 */
import type { SqlDatabase } from '../sqlite/driver.js';
import { SqliteStore } from '../store/sqlite.js';
import { SqliteTransport } from '../transport/sqlite.js';
import type { CallMessage } from './wire.js';

/** Calls that change data: journaled, so a retry is answered instead of applied again. */
const CHANGING: Record<'transport' | 'store', ReadonlySet<string>> = {
  transport: new Set(['publish', 'claim', 'ack', 'ackAndClaim', 'nack', 'extend', 'redrive']),
  store: new Set(['save', 'commit', 'ackOutbox', 'ackSpawn', 'deleteTimer', 'appendTrace', 'delete']),
};
const READING: Record<'transport' | 'store', ReadonlySet<string>> = {
  transport: new Set(['inspect', 'deadLetters']),
  store: new Set(['load', 'isProcessed', 'pendingOutbox', 'pendingSpawns', 'dueTimers', 'readTrace']),
};

/** Journal entries older than this are pruned: retries come within seconds, not minutes. */
const JOURNAL_KEEP_MS = 10 * 60_000;
const PRUNE_EVERY = 1_000;

export interface CoreOptions {
  maxAttempts?: number;
  traceMax?: number;
}

export class HostCore {
  readonly transport: SqliteTransport;
  readonly store: SqliteStore;
  readonly #db: SqlDatabase;
  /** The clock the backends read: the clock reading carried by the call being served. */
  #now = 0;
  /** The id of the changing call being served, while its transaction runs. */
  #journalId: string | null = null;
  #sinceLastPrune = 0;
  readonly #readJournal;
  readonly #writeJournal;
  readonly #pruneJournal;

  constructor(db: SqlDatabase, options: CoreOptions = {}) {
    this.#db = db;
    const journaled: SqlDatabase = {
      filename: db.filename,
      get closed() {
        return db.closed;
      },
      prepare: (sql) => db.prepare(sql),
      exec: (sql) => db.exec(sql),
      close: () => db.close(),
      // Every changing call runs exactly one transaction whose body returns the call's result;
      // writing that result here, inside the same transaction, makes applying a call and
      // remembering its answer one atomic step.
      transaction: (body) =>
        db.transaction(() => {
          const result = body();
          if (this.#journalId !== null) {
            this.#writeJournal.run(this.#journalId, result === undefined ? null : JSON.stringify(result), Date.now());
            this.#journalId = null;
          }
          return result;
        }),
    };
    const clock = () => this.#now;
    this.transport = new SqliteTransport(journaled, { clock, ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }) });
    this.store = new SqliteStore(journaled, options.traceMax === undefined ? {} : { traceMax: options.traceMax });
    this.#readJournal = db.prepare('SELECT result FROM lh_calls WHERE id = ?');
    this.#writeJournal = db.prepare('INSERT INTO lh_calls (id, result, at) VALUES (?, ?, ?)');
    this.#pruneJournal = db.prepare('DELETE FROM lh_calls WHERE at < ?');
  }

  /**
   * Serves one call. Rejects with the backend's own error (to be sent across as data), or a
   * TypeError for a method that is not part of the contracts.
   *
   * `journaled`: the call may be a retry (it came from another tab, whose host sends it again if
   * the owner changes), so its result is journaled and a retry is answered from the journal. The
   * owner's own page never retries (if the owner's tab dies, so does the page), so its calls skip
   * the journal and the write it costs.
   */
  async serve(call: CallMessage, journaled = true): Promise<unknown> {
    if (call.target !== 'transport' && call.target !== 'store') throw new TypeError(`unknown call target ${String(call.target)}`);
    const changing = CHANGING[call.target].has(call.method);
    if (!changing && !READING[call.target].has(call.method)) throw new TypeError(`${call.target}.${String(call.method)} is not a method of the contract`);
    if (!Array.isArray(call.args)) throw new TypeError('call arguments must be an array');
    if (typeof call.now !== 'number' || !Number.isFinite(call.now)) throw new TypeError('call.now must be a finite number');
    const target = (call.target === 'transport' ? this.transport : this.store) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    this.#now = call.now;
    if (!changing) return target[call.method]!(...call.args);
    if (!journaled) return this.#result(call, await target[call.method]!(...call.args));

    const answered = this.#readJournal.get<{ result: string | null }>(call.id);
    if (answered) return answered.result === null ? undefined : JSON.parse(answered.result);
    this.#prune();
    this.#journalId = call.id;
    let pending: Promise<unknown>;
    try {
      // The backends do all their work synchronously inside this call, before it returns.
      pending = target[call.method]!(...call.args);
    } finally {
      this.#journalId = null;
    }
    return this.#result(call, await pending);
  }

  /** save and commit bump the version of the host's copy: the page needs the new version. */
  #result(call: CallMessage, value: unknown): unknown {
    return call.target === 'store' && (call.method === 'save' || call.method === 'commit') ? (call.args[0] as { version: number }).version : value;
  }

  async close(): Promise<void> {
    await this.transport.close();
    await this.store.close();
    this.#db.close();
  }

  #prune(): void {
    if (++this.#sinceLastPrune < PRUNE_EVERY) return;
    this.#sinceLastPrune = 0;
    this.#db.transaction(() => this.#pruneJournal.run(Date.now() - JOURNAL_KEEP_MS));
  }
}
