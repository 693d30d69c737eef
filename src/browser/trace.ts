/**
 * SQL tracing for teaching: the statements the owner ran for the last claims and acks, with
 * their parameters and results, and the queue's `lh_groups` rows just before and just after each
 * call. `openBrowserDatabase({ traceSql: true })` turns it on; the demo's SQL panel reads it.
 *
 * Why here, as an opt-in wrapper, and not a hook inside the SQL backends: the backends are the
 * hot path of every app, and a tracer there would cost a branch per statement for everyone. This
 * wraps the owner's `SqlDatabase` only when asked: with tracing off nothing is wrapped and
 * HostCore serves calls exactly as before. It records the real statements of the real database
 * (OPFS or memory), group commit included, which a separate demo-only database could not show.
 * @internal
 */
import type { SqlDatabase, SqlRow, SqlStatement, SqlValue } from '../sqlite/driver.js';
import type { CallTracer, HostedCall } from '../remote/host.js';
import type { TransportMethod } from '../remote/methods.js';

/** One statement as run: its SQL, its bound parameters, and what it returned. */
export interface SqlTraceStatement {
  sql: string;
  params: SqlValue[];
  /**
   * `run`: rows changed; `get`: the row (or null); `all`: how many rows came back, and the row
   * when exactly one did (a claim's UPDATE … RETURNING is run with `all`). Absent for transaction control.
   */
  changes?: number;
  row?: SqlRow | null;
  rows?: number;
}

/** A row of `lh_groups` (the queue's id left out). */
export interface SqlGroupRow {
  group_id: string;
  priority: number;
  claim_order: number;
  first_seq: number;
  head_attempt: number;
  holder: string | null;
  locked_until: number | null;
}

/** One traced transport call: a claim, an ack or a nack, in any of their forms. */
export interface SqlTraceEntry {
  /** The contract method: `claim`, `claimMany`, `ack`, `ackMany`, `ackAndClaim`, `ackAndClaimMany` or `nack`. */
  method: string;
  queue: string;
  /** The caller's clock reading, which the call's SQL binds as `now`. */
  at: number;
  /** `'batch'`: under a SAVEPOINT inside a transaction shared with the calls queued alongside (group commit); `'own'`: its own `BEGIN IMMEDIATE … COMMIT`. */
  transaction: 'batch' | 'own';
  statements: SqlTraceStatement[];
  /**
   * The queue's groups in claim order (the order the claim walks them), before and after the
   * call: the first {@link ROWS_SHOWN} of each plus every row the call changed; `total` counts all.
   */
  groups: { before: SqlGroupRow[]; after: SqlGroupRow[]; total: number };
  /** Null when the call succeeded, else its error (a refused late ack: LeaseLostError). */
  error: { name: string; message: string } | null;
}

/** The calls the SQL panel shows: every form of claim, ack and nack. */
const TRACED: ReadonlySet<string> = new Set(['claim', 'claimMany', 'ack', 'ackMany', 'ackAndClaim', 'ackAndClaimMany', 'nack'] satisfies TransportMethod[]);
/** Entries kept: enough to find the last claim and the last ack among a busy batch. */
const KEEP = 24;
/** How many of a queue's groups a {@link SqlTraceEntry} shows before and after its call, besides the rows the call changed. */
export const ROWS_SHOWN = 24;
const LONG = 160;

export class SqlTracer implements CallTracer {
  #open: SqlTraceStatement[] | null = null;
  readonly #entries: SqlTraceEntry[] = [];
  #groups: SqlStatement | undefined;
  #raw: SqlDatabase | undefined;
  #inTransaction = false;

  /** The database as HostCore should use it: the same connection, its statements recorded while a traced call runs. */
  wrap(db: SqlDatabase): SqlDatabase {
    this.#raw = db;
    const wrapped: SqlDatabase = {
      filename: db.filename,
      get closed() {
        return db.closed;
      },
      prepare: (sql) => this.#statement(sql, db.prepare(sql)),
      exec: (sql) => db.exec(sql),
      close: () => db.close(),
      schemaVersion: (component) => db.schemaVersion(component),
      setSchemaVersion: (component, version) => db.setSchemaVersion(component, version),
      transaction: (body) => {
        this.#push('BEGIN IMMEDIATE');
        this.#inTransaction = true;
        try {
          const result = db.transaction(body);
          this.#push('COMMIT');
          return result;
        } catch (error) {
          this.#push('ROLLBACK');
          throw error;
        } finally {
          this.#inTransaction = false;
        }
      },
    };
    if (db.savepoint) {
      const savepoint = db.savepoint.bind(db);
      wrapped.savepoint = (body) => {
        this.#push('SAVEPOINT lh_call');
        try {
          const result = savepoint(body);
          this.#push('RELEASE lh_call');
          return result;
        } catch (error) {
          this.#push('ROLLBACK TO lh_call; RELEASE lh_call');
          throw error;
        }
      };
    }
    return wrapped;
  }

  /**
   * Runs one call through `apply`, recording it if it is a claim, ack or nack. The backends do
   * all their SQL synchronously inside `apply`, so everything recorded is this call's.
   */
  around<T>(call: HostedCall, apply: () => T): T {
    if (call.target !== 'transport' || !TRACED.has(call.method) || this.#open) return apply();
    const queue = call.queue ?? 'default';
    const before = this.#readGroups(queue);
    const statements: SqlTraceStatement[] = [];
    const transaction = this.#inTransaction ? 'batch' : 'own';
    const entry: SqlTraceEntry = { method: call.method, queue, at: call.now, transaction, statements, groups: { before: [], after: [], total: 0 }, error: null };
    this.#open = statements;
    try {
      return apply();
    } catch (error) {
      entry.error = { name: (error as Error)?.name ?? 'Error', message: (error as Error)?.message ?? String(error) };
      throw error;
    } finally {
      this.#open = null;
      entry.groups = shown(before, this.#readGroups(queue));
      this.#entries.push(entry);
      if (this.#entries.length > KEEP) this.#entries.shift();
    }
  }

  /** The recorded calls, oldest first. */
  entries(): SqlTraceEntry[] {
    return this.#entries.slice();
  }

  #readGroups(queue: string): SqlGroupRow[] {
    // Prepared on the unwrapped connection, so the tracer's own reads are never recorded.
    this.#groups ??= this.#raw!.prepare(
      'SELECT group_id, priority, claim_order, first_seq, head_attempt, holder, locked_until FROM lh_groups ' +
        'WHERE queue_id = (SELECT queue_id FROM lh_counters WHERE name = ?) ORDER BY claim_order, first_seq',
    );
    return this.#groups.all<SqlGroupRow>(queue);
  }

  #push(sql: string, params: SqlValue[] = [], result: Partial<SqlTraceStatement> = {}): void {
    this.#open?.push({ sql, params: params.map(trim), ...result });
  }

  #statement(sql: string, statement: SqlStatement): SqlStatement {
    return {
      run: (...params) => {
        const changes = statement.run(...params);
        this.#push(sql, params, { changes });
        return changes;
      },
      get: <T>(...params: SqlValue[]) => {
        const row = statement.get<T>(...params);
        this.#push(sql, params, { row: row === undefined ? null : trimRow(row as SqlRow) });
        return row;
      },
      all: <T>(...params: SqlValue[]) => {
        const rows = statement.all<T>(...params);
        this.#push(sql, params, rows.length === 1 ? { rows: 1, row: trimRow(rows[0] as SqlRow) } : { rows: rows.length });
        return rows;
      },
    };
  }
}

/** The rows worth showing: the head of the claim order, and every row the call changed. */
function shown(before: SqlGroupRow[], after: SqlGroupRow[]): SqlTraceEntry['groups'] {
  const old = new Map(before.map((row) => [row.group_id, row]));
  const keep = new Set([...before.slice(0, ROWS_SHOWN), ...after.slice(0, ROWS_SHOWN)].map((row) => row.group_id));
  for (const row of after) if (!same(old.get(row.group_id), row)) keep.add(row.group_id);
  const now = new Set(after.map((row) => row.group_id));
  for (const row of before) if (!now.has(row.group_id)) keep.add(row.group_id);
  return { before: before.filter((row) => keep.has(row.group_id)), after: after.filter((row) => keep.has(row.group_id)), total: before.length };
}

function same(a: SqlGroupRow | undefined, b: SqlGroupRow): boolean {
  return !!a && (Object.keys(b) as (keyof SqlGroupRow)[]).every((key) => a[key] === b[key]);
}

function trim(value: SqlValue): SqlValue {
  return typeof value === 'string' && value.length > LONG ? `${value.slice(0, LONG - 1)}…` : value;
}

function trimRow(row: SqlRow): SqlRow {
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, trim(value)]));
}
