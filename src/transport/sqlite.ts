/**
 * SqliteTransport: the transport contract over SQLite, through the synchronous driver seam
 * (sqlite-wasm in any runtime or the browser host, better-sqlite3 in Node).
 *
 * Every call is one `BEGIN IMMEDIATE` transaction, so calls from several connections to one
 * file serialize on SQLite's write lock and a failure rolls the whole call back.
 *
 * The claim keeps the seed's semantics but not its query. The seed's query joins and sorts every
 * queued message on each claim (24 ms at a 50k backlog in sqlite-wasm). Here the group is chosen
 * first: only a group's head is ever leased, so the lease (holder, attempt, expiry) lives on the
 * group row, and one walk of the claim-order index finds the first group whose head is free or
 * whose lock ran out; that group's head is then read by `(group_id, seq)`. The walk passes only
 * groups in flight (about one per worker; more if many groups sit parked for long), so its cost
 * does not grow with the backlog. The seed's query lives on in the tests as an oracle: both must
 * pick the same message.
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
  head_attempt: number;
  holder: string | null;
  locked_until: number | null;
}
interface MessageRow {
  group_id: string;
  seq: number;
  event: string;
  key: string | null;
}
interface DeadRow {
  seq: number;
  group_id: string;
  priority: number;
  event: string;
  attempt: number;
  dead_at: number;
}


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
    | 'findKey' | 'insertMessage' | 'insertGroup' | 'nextGroup' | 'claimGroup' | 'head' | 'buryHead' | 'deleteMessage'
    | 'ackHead' | 'releaseHead' | 'extendHead' | 'groups' | 'messages' | 'deadLetters' | 'deadLetter' | 'deleteDeadLetter'
    | 'redriveMessage',
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
    // A lease holds while the group's head is still `seq`, still at `attempt`, still held by it.
    const held = 'group_id = ? AND holder = ? AND head_attempt = ? AND ? = (SELECT seq FROM lh_messages WHERE group_id = ? ORDER BY seq LIMIT 1)';
    this.#sql = {
      findKey: p('SELECT seq FROM lh_messages WHERE group_id = ? AND key = ?'),
      insertMessage: p('INSERT INTO lh_messages (group_id, seq, event, key) SELECT ?, last_seq + 1, ?, ? FROM lh_counters WHERE id = 1 RETURNING seq'),
      insertGroup: p('INSERT OR IGNORE INTO lh_groups (group_id, priority, first_seq) VALUES (?, ?, ?)'),
      nextGroup: p(nextGroup),
      // One statement picks the group in round-robin order and leases its head, unless the head
      // already had maxAttempts deliveries (then no row comes back).
      claimGroup: p(
        'UPDATE lh_groups SET holder = ?, locked_until = ?, head_attempt = head_attempt + 1, ' +
          'claim_order = (SELECT claims + 1 FROM lh_counters WHERE id = 1) ' +
          `WHERE group_id = (SELECT group_id FROM (${nextGroup})) AND head_attempt < ? RETURNING group_id, head_attempt`,
      ),
      head: p('SELECT seq, event FROM lh_messages WHERE group_id = ? ORDER BY seq LIMIT 1'),
      buryHead: p(
        'INSERT INTO lh_dead_letters (seq, group_id, priority, event, attempt, dead_at) ' +
          'SELECT m.seq, m.group_id, g.priority, m.event, g.head_attempt, ? FROM lh_messages m JOIN lh_groups g ON g.group_id = m.group_id ' +
          'WHERE m.group_id = ? AND m.seq = ?',
      ),
      deleteMessage: p('DELETE FROM lh_messages WHERE group_id = ? AND seq = ?'),
      ackHead: p(
        'DELETE FROM lh_messages WHERE group_id = ? AND seq = ? ' +
          'AND EXISTS (SELECT 1 FROM lh_groups WHERE group_id = ? AND holder = ? AND head_attempt = ?) ' +
          'AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE group_id = ? AND seq < ?)',
      ),
      releaseHead: p(`UPDATE lh_groups SET holder = NULL, locked_until = ? WHERE ${held}`),
      extendHead: p(`UPDATE lh_groups SET locked_until = ? WHERE ${held}`),
      groups: p('SELECT group_id, priority, claim_order, head_attempt, holder, locked_until FROM lh_groups ORDER BY claim_order, first_seq'),
      messages: p('SELECT group_id, seq, event, key FROM lh_messages ORDER BY seq'),
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
    const { groupId, seq, attempt, workerId } = lease;
    if (this.#sql.ackHead.run(groupId, seq, groupId, workerId, attempt, groupId, seq) === 0) throw lost(lease);
  }

  /** The body of claim, inside the caller's transaction. */
  #claim(workerId: string, visibilityMs: number, minPriority: number): Lease<E> | null {
    const sql = this.#sql;
    const now = readClock(this.#clock);
    const expiresAt = now + visibilityMs;
    for (;;) {
      const leased = sql.claimGroup.get<{ group_id: string; head_attempt: number }>(workerId, expiresAt, minPriority, now, this.#maxAttempts);
      if (leased) {
        const head = sql.head.get<{ seq: number; event: string }>(leased.group_id)!;
        return { seq: head.seq, groupId: leased.group_id, event: JSON.parse(head.event) as E, workerId, attempt: leased.head_attempt, expiresAt };
      }
      const group = sql.nextGroup.get<{ group_id: string }>(minPriority, now);
      if (!group) return null;
      // Poison message: out of its group, which keeps its place in the round-robin order.
      const { seq } = sql.head.get<{ seq: number }>(group.group_id)!;
      sql.buryHead.run(now, group.group_id, seq);
      sql.deleteMessage.run(group.group_id, seq);
    }
  }

  async nack(lease: Lease<E>, delayMs = 0): Promise<void> {
    checkLease(lease);
    checkDuration('delayMs', delayMs, false);
    this.#ensureOpen();
    this.#db.transaction(() => {
      const until = delayMs === 0 ? null : readClock(this.#clock) + delayMs;
      if (this.#sql.releaseHead.run(until, ...heldBy(lease)) === 0) throw lost(lease);
    });
    this.#listeners.notify();
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    checkLease(lease);
    checkDuration('visibilityMs', visibilityMs, true);
    this.#ensureOpen();
    return this.#db.transaction(() => {
      const expiresAt = readClock(this.#clock) + visibilityMs;
      if (this.#sql.extendHead.run(expiresAt, ...heldBy(lease)) === 0) throw lost(lease);
      return { ...lease, expiresAt };
    });
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    this.#ensureOpen();
    const sql = this.#sql;
    return this.#db.transaction(() => {
      const now = readClock(this.#clock);
      const groups = new Map<string, { snapshot: GroupSnapshot<E>; row: GroupRow }>();
      for (const row of sql.groups.all<GroupRow>()) {
        groups.set(row.group_id, {
          row,
          snapshot: {
            groupId: row.group_id,
            priority: row.priority,
            claimOrder: row.claim_order,
            inFlight: row.locked_until !== null && row.locked_until >= now,
            messages: [],
          },
        });
      }
      for (const row of sql.messages.all<MessageRow>()) {
        const { snapshot, row: group } = groups.get(row.group_id)!;
        // The head carries the group's lease; every later message is untouched.
        const isHead = snapshot.messages.length === 0;
        snapshot.messages.push(snapshotOf<E>(row, isHead ? group : undefined, now));
      }
      return { now, groups: [...groups.values()].map((g) => g.snapshot), deadLetters: sql.deadLetters.all<DeadRow>().map(deadLetterOf<E>) };
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

/** The parameters of the "lease still holds" condition. */
function heldBy(lease: Lease<unknown>): [string, string, number, number, string] {
  return [lease.groupId, lease.workerId, lease.attempt, lease.seq, lease.groupId];
}

function lost(lease: Lease<unknown>): LeaseLostError {
  return new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
}

function snapshotOf<E>(row: MessageRow, lease: GroupRow | undefined, now: number): MessageSnapshot<E> {
  const holder = lease?.holder ?? null;
  const expiry = lease?.locked_until ?? null;
  const state = messageState(holder, expiry, now);
  return {
    seq: row.seq,
    groupId: row.group_id,
    event: JSON.parse(row.event) as E,
    state,
    attempt: lease?.head_attempt ?? 0,
    holder,
    expiresAt: state === 'ready' ? null : expiry,
    key: row.key,
  };
}

function deadLetterOf<E>(row: DeadRow): DeadLetter<E> {
  return { seq: row.seq, groupId: row.group_id, priority: row.priority, event: JSON.parse(row.event) as E, attempt: row.attempt, deadAt: row.dead_at };
}
