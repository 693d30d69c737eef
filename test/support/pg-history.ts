/**
 * A commit-ordered history of truly concurrent PostgresTransport clients, for the history
 * checker. Clients on many connections and processes see their calls complete in an order
 * unrelated to the order they committed in, so their own reports cannot be ordered. Instead a
 * test wraps their database with {@link recorded}: every transport call then also writes, in
 * the same statement (so the same transaction), a row to `lh_test_log` with its arguments, its
 * result and a number from the sequence `lh_test_order` drawn after the call's function ran —
 * while the call still holds its group's row lock, which it keeps until its commit. Two calls on
 * one group therefore get numbers in their commit order, which is all the checker compares.
 * A call cut off by a SIGKILL or a server crash is in the log exactly when it committed.
 */
import type { PgDatabase, PgRow } from '../../src/postgres/driver.js';
import { decodeId } from '../../src/postgres/ids.js';
import { quoteIdent } from '../../src/postgres/schema.js';
import type { HistoryEntry } from './history.js';

/** The calls the history is made of; other statements (opening the queue, stats, inspect) pass unrecorded. */
const logged = /\.lh_(publish|publish_many|claim|claim_one|claim_many|ack|ack_claim|ack_claim_one|ack_many|ack_claim_many|release|extend)\(/;
/** Schema 11's single claims return the same rows (and the counter and mark) as the ones they stand for. */
const sameAs: Record<string, string> = { claim_one: 'claim', ack_claim_one: 'ack_claim' };

/** Creates the log table and order sequence in `schema` (whose transport tables must exist). */
export async function createLog(db: PgDatabase, schema: string): Promise<void> {
  const s = quoteIdent(schema);
  await db.query(`CREATE SEQUENCE IF NOT EXISTS ${s}.lh_test_order`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${s}.lh_test_log (at bigint PRIMARY KEY, ms double precision NOT NULL, fn text NOT NULL, params json NOT NULL, rows json NOT NULL)`);
}

/** `db` with every transport call logged with its commit order (see the file comment). */
export function recorded(db: PgDatabase, schema: string): PgDatabase {
  const s = quoteIdent(schema);
  return {
    ...db,
    label: db.label,
    query<R = PgRow>(text: string, params: readonly unknown[] = []) {
      const called = logged.exec(text)?.[1];
      if (!called) return db.query<R>(text, params);
      const fn = sameAs[called] ?? called;
      const n = params.length;
      // A claim that found nothing changed nothing: not logged (idle workers poll).
      const keepEmpty = !fn.startsWith('claim');
      return db.query<R>(
        `WITH r AS MATERIALIZED (${text}),
          l AS (INSERT INTO ${s}.lh_test_log (at, ms, fn, params, rows)
            SELECT nextval('${s}.lh_test_order'), floor(extract(epoch FROM clock_timestamp()) * 1000), $${n + 1}, $${n + 2}::json, a.rows
            FROM (SELECT count(*) AS n, coalesce(json_agg(r), '[]'::json) AS rows FROM r) a WHERE a.n > 0 OR $${n + 3}::boolean)
        SELECT * FROM r`,
        [...params, fn, JSON.stringify(params), keepEmpty],
      );
    },
  };
}

interface LogRow {
  at: string;
  /** The server's clock as the row was written: after the call's function ran, before its commit. */
  ms: number;
  fn: string;
  params: unknown[];
  rows: Record<string, unknown>[];
}

/**
 * The history the log holds, in commit order. A claim's time is one by which its lease was
 * certainly granted: the server's clock as its log row was written, after the call's function
 * ran. Not the lease's own start (its expiry minus its visibility): a batch dates every lease it
 * takes by one clock reading at its start, and a later claim of the batch may take a group only
 * after another worker has taken it (once that worker's lease ran out) and given it back since,
 * so that reading can be older than the lease before it. The checker compares claim times only
 * with earlier leases' expiries, to end the leases that ran out.
 */
export async function historyFromLog(db: PgDatabase, schema: string): Promise<HistoryEntry[]> {
  const s = quoteIdent(schema);
  const log = await db.query<LogRow>(`SELECT at, ms, fn, params, rows FROM ${s}.lh_test_log ORDER BY at`);
  const history: HistoryEntry[] = [];
  for (const { at, ms, fn, params: p, rows } of log) {
    const t = Number(at);
    const claim = (row: Record<string, unknown>, worker: unknown, visibility: unknown) => {
      const expiresAt = Number(row.o_expires);
      const granted = Math.max(expiresAt - Number(visibility), Number(ms));
      history.push({ op: 'claim', seq: Number(row.o_seq), groupId: decodeId(String(row.o_group)), attempt: Number(row.o_attempt), worker: decodeId(String(worker)), t: granted, expiresAt });
    };
    const held = (o: number) => ({ seq: Number(p[o + 1]), attempt: Number(p[o + 2]), worker: decodeId(String(p[o + 3])) });
    // A batch of acks: the leases as passed ([[group, seq, attempt, worker], …]), one letter each ('t' acked).
    const acks = (leasesJson: unknown, done: unknown) => {
      const leases = JSON.parse(String(leasesJson)) as [string, number, number, string][];
      leases.forEach(([, seq, attempt, worker], i) => history.push({ op: 'ack', seq, attempt, worker: decodeId(worker), t, ok: String(done)[i] === 't' }));
    };
    switch (fn) {
      case 'publish':
        history.push({ op: 'publish', seq: Number(rows[0]!.seq), groupId: decodeId(String(p[2])), t });
        break;
      case 'publish_many': {
        const items = JSON.parse(String(p[2])) as [string][];
        rows.forEach((row, i) => history.push({ op: 'publish', seq: Number(row.o_seq), groupId: decodeId(items[i]![0]), t }));
        break;
      }
      case 'claim':
      case 'claim_many':
        for (const row of rows) claim(row, p[2], p[3]);
        break;
      case 'ack':
        history.push({ op: 'ack', ...held(1), t, ok: rows[0]!.ok === true });
        break;
      case 'ack_claim': {
        const lost = rows[0]?.o_lost === true;
        history.push({ op: 'ack', ...held(2), t, ok: !lost });
        if (!lost && rows[0]) claim(rows[0], p[6], p[7]);
        break;
      }
      case 'ack_many':
        acks(p[1], rows[0]!.done);
        break;
      // The acks' outcome in the first row, then the leases claimed after them (one transaction).
      case 'ack_claim_many':
        acks(p[2], rows[0]!.o_done);
        for (const row of rows.slice(1)) claim(row, p[3], p[4]);
        break;
      case 'release':
        history.push({ op: 'nack', ...held(1), t, ok: rows[0]!.ok === true, delay: Number(p[5]) });
        break;
      case 'extend': {
        const until = rows[0]!.until;
        history.push({ op: 'extend', ...held(1), t, ok: until !== null, ...(until !== null ? { expiresAt: Number(until) } : {}) });
        break;
      }
    }
  }
  return history;
}
