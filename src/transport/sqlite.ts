/**
 * SqliteTransport: the transport contract over SQLite, through the synchronous driver seam
 * (sqlite-wasm in any runtime or the browser host, better-sqlite3 in Node).
 *
 * Every call is one `BEGIN IMMEDIATE` transaction, so calls from several connections to one
 * file serialize on SQLite's write lock and a failure rolls the whole call back.
 *
 * The claim keeps the seed's semantics but not its query. The seed's query joins and sorts every
 * queued message on each claim (24 ms at a 50k backlog in sqlite-wasm). Here the group is chosen
 * first, from `lh_groups` (which mirrors its head's lock in `locked_until`), through two small
 * index scans — free groups in round-robin order, and groups whose lock ran out — and then that
 * group's head is read by `(group_id, seq)`. Neither step grows with the backlog. The seed's
 * query lives on in the tests as an oracle: both must pick the same message.
 */
import { ClosedError, LeaseholdError, LeaseLostError } from '../errors.js';
import type { SqlDatabase, SqlStatement } from '../sqlite/driver.js';
import { migrate } from '../sqlite/schema.js';
import { checkDuration, readClock, toJson } from '../validate.js';
import { checkClaim, checkLease, checkPublish, checkSeq, checkTransportOptions, messageState } from './shared.js';
import { Listeners } from './notifier.js';
import type {
  ChangeNotifier,
  ClaimOptions,
  DeadLetter,
  GroupSnapshot,
  Lease,
  MessageSnapshot,
  PublishOptions,
  Transport,
  TransportOptions,
  TransportSnapshot,
} from './contract.js';

interface GroupRow {
  group_id: string;
  priority: number;
  claim_order: number;
  first_seq: number;
}
interface HeadRow {
  seq: number;
  event: string;
  attempt: number;
}
interface MessageRow {
  seq: number;
  group_id: string;
  event: string;
  key: string | null;
  attempt: number;
  locked_by: string | null;
  lock_expiry: number | null;
}
interface DeadRow {
  seq: number;
  group_id: string;
  priority: number;
  event: string;
  attempt: number;
  dead_at: number;
}

const LEASE_MATCH = 'group_id = ? AND seq = ? AND attempt = ? AND locked_by = ?';

/**
 * The SQLite transport. Stores each event as JSON and returns parsed copies; an event JSON
 * cannot carry faithfully (a cycle, a BigInt, a function, `undefined`, NaN, a Map…) is rejected
 * with a TypeError before anything is written.
 *
 * Creates or migrates its tables (`lh_*`) in `db` on construction. `close()` does not close
 * `db`: whoever opened it (and may share it with a `SqliteStore`) closes it.
 *
 * Each changing call runs at most one transaction, and its body returns the call's result: the
 * browser host journals that value in the same transaction, so a call retried after its answer
 * was lost is answered from the journal, never applied twice.
 */
export class SqliteTransport<E = unknown> implements Transport<E>, ChangeNotifier {
  readonly #db: SqlDatabase;
  readonly #clock: () => number;
  readonly #maxAttempts: number;
  readonly #sql: Record<
    | 'findKey' | 'insertMessage' | 'insertGroup' | 'nextGroup' | 'headSeq' | 'claimNext'
    | 'buryMessage' | 'deleteMessage' | 'releaseMessage' | 'ackMessage'
    | 'extendMessage' | 'groups' | 'messages' | 'deadLetters' | 'deadLetter' | 'deleteDeadLetter' | 'redriveMessage',
    SqlStatement
  >;
  #closed = false;
  readonly #listeners = new Listeners();

  /**
   * @param db an open database (see `openWasmDatabase`, `openBetterSqliteDatabase`, the browser host).
   * @param options `clock` (default `Date.now`) and `maxAttempts` (default unlimited).
   * @throws TypeError / RangeError for a bad option; StorageError if the schema cannot be created.
   */
  constructor(db: SqlDatabase, options?: TransportOptions) {
    const { clock, maxAttempts } = checkTransportOptions(options);
    if (typeof db !== 'object' || db === null || typeof db.prepare !== 'function') {
      throw new TypeError('db must be an open SqlDatabase (from openWasmDatabase, openBetterSqliteDatabase or the browser host)');
    }
    this.#db = db;
    this.#clock = clock;
    // SQLite compares against a bound integer; 'unlimited' becomes the largest safe one.
    this.#maxAttempts = Math.min(maxAttempts, Number.MAX_SAFE_INTEGER);
    migrate(db);
    const p = (sql: string) => db.prepare(sql);
    // Free groups and groups whose lease or park ran out, in round-robin order.
    const nextGroup =
      'SELECT group_id, priority FROM lh_groups WHERE priority >= ? AND (locked_until IS NULL OR locked_until < ?) ' +
      'ORDER BY claim_order, first_seq LIMIT 1';
    this.#sql = {
      findKey: p('SELECT seq FROM lh_messages WHERE group_id = ? AND key = ?'),
      insertMessage: p('INSERT INTO lh_messages (group_id, seq, event, key) SELECT ?, last_seq + 1, ?, ? FROM lh_counters WHERE id = 1 RETURNING seq'),
      insertGroup: p('INSERT OR IGNORE INTO lh_groups (group_id, priority, first_seq) VALUES (?, ?, ?)'),
      nextGroup: p(nextGroup),
      headSeq: p('SELECT seq FROM lh_messages WHERE group_id = ? ORDER BY seq LIMIT 1'),
      claimNext: p(
        `WITH head AS (SELECT group_id, seq FROM lh_messages WHERE group_id = (SELECT group_id FROM (${nextGroup})) ORDER BY seq LIMIT 1) ` +
          'UPDATE lh_messages SET locked_by = ?, lock_expiry = ?, attempt = attempt + 1 ' +
          'WHERE group_id = (SELECT group_id FROM head) AND seq = (SELECT seq FROM head) AND attempt < ? RETURNING seq, group_id, event, attempt',
      ),
      buryMessage: p(
        'INSERT INTO lh_dead_letters (seq, group_id, priority, event, attempt, dead_at) SELECT seq, group_id, ?, event, attempt, ? FROM lh_messages WHERE group_id = ? AND seq = ?',
      ),
      deleteMessage: p('DELETE FROM lh_messages WHERE group_id = ? AND seq = ?'),
      releaseMessage: p(`UPDATE lh_messages SET locked_by = NULL, lock_expiry = ? WHERE ${LEASE_MATCH}`),
      ackMessage: p(`DELETE FROM lh_messages WHERE ${LEASE_MATCH}`),
      extendMessage: p(`UPDATE lh_messages SET lock_expiry = ? WHERE ${LEASE_MATCH}`),
      groups: p('SELECT group_id, priority, claim_order, first_seq, locked_until FROM lh_groups ORDER BY claim_order, first_seq'),
      messages: p('SELECT seq, group_id, event, key, attempt, locked_by, lock_expiry FROM lh_messages ORDER BY seq'),
      deadLetters: p('SELECT seq, group_id, priority, event, attempt, dead_at FROM lh_dead_letters ORDER BY id'),
      deadLetter: p('SELECT seq, group_id, priority, event, attempt, dead_at FROM lh_dead_letters WHERE seq = ?'),
      deleteDeadLetter: p('DELETE FROM lh_dead_letters WHERE seq = ?'),
      redriveMessage: p('INSERT INTO lh_messages (group_id, seq, event) SELECT ?, last_seq + 1, ? FROM lh_counters WHERE id = 1 RETURNING seq'),
    };
  }

  async publish(groupId: string, event: E, options?: PublishOptions): Promise<number> {
    const { priority, key } = checkPublish(groupId, options);
    const json = toJson('event', event);
    this.#ensureOpen();
    const sql = this.#sql;
    const seq = this.#db.transaction(() => {
      if (key !== null) {
        const existing = sql.findKey.get<{ seq: number }>(groupId, key);
        if (existing) return existing.seq;
      }
      const { seq } = sql.insertMessage.get<{ seq: number }>(groupId, json, key)!;
      sql.insertGroup.run(groupId, priority, seq);
      return seq;
    });
    this.#listeners.notify();
    return seq;
  }

  async claim(workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    const minPriority = checkClaim(workerId, visibilityMs, options);
    this.#ensureOpen();
    return this.#db.transaction(() => this.#claim(workerId, visibilityMs, minPriority));
  }

  async ack(lease: Lease<E>): Promise<void> {
    checkLease(lease);
    this.#ensureOpen();
    this.#db.transaction(() => this.#ack(lease));
    this.#listeners.notify();
  }

  async ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    checkLease(lease);
    const minPriority = checkClaim(workerId, visibilityMs, options);
    this.#ensureOpen();
    const next = this.#db.transaction(() => {
      this.#ack(lease);
      return this.#claim(workerId, visibilityMs, minPriority);
    });
    this.#listeners.notify();
    return next;
  }

  /** The body of ack, inside the caller's transaction. */
  #ack(lease: Lease<E>): void {
    if (this.#sql.ackMessage.run(...leaseKey(lease)) === 0) throw lost(lease);
  }

  /** The body of claim, inside the caller's transaction. */
  #claim(workerId: string, visibilityMs: number, minPriority: number): Lease<E> | null {
    const sql = this.#sql;
    const now = readClock(this.#clock);
    for (;;) {
      const expiresAt = now + visibilityMs;
      // One statement picks the group, then its head, and leases it, unless the head already
      // had maxAttempts deliveries.
      const head = sql.claimNext.get<HeadRow & { group_id: string }>(minPriority, now, workerId, expiresAt, this.#maxAttempts);
      if (head) return { seq: head.seq, groupId: head.group_id, event: JSON.parse(head.event) as E, workerId, attempt: head.attempt, expiresAt };
      const group = sql.nextGroup.get<GroupRow>(minPriority, now);
      if (!group) return null;
      // Poison message: out of its group, which keeps its place in the round-robin order.
      const { seq } = sql.headSeq.get<{ seq: number }>(group.group_id)!;
      sql.buryMessage.run(group.priority, now, group.group_id, seq);
      sql.deleteMessage.run(group.group_id, seq);
    }
  }

  async nack(lease: Lease<E>, delayMs = 0): Promise<void> {
    checkLease(lease);
    checkDuration('delayMs', delayMs, false);
    this.#ensureOpen();
    this.#db.transaction(() => {
      const until = delayMs === 0 ? null : readClock(this.#clock) + delayMs;
      if (this.#sql.releaseMessage.run(until, ...leaseKey(lease)) === 0) throw lost(lease);
    });
    this.#listeners.notify();
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    checkLease(lease);
    checkDuration('visibilityMs', visibilityMs, true);
    this.#ensureOpen();
    return this.#db.transaction(() => {
      const expiresAt = readClock(this.#clock) + visibilityMs;
      if (this.#sql.extendMessage.run(expiresAt, ...leaseKey(lease)) === 0) throw lost(lease);
      return { ...lease, expiresAt };
    });
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    this.#ensureOpen();
    const sql = this.#sql;
    return this.#db.transaction(() => {
      const now = readClock(this.#clock);
      const groups = new Map<string, GroupSnapshot<E>>();
      for (const row of sql.groups.all<GroupRow & { locked_until: number | null }>()) {
        groups.set(row.group_id, {
          groupId: row.group_id,
          priority: row.priority,
          claimOrder: row.claim_order,
          inFlight: row.locked_until !== null && row.locked_until >= now,
          messages: [],
        });
      }
      for (const row of sql.messages.all<MessageRow>()) groups.get(row.group_id)!.messages.push(snapshotOf<E>(row, now));
      return { now, groups: [...groups.values()], deadLetters: sql.deadLetters.all<DeadRow>().map(deadLetterOf<E>) };
    });
  }

  async deadLetters(): Promise<DeadLetter<E>[]> {
    this.#ensureOpen();
    return this.#sql.deadLetters.all<DeadRow>().map(deadLetterOf<E>);
  }

  async redrive(seq: number): Promise<number> {
    checkSeq(seq);
    this.#ensureOpen();
    const sql = this.#sql;
    const newSeq = this.#db.transaction(() => {
      const letter = sql.deadLetter.get<DeadRow>(seq);
      if (!letter) throw new LeaseholdError('NOT_FOUND', `message ${seq} is not a dead letter`);
      sql.deleteDeadLetter.run(seq);
      const { seq: newSeq } = sql.redriveMessage.get<{ seq: number }>(letter.group_id, letter.event)!;
      sql.insertGroup.run(letter.group_id, letter.priority, newSeq);
      return newSeq;
    });
    this.#listeners.notify();
    return newSeq;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
  }

  /**
   * Calls `listener` (on a microtask) after a publish, ack, nack or redrive through this object.
   * Changes made by other connections to the same database raise no notice: poll for those.
   */
  onChange(listener: () => void): () => void {
    return this.#listeners.add(listener);
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('transport');
  }
}

function leaseKey(lease: Lease<unknown>): [string, number, number, string] {
  return [lease.groupId, lease.seq, lease.attempt, lease.workerId];
}

function lost(lease: Lease<unknown>): LeaseLostError {
  return new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
}

function snapshotOf<E>(row: MessageRow, now: number): MessageSnapshot<E> {
  const state = messageState(row.locked_by, row.lock_expiry, now);
  return {
    seq: row.seq,
    groupId: row.group_id,
    event: JSON.parse(row.event) as E,
    state,
    attempt: row.attempt,
    holder: row.locked_by,
    expiresAt: state === 'ready' ? null : row.lock_expiry,
    key: row.key,
  };
}

function deadLetterOf<E>(row: DeadRow): DeadLetter<E> {
  return { seq: row.seq, groupId: row.group_id, priority: row.priority, event: JSON.parse(row.event) as E, attempt: row.attempt, deadAt: row.dead_at };
}
