/**
 * PostgresStore: the execution-store contract on PostgreSQL (a server through `fromPg`, or
 * PGlite through `fromPglite`), in the same schema as `PostgresTransport` if you like.
 */
import { ClosedError, StoreConflictError } from '../errors.js';
import { checkChanges, checkExecution, checkLimit, checkSeq, checkStoreOptions } from '../store/checks.js';
import { encodeCommit, encodeStep } from '../store/encode.js';
import type { CommitChanges, DueTimer, Execution, ExecutionStore, ExecutionStoreOptions, OutboxEntry, SpawnEntry, TraceStep } from '../store/contract.js';
import { checkId, checkObject, checkTime } from '../validate.js';
import type { PgDatabase } from './driver.js';
import { checkIndexedId, decodeId, encodeId } from './ids.js';
import { checkSchemaName, migratePostgres, quoteIdent } from './schema.js';

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions extends ExecutionStoreOptions {
  /** The schema holding leasehold's `lh_*` tables and functions (created if missing). Default `public`. */
  schema?: string;
}

/**
 * An {@link ExecutionStore} in PostgreSQL tables (`lh_executions`, `lh_outbox`, `lh_processed`,
 * `lh_timers`, `lh_spawns`, `lh_trace`, `lh_trace_cursors`).
 *
 * - The execution is stored as JSON text without its `version`, which has its own column.
 *   `load` returns a new object on every call.
 * - CAS: a write succeeds when no row exists yet or the stored version equals `exe.version`;
 *   then `exe.version` is bumped in place, after the commit. Two writers racing on one version
 *   (from any number of processes) are decided by the row: exactly one wins, the other gets a
 *   `StoreConflictError`.
 * - `commit` is one statement (one transaction): it lands whole or not at all.
 * - Executions, events, spawn contexts and trace entries must be representable as JSON (see
 *   `SqliteStore`); anything else rejects with a `TypeError` before anything is written.
 * - The schema is created or migrated on the first call; `close()` leaves `db` open.
 * - Execution ids, processed event ids and timer paths longer than `PG_MAX_ID_BYTES` (1024)
 *   bytes of UTF-8 are refused with a RangeError where they would be written: PostgreSQL
 *   indexes them.
 *
 * Server or connection failures reject with a `StorageError` (`STORAGE_UNAVAILABLE` while the
 * server cannot be reached); the store stays usable once the server is back.
 * @throws TypeError / RangeError from the constructor for a bad `db`, `traceMax` or `schema`.
 */
export class PostgresStore<X extends Execution = Execution> implements ExecutionStore<X> {
  readonly #db: PgDatabase;
  readonly #traceMax: number;
  readonly #schema: string;
  readonly #s: string;
  #ready: Promise<void> | null = null;
  #closed = false;

  constructor(db: PgDatabase, options?: PostgresStoreOptions) {
    if (typeof db !== 'object' || db === null || typeof db.query !== 'function') {
      throw new TypeError('db must be an open PgDatabase (from fromPg or fromPglite)');
    }
    this.#traceMax = checkStoreOptions(options, ['schema']);
    const schema = options?.schema ?? 'public';
    checkSchemaName(schema);
    this.#db = db;
    this.#schema = schema;
    this.#s = quoteIdent(schema);
  }

  /** Runs `text` once the schema is in place. */
  async #query<R>(text: string, params: unknown[]): Promise<R[]> {
    if (this.#closed) throw new ClosedError('PostgresStore');
    this.#ready ??= migratePostgres(this.#db, this.#schema).catch((error: unknown) => {
      this.#ready = null;
      throw error;
    });
    await this.#ready;
    return this.#db.query<R>(text, params);
  }

  async load(id: string): Promise<X | undefined> {
    this.#ensureOpen();
    checkId('id', id);
    const [row] = await this.#query<{ version: string; body: string }>(`SELECT version, body FROM ${this.#s}.lh_executions WHERE id = $1`, [encodeId(id)]);
    if (row === undefined) return undefined;
    const exe = JSON.parse(row.body) as X;
    exe.version = Number(row.version);
    return exe;
  }

  async save(exe: X): Promise<void> {
    return this.commit(exe);
  }

  async commit(exe: X, changes?: CommitChanges): Promise<void> {
    this.#ensureOpen();
    checkExecution(exe);
    const c = encodeCommit(exe, checkChanges(changes));
    checkIndexedId('exe.id', c.executionId);
    if (c.processedEventId !== undefined) checkIndexedId('changes.processedEventId', c.processedEventId);
    c.timers.forEach((t, i) => checkIndexedId(`changes.timers[${i}].path`, t.path));
    const expected = exe.version;
    const [row] = await this.#query<{ found: string | null }>(`SELECT ${this.#s}.lh_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) AS found`, [
      encodeId(c.executionId),
      expected,
      c.body,
      JSON.stringify(c.emits.map((e) => [e.targetId === null ? null : encodeId(e.targetId), e.event])),
      c.processedEventId === undefined ? null : encodeId(c.processedEventId),
      JSON.stringify(c.timers.map((t) => [encodeId(t.path), t.action === 'schedule' ? t.fireAt : null])),
      JSON.stringify(c.spawns.map((s) => [encodeId(s.childId), encodeId(s.rootPath), s.context])),
      c.trace?.json ?? null,
      c.trace?.explicit ?? false,
      this.#traceMax,
    ]);
    if (row!.found !== null) throw new StoreConflictError(exe.id, expected, Number(row!.found));
    exe.version = expected + 1;
  }

  async isProcessed(executionId: string, eventId: string): Promise<boolean> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkId('eventId', eventId);
    const rows = await this.#query(`SELECT 1 FROM ${this.#s}.lh_processed WHERE execution_id = $1 AND event_id = $2`, [encodeId(executionId), encodeId(eventId)]);
    return rows.length > 0;
  }

  async pendingOutbox(limit?: number): Promise<OutboxEntry[]> {
    this.#ensureOpen();
    checkLimit(limit);
    const rows = await this.#query<{ seq: string; target_id: string | null; event: string }>(
      `SELECT seq, target_id, event FROM ${this.#s}.lh_outbox ORDER BY seq LIMIT $1`,
      [limit ?? null],
    );
    return rows.map((r) => ({ seq: Number(r.seq), targetId: r.target_id === null ? null : decodeId(r.target_id), event: JSON.parse(r.event) as unknown }));
  }

  async ackOutbox(seq: number): Promise<void> {
    this.#ensureOpen();
    checkSeq(seq);
    await this.#query(`DELETE FROM ${this.#s}.lh_outbox WHERE seq = $1`, [seq]);
  }

  async pendingSpawns(limit?: number): Promise<SpawnEntry[]> {
    this.#ensureOpen();
    checkLimit(limit);
    const rows = await this.#query<{ seq: string; parent_id: string; child_id: string; root_path: string; context: string }>(
      `SELECT seq, parent_id, child_id, root_path, context FROM ${this.#s}.lh_spawns ORDER BY seq LIMIT $1`,
      [limit ?? null],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      parentId: decodeId(r.parent_id),
      childId: decodeId(r.child_id),
      rootPath: decodeId(r.root_path),
      context: JSON.parse(r.context) as Record<string, unknown>,
    }));
  }

  async ackSpawn(seq: number): Promise<void> {
    this.#ensureOpen();
    checkSeq(seq);
    await this.#query(`DELETE FROM ${this.#s}.lh_spawns WHERE seq = $1`, [seq]);
  }

  async dueTimers(now: number): Promise<DueTimer[]> {
    this.#ensureOpen();
    checkTime('now', now);
    const rows = await this.#query<{ execution_id: string; path: string; fire_at: number }>(
      `SELECT execution_id, path, fire_at FROM ${this.#s}.lh_timers WHERE fire_at <= $1 ORDER BY fire_at, execution_id COLLATE "C", path COLLATE "C"`,
      [now],
    );
    return rows.map((r) => ({ executionId: decodeId(r.execution_id), path: decodeId(r.path), fireAt: r.fire_at }));
  }

  async deleteTimer(executionId: string, path: string, fireAt: number): Promise<boolean> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkId('path', path);
    checkTime('fireAt', fireAt);
    const rows = await this.#query(`DELETE FROM ${this.#s}.lh_timers WHERE execution_id = $1 AND path = $2 AND fire_at = $3 RETURNING 1`, [
      encodeId(executionId), encodeId(path), fireAt,
    ]);
    return rows.length > 0;
  }

  async appendTrace(executionId: string, entry: object): Promise<void> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    checkIndexedId('executionId', executionId);
    checkObject('entry', entry);
    const step = encodeStep('entry', entry);
    await this.#query(`SELECT ${this.#s}.lh_record($1, $2, $3, $4)`, [encodeId(executionId), step.json, step.explicit, this.#traceMax]);
  }

  async readTrace(executionId: string): Promise<TraceStep[]> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    const rows = await this.#query<{ step: string }>(`SELECT step FROM ${this.#s}.lh_trace WHERE execution_id = $1 ORDER BY position`, [encodeId(executionId)]);
    return rows.map((r) => JSON.parse(r.step) as TraceStep);
  }

  async delete(executionId: string): Promise<void> {
    this.#ensureOpen();
    checkId('executionId', executionId);
    const s = this.#s;
    // One statement: the data-modifying CTEs run in one transaction.
    await this.#query(
      `WITH e AS (DELETE FROM ${s}.lh_executions WHERE id = $1), p AS (DELETE FROM ${s}.lh_processed WHERE execution_id = $1),
        t AS (DELETE FROM ${s}.lh_timers WHERE execution_id = $1), r AS (DELETE FROM ${s}.lh_trace WHERE execution_id = $1)
        DELETE FROM ${s}.lh_trace_cursors WHERE execution_id = $1`,
      [encodeId(executionId)],
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('PostgresStore');
  }
}
