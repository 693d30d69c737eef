/**
 * The SQL execution store: the same contract as the in-memory store, over the synchronous
 * driver seam, so it runs on sqlite-wasm (browser OPFS, any runtime) and better-sqlite3 (Node).
 */
import { ClosedError, StoreConflictError } from '../errors.js';
import type { SqlDatabase, SqlStatement } from '../sqlite/driver.js';
import { migrate } from '../sqlite/schema.js';
import { checkId, checkObject, checkTime } from '../validate.js';
import { checkChanges, checkExecution, checkLimit, checkSeq, checkStoreOptions } from './checks.js';
import { type EncodedCommit, type EncodedStep, encodeCommit, encodeStep } from './encode.js';
import { inTransaction, type Operation, operation, type OperationsOf, outsideTransaction, unchanged } from '../sqlite/operation.js';
import type {
  CommitChanges,
  DueTimer,
  Execution,
  ExecutionStore,
  ExecutionStoreOptions,
  OutboxEntry,
  SpawnEntry,
  TraceStep,
} from './contract.js';

const ALL = -1; // SQLite's LIMIT -1: no limit

/** The store's operations: as the contract, but `save` and `commit` answer the new version (the caller's object is not at hand). */
type StoreOperations<X extends Execution> = Omit<OperationsOf<ExecutionStore<X>, 'close'>, 'save' | 'commit'> & {
  save(exe: X): Operation<number>;
  commit(exe: X, changes?: CommitChanges): Operation<number>;
};

/** The store never reads a clock: its times come in as arguments. */
const noClock = (): number => {
  throw new Error('leasehold: the execution store reads no clock');
};

/**
 * An {@link ExecutionStore} in SQLite tables (`lh_executions`, `lh_outbox`, `lh_processed`,
 * `lh_timers`, `lh_spawns`, `lh_trace`, `lh_trace_cursors`), which can share one database with
 * `SqliteTransport`.
 *
 * - The execution is stored as JSON without its `version`, which has its own column. `load`
 *   returns a new object on every call.
 * - CAS: a write succeeds when no row exists yet or the stored version equals `exe.version`
 *   (the store cannot tell "the same object", so the in-memory store's identity exemptions do
 *   not apply). On success `exe.version` is bumped in place, after the transaction committed.
 * - `commit` is one `BEGIN IMMEDIATE` transaction over the execution, outbox, dedupe mark,
 *   timers, spawns and trace: it lands whole or is rolled back whole.
 * - Executions, events, spawn contexts and trace entries must be representable as JSON: cycles,
 *   BigInts, functions, symbols, non-finite numbers, `undefined` at the top level or in arrays,
 *   Maps and Sets reject with a `TypeError` naming the value's path, before anything is written.
 *   Properties whose value is `undefined` are dropped, as `JSON.stringify` does.
 * - `close()` marks the store closed but leaves the database open: the caller opened it, and may
 *   share it with a transport. Close the database yourself when everything using it is done.
 *
 * Storage failures reject with a `StorageError` (the transaction rolled back).
 *
 * Every method is an operation (see `sqlite/operation.ts`) that a host can run inside its own
 * transaction next to its own writes; `save` and `commit` then answer the new version.
 *
 * @throws TypeError / RangeError from the constructor for a bad `db` or `traceMax`;
 *   `StorageError` if the schema cannot be created.
 */
export class SqliteStore<X extends Execution = Execution> implements ExecutionStore<X> {
  readonly #db: SqlDatabase;
  readonly #traceMax: number;
  readonly #sql: ReturnType<typeof prepareStatements>;
  #closed = false;

  constructor(db: SqlDatabase, options?: ExecutionStoreOptions) {
    checkObject('db', db);
    this.#traceMax = checkStoreOptions(options);
    this.#db = db;
    migrate(db);
    this.#sql = prepareStatements(db);
  }

  // The contract's methods: each runs its operation as a call of its own (see #run); a host runs
  // the same operations inside its own transaction (see [operation]).
  async load(id: string): Promise<X | undefined> {
    return this.#run(this.#operations.load(id));
  }

  async save(exe: X): Promise<void> {
    return this.commit(exe);
  }

  async commit(exe: X, changes?: CommitChanges): Promise<void> {
    // The caller's object gets its new version only once the transaction committed.
    exe.version = this.#run(this.#operations.commit(exe, changes));
  }

  async isProcessed(executionId: string, eventId: string): Promise<boolean> {
    return this.#run(this.#operations.isProcessed(executionId, eventId));
  }

  async pendingOutbox(limit?: number): Promise<OutboxEntry[]> {
    return this.#run(this.#operations.pendingOutbox(limit));
  }

  async ackOutbox(seq: number): Promise<void> {
    return this.#run(this.#operations.ackOutbox(seq));
  }

  async pendingSpawns(limit?: number): Promise<SpawnEntry[]> {
    return this.#run(this.#operations.pendingSpawns(limit));
  }

  async ackSpawn(seq: number): Promise<void> {
    return this.#run(this.#operations.ackSpawn(seq));
  }

  async dueTimers(now: number): Promise<DueTimer[]> {
    return this.#run(this.#operations.dueTimers(now));
  }

  async deleteTimer(executionId: string, path: string, fireAt: number): Promise<boolean> {
    return this.#run(this.#operations.deleteTimer(executionId, path, fireAt));
  }

  async appendTrace(executionId: string, entry: object): Promise<void> {
    return this.#run(this.#operations.appendTrace(executionId, entry));
  }

  async readTrace(executionId: string): Promise<TraceStep[]> {
    return this.#run(this.#operations.readTrace(executionId));
  }

  async delete(executionId: string): Promise<void> {
    return this.#run(this.#operations.delete(executionId));
  }

  /**
   * @internal The operation of contract method `method` (see sqlite/operation.ts), for a host to
   * run in its own transaction. `save` and `commit` answer the new version and leave the
   * caller's object alone: the host's copy is not the caller's.
   */
  [operation](method: string, args: readonly unknown[]): Operation {
    if (!Object.hasOwn(this.#operations, method)) throw new TypeError(`store.${method} is not a method of the contract`);
    const make = this.#operations[method as keyof StoreOperations<X>] as (...args: unknown[]) => Operation;
    return make(...args);
  }

  #run<T>(op: Operation<T>): T {
    return (op.transaction ? this.#db.transaction(op.run.bind(op, noClock)) : op.run(noClock)).value;
  }

  /** The bodies of the contract's methods: each factory checks that the store is open, then its arguments. */
  readonly #operations: StoreOperations<X> = {
    load: (id) => {
      this.#ensureOpen();
      checkId('id', id);
      return outsideTransaction(() => {
        const row = this.#sql.load.get<{ version: number; body: string }>(id);
        if (row === undefined) return unchanged(undefined);
        const exe = JSON.parse(row.body) as X;
        exe.version = row.version;
        return unchanged(exe);
      });
    },
    save: (exe) => this.#operations.commit(exe),
    commit: (exe, changes) => {
      this.#ensureOpen();
      checkExecution(exe);
      const encoded = encodeCommit(exe, checkChanges(changes));
      const expected = exe.version;
      return inTransaction(() => unchanged(this.#write(encoded, expected)));
    },
    isProcessed: (executionId, eventId) => {
      this.#ensureOpen();
      checkId('executionId', executionId);
      checkId('eventId', eventId);
      return outsideTransaction(() => unchanged(this.#sql.isProcessed.get(executionId, eventId) !== undefined));
    },
    pendingOutbox: (limit) => {
      this.#ensureOpen();
      checkLimit(limit);
      return outsideTransaction(() =>
        unchanged(
          this.#sql.readOutbox
            .all<{ seq: number; target_id: string | null; event: string }>(limit ?? ALL)
            .map((row): OutboxEntry => ({ seq: row.seq, targetId: row.target_id, event: JSON.parse(row.event) as unknown })),
        ),
      );
    },
    ackOutbox: (seq) => {
      this.#ensureOpen();
      checkSeq(seq);
      return inTransaction(() => unchanged(void this.#sql.ackOutbox.run(seq)));
    },
    pendingSpawns: (limit) => {
      this.#ensureOpen();
      checkLimit(limit);
      return outsideTransaction(() =>
        unchanged(
          this.#sql.readSpawns
            .all<{ seq: number; parent_id: string; child_id: string; root_path: string; context: string }>(limit ?? ALL)
            .map((row): SpawnEntry => ({
              seq: row.seq,
              parentId: row.parent_id,
              childId: row.child_id,
              rootPath: row.root_path,
              context: JSON.parse(row.context) as Record<string, unknown>,
            })),
        ),
      );
    },
    ackSpawn: (seq) => {
      this.#ensureOpen();
      checkSeq(seq);
      return inTransaction(() => unchanged(void this.#sql.ackSpawn.run(seq)));
    },
    dueTimers: (now) => {
      this.#ensureOpen();
      checkTime('now', now);
      return outsideTransaction(() =>
        unchanged(
          this.#sql.dueTimers
            .all<{ execution_id: string; path: string; fire_at: number }>(now)
            .map((row): DueTimer => ({ executionId: row.execution_id, path: row.path, fireAt: row.fire_at })),
        ),
      );
    },
    deleteTimer: (executionId, path, fireAt) => {
      this.#ensureOpen();
      checkId('executionId', executionId);
      checkId('path', path);
      checkTime('fireAt', fireAt);
      return inTransaction(() => unchanged(this.#sql.deleteTimerAt.run(executionId, path, fireAt) > 0));
    },
    appendTrace: (executionId, entry) => {
      this.#ensureOpen();
      checkId('executionId', executionId);
      checkObject('entry', entry);
      const step = encodeStep('entry', entry);
      return inTransaction(() => unchanged(this.#record(executionId, step)));
    },
    readTrace: (executionId) => {
      this.#ensureOpen();
      checkId('executionId', executionId);
      return outsideTransaction(() => unchanged(this.#sql.readTrace.all<{ step: string }>(executionId).map((row) => JSON.parse(row.step) as TraceStep)));
    },
    delete: (executionId) => {
      this.#ensureOpen();
      checkId('executionId', executionId);
      return inTransaction(() => {
        const sql = this.#sql;
        for (const statement of [sql.deleteExecution, sql.deleteMarks, sql.deleteTimers, sql.deleteTrace, sql.deleteCursor]) statement.run(executionId);
        return unchanged(undefined);
      });
    },
  };

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('SqliteStore');
  }

  /**
   * The body of a commit's transaction; returns the new version. Throwing anywhere rolls all
   * of it back.
   */
  #write(c: EncodedCommit, expected: number): number {
    const sql = this.#sql;
    // One upsert does the CAS: it inserts a new row, or updates only at the expected version.
    if (sql.swap.run(c.executionId, expected + 1, c.body, expected) === 0) {
      const found = sql.readVersion.get<{ version: number }>(c.executionId)!.version;
      throw new StoreConflictError(c.executionId, expected, found);
    }
    for (const emit of c.emits) sql.appendOutbox.run(emit.targetId, emit.event);
    if (c.processedEventId !== undefined) sql.mark.run(c.executionId, c.processedEventId);
    for (const op of c.timers) {
      if (op.action === 'schedule') sql.schedule.run(c.executionId, op.path, op.fireAt);
      else sql.cancel.run(c.executionId, op.path);
    }
    for (const s of c.spawns) sql.appendSpawn.run(c.executionId, s.childId, s.rootPath, s.context);
    if (c.trace !== undefined) this.#record(c.executionId, c.trace);
    return expected + 1;
  }

  /** Appends one step and trims the ring; runs inside the caller's transaction. */
  #record(executionId: string, step: EncodedStep): void {
    const sql = this.#sql;
    const position = sql.bumpCursor.get<{ next_index: number }>(executionId)!.next_index - 1;
    sql.appendStep.run(executionId, position, step.explicit ? step.json : withIndex(step.json, position));
    // Positions of one execution are contiguous, so everything at or below this one is outside the ring.
    if (this.#traceMax > 0 && position >= this.#traceMax) sql.trimTrace.run(executionId, position - this.#traceMax);
  }
}

/** Adds `"index": n` as the last key of a JSON object text, as `{ ...entry, index }` would. */
function withIndex(json: string, index: number): string {
  return json === '{}' ? `{"index":${index}}` : `${json.slice(0, -1)},"index":${index}}`;
}

function prepareStatements(db: SqlDatabase) {
  const p = (sql: string): SqlStatement => db.prepare(sql);
  return {
    load: p('SELECT version, body FROM lh_executions WHERE id = ?'),
    readVersion: p('SELECT version FROM lh_executions WHERE id = ?'),
    swap: p(
      'INSERT INTO lh_executions (id, version, body) VALUES (?, ?, ?) ' +
        'ON CONFLICT (id) DO UPDATE SET version = excluded.version, body = excluded.body WHERE lh_executions.version = ?',
    ),
    deleteExecution: p('DELETE FROM lh_executions WHERE id = ?'),
    appendOutbox: p('INSERT INTO lh_outbox (target_id, event) VALUES (?, ?)'),
    readOutbox: p('SELECT seq, target_id, event FROM lh_outbox ORDER BY seq LIMIT ?'),
    ackOutbox: p('DELETE FROM lh_outbox WHERE seq = ?'),
    mark: p('INSERT OR IGNORE INTO lh_processed (execution_id, event_id) VALUES (?, ?)'),
    isProcessed: p('SELECT 1 AS hit FROM lh_processed WHERE execution_id = ? AND event_id = ?'),
    deleteMarks: p('DELETE FROM lh_processed WHERE execution_id = ?'),
    schedule: p(
      'INSERT INTO lh_timers (execution_id, path, fire_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (execution_id, path) DO UPDATE SET fire_at = excluded.fire_at',
    ),
    cancel: p('DELETE FROM lh_timers WHERE execution_id = ? AND path = ?'),
    deleteTimerAt: p('DELETE FROM lh_timers WHERE execution_id = ? AND path = ? AND fire_at = ?'),
    dueTimers: p('SELECT execution_id, path, fire_at FROM lh_timers WHERE fire_at <= ? ORDER BY fire_at, execution_id, path'),
    deleteTimers: p('DELETE FROM lh_timers WHERE execution_id = ?'),
    appendSpawn: p('INSERT INTO lh_spawns (parent_id, child_id, root_path, context) VALUES (?, ?, ?, ?)'),
    readSpawns: p('SELECT seq, parent_id, child_id, root_path, context FROM lh_spawns ORDER BY seq LIMIT ?'),
    ackSpawn: p('DELETE FROM lh_spawns WHERE seq = ?'),
    bumpCursor: p(
      'INSERT INTO lh_trace_cursors (execution_id, next_index) VALUES (?, 1) ' +
        'ON CONFLICT (execution_id) DO UPDATE SET next_index = next_index + 1 RETURNING next_index',
    ),
    appendStep: p('INSERT INTO lh_trace (execution_id, position, step) VALUES (?, ?, ?)'),
    trimTrace: p('DELETE FROM lh_trace WHERE execution_id = ? AND position <= ?'),
    readTrace: p('SELECT step FROM lh_trace WHERE execution_id = ? ORDER BY position'),
    deleteTrace: p('DELETE FROM lh_trace WHERE execution_id = ?'),
    deleteCursor: p('DELETE FROM lh_trace_cursors WHERE execution_id = ?'),
  };
}
