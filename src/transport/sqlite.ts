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
 *
 * The SQL is source of its own: every statement in `sqlite/sql/transport.ts` (the claim first),
 * the tables in `sqlite/sql/tables.ts`, the triggers in `sqlite/sql/triggers.ts`. The read side
 * (stats, inspect) is in `sqlite/snapshot.ts` beside this file.
 *
 * Several named queues share the tables: every key leads with the queue's name, so a call
 * touches only its own queue's index ranges.
 */
import { ClosedError, LeaseholdError, LeaseLostError } from '../errors.js';
import type { SqlDatabase, SqlStatement } from '../sqlite/driver.js';
import { migrate } from '../sqlite/schema.js';
import { batchAck, batchLease, CREATE_QUEUE, ORIGIN, QUEUE_BY_NAME, SET_QUEUE_POLICY, TRANSPORT_STATEMENTS, type TransportStatement } from '../sqlite/sql/transport.js';
import { BLOCKED } from '../locks.js';
import { checkDuration, checkId, checkJsonBytes, readClock, toJson } from '../validate.js';
import {
  checkClaim,
  checkClaimMany,
  checkLease,
  checkLeases,
  checkPublish,
  checkReason,
  checkPublishItems,
  checkSeq,
  checkTransportOptions,
  deliveryId,
  mergePatch,
  rearm,
  checkRemoveOptions,
  leasedError,
  removedOf,
  neverIssued,
  sameJson,
  type PublishArgs,
  checkQueuePolicy,
} from './shared.js';
import { Listeners } from './notifier.js';
import { deadLetterOf, type DeadRow, readGroup, readSnapshot, readStats } from './sqlite/snapshot.js';
import { changed, inTransaction, type Operation, operation, type OperationsOf, type Outcome, outsideTransaction, unchanged } from '../sqlite/operation.js';
import type {
  AckAndClaimManyResult,
  AckManyResult,
  ChangeNotifier,
  ClaimManyOptions,
  ClaimOptions,
  DeadLetter,
  DeadLetterPolicy,
  GroupInspection,
  Lease,
  PublishItem,
  PublishOptions,
  Removed,
  RemoveOptions,
  Transport,
  TransportOptions,
  TransportSnapshot,
  TransportStats,
} from './contract.js';

interface KeyedRow {
  seq: number;
  event: string;
  revision: number;
  holder: string | null;
  locked_until: number | null;
  is_head: number;
  debounce_deadline: number | null;
}
interface ClaimedRow {
  group_id: string;
  head_attempt: number;
  /** `[seq, counter, revision, event]` as JSON. */
  head: string;
  low: number;
}
/**
 * The SQLite transport. Stores each event as JSON and returns parsed copies; an event JSON
 * cannot carry faithfully (a cycle, a BigInt, a function, `undefined`, NaN, a Map…) is rejected
 * with a TypeError before anything is written.
 *
 * Creates or migrates its tables (`lh_*`) in `db` on construction. `close()` does not close
 * `db`: whoever opened it (and may share it with a `SqliteStore`) closes it.
 *
 * Every method is an operation (see `sqlite/operation.ts`) that a host can run inside its own
 * transaction, on the caller's clock reading, next to its own writes.
 */
export class SqliteTransport<E = unknown> implements Transport<E>, ChangeNotifier {
  readonly #db: SqlDatabase;
  readonly #clock: () => number;
  readonly #maxAttempts: number;
  readonly #maxEventBytes: number;
  /** The queue's id in the tables (its name lives in lh_counters). */
  readonly #queue: number;
  /** The queue's name, which its leases carry. */
  readonly #queueName: string;
  /** The database's origin, which its leases carry. */
  readonly #origin: string;
  readonly #sql: Record<TransportStatement, SqlStatement>;
  /** claimMany's and ackMany's set-based statements by kind and size (see #batchStatement). */
  readonly #batchStatements = new Map<string, SqlStatement>();
  #closed = false;
  readonly #listeners = new Listeners();
  /** Stops watching for other connections' commits; set while anyone listens. */
  #unwatch: (() => void) | null = null;

  /**
   * @param db an open database (see `openWasmDatabase`, `openBetterSqliteDatabase`, the browser host).
   * @param options `clock` (default `Date.now`), `maxAttempts` (default unlimited) and `queue`
   *   (default `'default'`): transports with different queue names on one database are independent.
   * @throws TypeError / RangeError for a bad option; StorageError if the schema cannot be created.
   */
  constructor(db: SqlDatabase, options?: TransportOptions) {
    const { clock, maxAttempts, maxEventBytes, queue, onDeadLetter } = checkTransportOptions(options);
    if (typeof db !== 'object' || db === null || typeof db.prepare !== 'function') {
      throw new TypeError('db must be an open SqlDatabase (from openWasmDatabase, openBetterSqliteDatabase or the browser host)');
    }
    this.#db = db;
    this.#clock = clock;
    this.#queueName = queue;
    // SQLite compares against a bound integer; 'unlimited' becomes the largest safe one.
    this.#maxAttempts = Math.min(maxAttempts, Number.MAX_SAFE_INTEGER);
    this.#maxEventBytes = maxEventBytes;
    migrate(db);
    this.#sql = Object.fromEntries(Object.entries(TRANSPORT_STATEMENTS).map(([name, sql]) => [name, db.prepare(sql)])) as Record<TransportStatement, SqlStatement>;
    // The policy is the queue's: the first transport that names one sets it, the others must agree.
    this.#queue = db.transaction(() => {
      db.prepare(CREATE_QUEUE).run(queue);
      const row = db.prepare(QUEUE_BY_NAME).get<{ queue_id: number; on_dead_letter: DeadLetterPolicy | null }>(queue)!;
      if (row.on_dead_letter !== null) checkQueuePolicy(queue, row.on_dead_letter, onDeadLetter);
      else if (onDeadLetter !== null) db.prepare(SET_QUEUE_POLICY).run(onDeadLetter, row.queue_id);
      return row.queue_id;
    });
    this.#origin = db.prepare(ORIGIN).get<{ origin: string }>()!.origin;
  }

  // The contract's methods: each checks its arguments, then runs its operation in a transaction
  // of its own, on this transport's clock (see #run). A host runs the very same operations inside
  // its own transaction instead (see [operation]).
  async publish(groupId: string, event: E, options?: PublishOptions): Promise<number> {
    return this.#run(this.#operations.publish(groupId, event, options));
  }

  async publishMany(items: readonly PublishItem<E>[]): Promise<number[]> {
    return this.#run(this.#operations.publishMany(items));
  }

  async claim(workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    return this.#run(this.#operations.claim(workerId, visibilityMs, options));
  }

  async claimMany(workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<Lease<E>[]> {
    return this.#run(this.#operations.claimMany(workerId, visibilityMs, options));
  }

  async ack(lease: Lease<E>): Promise<void> {
    return this.#run(this.#operations.ack(lease));
  }

  async ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>> {
    return this.#run(this.#operations.ackMany(leases));
  }

  async ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    return this.#run(this.#operations.ackAndClaim(lease, workerId, visibilityMs, options));
  }

  async ackAndClaimMany(leases: readonly Lease<E>[], workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<AckAndClaimManyResult<E>> {
    return this.#run(this.#operations.ackAndClaimMany(leases, workerId, visibilityMs, options));
  }

  async nack(lease: Lease<E>, delayMs?: number, reason?: string): Promise<void> {
    return this.#run(this.#operations.nack(lease, delayMs, reason));
  }

  async release(lease: Lease<E>, delayMs?: number, reason?: string): Promise<void> {
    return this.#run(this.#operations.release(lease, delayMs, reason));
  }

  async reject(lease: Lease<E>, reason?: string): Promise<void> {
    return this.#run(this.#operations.reject(lease, reason));
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    return this.#run(this.#operations.extend(lease, visibilityMs));
  }

  async expireLeases(workerId: string): Promise<number> {
    return this.#run(this.#operations.expireLeases(workerId));
  }

  async stats(): Promise<TransportStats> {
    return this.#run(this.#operations.stats());
  }

  async cancel(seq: number): Promise<boolean> {
    return this.#run(this.#operations.cancel(seq));
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    return this.#run(this.#operations.inspect());
  }

  async inspectGroup(groupId: string): Promise<GroupInspection<E>> {
    return this.#run(this.#operations.inspectGroup(groupId));
  }

  async deadLetters(): Promise<DeadLetter<E>[]> {
    return this.#run(this.#operations.deadLetters());
  }

  async redrive(seq: number): Promise<number> {
    return this.#run(this.#operations.redrive(seq));
  }

  async discard(seq: number, options?: RemoveOptions): Promise<Removed> {
    return this.#run(this.#operations.discard(seq, options));
  }

  async cancelGroup(groupId: string, options?: RemoveOptions): Promise<Removed> {
    return this.#run(this.#operations.cancelGroup(groupId, options));
  }

  async pause(groupId?: string): Promise<void> {
    return this.#run(this.#operations.pause(groupId));
  }

  async resume(groupId?: string): Promise<void> {
    return this.#run(this.#operations.resume(groupId));
  }

  /** @internal The operation of contract method `method` (see sqlite/operation.ts), for a host to run in its own transaction. */
  [operation](method: string, args: readonly unknown[]): Operation {
    if (!Object.hasOwn(this.#operations, method)) throw new TypeError(`transport.${method} is not a method of the contract`);
    const make = this.#operations[method as keyof OperationsOf<Transport<E>, 'close'>] as (...args: unknown[]) => Operation;
    const op = make(...args);
    this.#ensureOpen();
    return op;
  }

  /**
   * Runs `op` as a call of its own: in a transaction when it needs one, then the change notice.
   * No closure per call (a bound run, one clock reader for the transport's life): with two, a
   * claim+ack pair cost ~1.5 µs more than the direct bodies before operations (better-sqlite3 in
   * memory, 21 interleaved rounds); like this, within ~0.5 µs of them.
   */
  #run<T>(op: Operation<T>): T {
    this.#ensureOpen();
    const outcome = op.alone?.(this.#now) ?? (op.transaction ? this.#db.transaction(op.run.bind(op, this.#now)) : op.run(this.#now));
    if (outcome.changed) this.#listeners.notify();
    return outcome.value;
  }

  /** This transport's clock, checked, as an operation reads it. */
  readonly #now = (): number => readClock(this.#clock);

  /**
   * The bodies of the contract's methods. Arguments are checked when an operation is made; its
   * `run` does only SQL, reading the clock where the call needs the time.
   */
  readonly #operations: OperationsOf<Transport<E>, 'close'> = {
    publish: (groupId, event, options) => {
      const args = checkPublish(groupId, options);
      const json = toJson('event', event);
      checkJsonBytes('event', json, this.#maxEventBytes);
      return inTransaction((now) => changed(this.#publish(groupId, json, args, now())));
    },
    publishMany: (items) => {
      const checked = checkPublishItems<E>(items).map((item, i) => {
        const json = toJson(`items[${i}].event`, item.event);
        checkJsonBytes(`items[${i}].event`, json, this.#maxEventBytes);
        return { ...item, json };
      });
      if (checked.length === 0) return outsideTransaction(() => unchanged([]));
      return inTransaction((clock) => {
        const now = clock();
        // `after` names seqs issued before the batch (an item's own seq is not known until it returns).
        const issued = checked.some((item) => item.args.after.length > 0) ? this.#sql.lastSeq.get<{ last_seq: number }>(this.#queue)!.last_seq : 0;
        return changed(checked.map(({ groupId, json, args }) => this.#publish(groupId, json, args, now, issued)));
      });
    },
    claim: (workerId, visibilityMs, options) => {
      const minPriority = checkClaim(workerId, visibilityMs, options);
      return {
        transaction: true,
        run: (now) => unchanged(this.#claim(workerId, visibilityMs, minPriority, now())),
        // Undefined (nothing written) when no lease came back and a head may be due for the dead
        // letters; with unlimited attempts none ever is, so nothing was claimable.
        alone: (now) => {
          const lease = this.#leaseNext(workerId, visibilityMs, minPriority, now());
          return lease || this.#maxAttempts === Number.MAX_SAFE_INTEGER ? unchanged(lease ?? null) : undefined;
        },
      };
    },
    claimMany: (workerId, visibilityMs, options) => {
      const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
      return inTransaction((now) => unchanged(this.#claimMany(workerId, visibilityMs, minPriority, max, now())));
    },
    ack: (lease) => {
      checkLease(lease, this.#queueName);
      // One DELETE (its triggers run inside it): atomic alone.
      const run = (): Outcome<void> => {
        if (!this.#ack(lease)) throw lost(lease);
        return changed(undefined);
      };
      return { transaction: true, run, alone: run };
    },
    ackMany: (leases) => {
      checkLeases<E>(leases, this.#queueName);
      if (leases.length === 0) return outsideTransaction(() => unchanged({ acked: [], lost: [] }));
      return inTransaction(() => {
        const result = this.#ackMany(leases, { acked: [], lost: [] });
        return { value: result, changed: result.acked.length > 0 };
      });
    },
    ackAndClaim: (lease, workerId, visibilityMs, options) => {
      checkLease(lease, this.#queueName);
      const minPriority = checkClaim(workerId, visibilityMs, options);
      return inTransaction((now) => {
        if (!this.#ack(lease)) throw lost(lease);
        return changed(this.#claim(workerId, visibilityMs, minPriority, now()));
      });
    },
    ackAndClaimMany: (leases, workerId, visibilityMs, options) => {
      checkLeases<E>(leases, this.#queueName);
      const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
      return inTransaction((clock) => {
        const now = clock(); // before the acks: a clock that throws leaves nothing written
        const done: AckAndClaimManyResult<E> = { acked: [], lost: [], claimed: [] };
        this.#ackMany(leases, done);
        done.claimed = this.#claimMany(workerId, visibilityMs, minPriority, max, now);
        return { value: done, changed: done.acked.length > 0 };
      });
    },
    nack: (lease, delayMs = 0, reason) => this.#giveBack(this.#sql.releaseHead, lease, delayMs, reason),
    release: (lease, delayMs = 0, reason) => this.#giveBack(this.#sql.releaseKeep, lease, delayMs, reason),
    reject: (lease, reason) => {
      checkLease(lease, this.#queueName);
      const why = checkReason(reason);
      return inTransaction((now) => {
        if (!this.#sql.holds.get(...this.#heldBy(lease))) throw lost(lease);
        this.#bury(lease.groupId, lease.seq, now(), why);
        return changed(undefined);
      });
    },
    extend: (lease, visibilityMs) => {
      checkLease(lease, this.#queueName);
      checkDuration('visibilityMs', visibilityMs, true);
      return inTransaction((now) => {
        const expiresAt = now() + visibilityMs;
        if (this.#sql.extendHead.run(expiresAt, ...this.#heldBy(lease)) === 0) throw lost(lease);
        return unchanged({ ...lease, expiresAt, queue: this.#queueName });
      });
    },
    expireLeases: (workerId) => {
      checkId('workerId', workerId);
      return inTransaction((clock) => {
        const now = clock();
        const ended = this.#sql.expireHeld.run(now - 1, this.#queue, workerId, now);
        return ended > 0 ? changed(ended) : unchanged(0);
      });
    },
    stats: () => inTransaction((clock) => unchanged(readStats(this.#sql, this.#queue, clock()))),
    cancel: (seq) => {
      checkSeq(seq);
      return inTransaction((now) => {
        const sql = this.#sql;
        const queue = this.#queue;
        const found = sql.findSeq.get<{ group_id: string; holder: string | null; locked_until: number | null; is_head: number }>(queue, seq);
        if (!found) return unchanged(false);
        if (found.is_head && found.holder !== null && found.locked_until! >= now()) {
          throw new LeaseholdError('MESSAGE_LEASED', `message ${seq} is under a live lease and cannot be cancelled; cancel it after its holder acks or nacks it, or once the lease runs out`);
        }
        sql.deleteMessage.run(queue, found.group_id, seq);
        if (found.is_head === 1) sql.renumberUnclaimed.run(queue, found.group_id, queue, found.group_id);
        // Only a head's removal frees its group; a message behind it leaves the group as it was.
        return { value: true, changed: found.is_head === 1 };
      });
    },
    inspect: () => inTransaction((clock) => unchanged(readSnapshot<E>(this.#sql, this.#queue, clock()))),
    inspectGroup: (groupId) => {
      checkId('groupId', groupId);
      return inTransaction((clock) => unchanged(readGroup<E>(this.#sql, this.#queue, groupId, clock())));
    },
    deadLetters: () => outsideTransaction(() => unchanged(this.#sql.deadLetters.all<DeadRow>(this.#queue).map(deadLetterOf<E>))),
    redrive: (seq) => {
      checkSeq(seq);
      return inTransaction(() => {
        const sql = this.#sql;
        const queue = this.#queue;
        const { letter, held } = this.#deadLetter(seq);
        // The message goes back before its dead letter goes, so that what waits for it waits on.
        if (held) {
          // Back to the head it held, under its own seq: every message behind it has a later one.
          sql.restoreMessage.run(queue, letter.group_id, seq, letter.event, letter.counter!, letter.revision!, queue, seq);
          sql.unhold.run(queue, letter.group_id, queue, letter.group_id);
          sql.deleteDeadLetter.run(queue, seq);
          return changed(seq);
        }
        const { seq: newSeq } = sql.redriveMessage.get<{ seq: number }>(queue, letter.group_id, letter.event, letter.counter!, letter.revision!, queue)!;
        sql.insertGroup.run(queue, letter.group_id, letter.priority, newSeq, null, queue, letter.group_id);
        if (sql.moveWaits.run(newSeq, queue, seq) > 0) sql.watch.run(queue, letter.group_id, newSeq);
        sql.deleteDeadLetter.run(queue, seq);
        return changed(newSeq);
      });
    },
    pause: (groupId) => {
      if (groupId !== undefined) checkId('groupId', groupId);
      return inTransaction(() => {
        const sql = this.#sql;
        if (groupId === undefined) {
          sql.pauseQueue.run(1, this.#queue, 1);
        } else {
          sql.pauseName.run(this.#queue, groupId);
          sql.pauseGroup.run(1, this.#queue, groupId);
        }
        return unchanged(undefined);
      });
    },
    resume: (groupId) => {
      if (groupId !== undefined) checkId('groupId', groupId);
      return inTransaction(() => {
        const sql = this.#sql;
        if (groupId === undefined) return { value: undefined, changed: sql.pauseQueue.run(null, this.#queue, null) > 0 };
        if (sql.resumeName.run(this.#queue, groupId) === 0) return unchanged(undefined);
        sql.pauseGroup.run(null, this.#queue, groupId);
        return changed(undefined);
      });
    },
    discard: (seq, options) => {
      checkSeq(seq);
      const dependents = checkRemoveOptions(options);
      return inTransaction((now) => {
        const sql = this.#sql;
        const queue = this.#queue;
        if (!dependents) {
          const { letter, held } = this.#deadLetter(seq);
          this.#discard(seq, letter.group_id, held);
          return changed({ seqs: [seq], groups: [letter.group_id] });
        }
        const letter = sql.deadLetter.get<DeadRow>(queue, seq);
        if (letter) return changed(this.#remove([[letter.group_id, seq + 1]], seq, letter.group_id, true, now()));
        const found = sql.findSeq.get<{ group_id: string }>(queue, seq);
        if (!found) throw new LeaseholdError('NOT_FOUND', `message ${seq} is neither a dead letter nor queued`);
        return changed(this.#remove([[found.group_id, seq]], null, found.group_id, true, now()));
      });
    },
    cancelGroup: (groupId, options) => {
      checkId('groupId', groupId);
      const dependents = checkRemoveOptions(options);
      return inTransaction((now) => {
        const held = this.#sql.heldSeq.get<{ held_seq: number | null }>(this.#queue, groupId)?.held_seq ?? null;
        const removed = this.#remove([[groupId, 0]], held, groupId, dependents, now());
        return { value: removed, changed: removed.seqs.length > 0 };
      });
    },
  };

  /** nack or release (`statement`): the head goes back, free now or parked for `delayMs`. */
  #giveBack(statement: SqlStatement, lease: Lease<E>, delayMs: number, reason: unknown): Operation<void> {
    checkLease(lease, this.#queueName);
    checkDuration('delayMs', delayMs, false);
    const why = checkReason(reason);
    return inTransaction((now) => {
      const until = delayMs === 0 ? null : now() + delayMs;
      if (statement.run(until, ...this.#heldBy(lease)) === 0) throw lost(lease);
      if (why !== null) this.#sql.setLastError.run(why, this.#queue, lease.groupId, lease.seq);
      return changed(undefined);
    });
  }

  /** Dead letter `seq` of this queue (or NOT_FOUND): what it is, and whether it holds its group. */
  #deadLetter(seq: number): { letter: DeadRow; held: boolean } {
    const sql = this.#sql;
    const letter = sql.deadLetter.get<DeadRow>(this.#queue, seq);
    if (!letter) throw new LeaseholdError('NOT_FOUND', `message ${seq} is not a dead letter`);
    return { letter, held: sql.heldSeq.get<{ held_seq: number | null }>(this.#queue, letter.group_id)?.held_seq === seq };
  }

  /** Deletes dead letter `seq` of `groupId`; a group it held goes on (or goes, when empty). What waited for it goes on (a trigger sees to that). */
  #discard(seq: number, groupId: string, held: boolean): void {
    const sql = this.#sql;
    const queue = this.#queue;
    sql.deleteDeadLetter.run(queue, seq);
    if (!held) return;
    sql.unhold.run(queue, groupId, queue, groupId);
    sql.dropEmptyGroup.run(queue, groupId, queue, groupId);
  }

  /**
   * The body of a removal with dependents, inside the caller's transaction: the messages of each
   * `[group, from]` root from seq `from` on, the dead letter `dead` (of `deadGroup`, whose hold
   * it may be), and with `dependents` every message waiting on a removed one with its group's
   * later messages, transitively. Everything is read before anything is written, so a live
   * lease refuses the call with nothing changed. Deleted newest first: every waiter is gone
   * before what it waits for, so no wait is counted off for a message about to go.
   */
  #remove(roots: readonly (readonly [string, number])[], dead: number | null, deadGroup: string, dependents: boolean, now: number): Removed {
    const sql = this.#sql;
    const queue = this.#queue;
    const chosen = new Map<number, string>();
    const pending: number[] = [];
    const take = (groupId: string, from: number) => {
      for (const row of sql.groupFrom.all<{ seq: number; holder: string | null; locked_until: number | null; is_head: number }>(queue, groupId, from)) {
        if (chosen.has(row.seq)) continue;
        if (row.is_head === 1 && row.holder !== null && row.locked_until! >= now) throw leasedError(row.seq, 'removed');
        chosen.set(row.seq, groupId);
        pending.push(row.seq);
      }
    };
    const waitersOf = (seq: number) => sql.waitersOf.all<{ group_id: string; seq: number }>(queue, seq);
    for (const [groupId, from] of roots) take(groupId, from);
    if (dependents && dead !== null) for (const waiter of waitersOf(dead)) take(waiter.group_id, waiter.seq);
    while (dependents && pending.length > 0) for (const waiter of waitersOf(pending.pop()!)) take(waiter.group_id, waiter.seq);
    const pairs = [...chosen].sort((a, b) => b[0] - a[0]);
    for (const [seq, groupId] of pairs) sql.deleteMessage.run(queue, groupId, seq);
    for (const groupId of new Set(chosen.values())) sql.renumberUnclaimed.run(queue, groupId, queue, groupId);
    if (dead !== null) {
      this.#discard(dead, deadGroup, sql.heldSeq.get<{ held_seq: number | null }>(queue, deadGroup)?.held_seq === dead);
      pairs.push([dead, deadGroup]);
    }
    return removedOf(pairs);
  }

  /** Moves group `groupId`'s head `seq` to the dead letters; with the hold policy, holds the group at it. */
  #bury(groupId: string, seq: number, now: number, reason: string | null): void {
    const sql = this.#sql;
    const queue = this.#queue;
    sql.buryHead.run(now, reason, queue, groupId, seq);
    if (sql.policy.get<{ hold: number | null }>(queue)!.hold === 1) sql.holdGroup.run(seq, queue, groupId);
    sql.deleteMessage.run(queue, groupId, seq);
  }

  /** The body of one publish, inside the caller's transaction. */
  #publish(groupId: string, json: string, args: PublishArgs, now: number, issued?: number): number {
    const { priority, key, delayMs, onDuplicate, after, afterGroups, debounceMs } = args;
    const sql = this.#sql;
    const queue = this.#queue;
    // Read before anything is written: a seq never issued refuses the publish.
    let waitsFor = after.length === 0 ? null : this.#stillQueued(after, issued);
    if (afterGroups.length > 0) waitsFor = this.#heldIn(afterGroups, waitsFor ?? []);
    if (key !== null && onDuplicate === 'skip' && debounceMs === 0) {
      const existing = sql.findKey.get<{ seq: number }>(queue, groupId, key);
      if (existing) return existing.seq;
    } else if (key !== null) {
      const existing = sql.findKeyed.get<KeyedRow>(queue, groupId, key);
      const leased = existing !== undefined && existing.is_head === 1 && existing.holder !== null;
      if (existing && leased && (onDuplicate === 'skip' || existing.locked_until! >= now)) {
        if (onDuplicate === 'skip') return existing.seq;
        // Under a live lease, maybe on the wire already: the new event goes behind it, with the key.
        sql.dropKey.run(queue, groupId, existing.seq);
      } else if (existing) {
        if (leased) sql.fenceHead.run(queue, groupId);
        if (onDuplicate !== 'skip') {
          const before = existing.event;
          const updated = onDuplicate === 'replace' ? json : JSON.stringify(mergePatch(JSON.parse(before), JSON.parse(json)));
          const same = updated === before || sameJson(JSON.parse(updated), JSON.parse(before));
          sql.setEvent.run(updated, same ? existing.revision : existing.revision + 1, queue, groupId, existing.seq);
        }
        if (debounceMs > 0) {
          const window = rearm(debounceMs, args.maxWaitMs, existing.debounce_deadline, now);
          sql.rearmMessage.run(window.deadline, window.notBefore, window.notBefore, queue, groupId, existing.seq);
          if (existing.is_head === 1) sql.rearmHead.run(window.notBefore, queue, groupId);
        }
        return existing.seq;
      }
    }
    const wait = Math.max(delayMs, debounceMs);
    const notBefore = wait > 0 ? now + wait : null;
    let seq: number;
    if (waitsFor === null || waitsFor.length === 0) {
      seq = sql.insertMessage.get<{ seq: number }>(queue, groupId, json, key, notBefore, queue)!.seq;
      sql.insertGroup.run(queue, groupId, priority, seq, notBefore, queue, groupId);
    } else {
      seq = sql.insertWaiting.get<{ seq: number }>(queue, groupId, json, key, BLOCKED, notBefore, waitsFor.length, queue)!.seq;
      sql.insertGroup.run(queue, groupId, priority, seq, BLOCKED, queue, groupId);
      for (const named of waitsFor) {
        sql.addWait.run(queue, named.seq, groupId, seq);
        if (named.groupId !== null) sql.watch.run(queue, named.groupId, named.seq);
      }
    }
    if (debounceMs > 0) sql.setDeadline.run(rearm(debounceMs, args.maxWaitMs, null, now).deadline, queue, groupId, seq);
    return seq;
  }

  /** `found` and what groups `names` hold now (every queued message, and the dead letter holding each), without repeats. */
  #heldIn(names: readonly string[], found: { seq: number; groupId: string | null }[]): { seq: number; groupId: string | null }[] {
    const sql = this.#sql;
    const queue = this.#queue;
    const seen = new Set(found.map((named) => named.seq));
    const add = (seq: number, groupId: string | null) => {
      if (seen.has(seq)) return;
      seen.add(seq);
      found.push({ seq, groupId });
    };
    for (const name of names) {
      for (const row of sql.groupFrom.all<{ seq: number }>(queue, name, 0)) add(row.seq, name);
      const held = sql.heldSeq.get<{ held_seq: number | null }>(queue, name)?.held_seq ?? null;
      if (held !== null) add(held, null);
    }
    return found;
  }

  /**
   * The seqs of `after` still in the queue, queued (with their group) or dead (group null); a
   * seq never issued is a RangeError. A message is found by seq with a scan of the queue's
   * messages, as cancel finds one: no index by seq alone, which every publish and ack would pay.
   */
  #stillQueued(after: readonly number[], issued?: number): { seq: number; groupId: string | null }[] {
    const sql = this.#sql;
    const queue = this.#queue;
    const last = issued ?? sql.lastSeq.get<{ last_seq: number }>(queue)!.last_seq;
    const found: { seq: number; groupId: string | null }[] = [];
    for (const seq of after) {
      if (seq > last) throw neverIssued(seq, last);
      const queued = sql.findSeq.get<{ group_id: string }>(queue, seq);
      if (queued) found.push({ seq, groupId: queued.group_id });
      else if (sql.isDead.get(queue, seq)) found.push({ seq, groupId: null });
    }
    return found;
  }

  /** The body of claimMany, inside the caller's transaction. */
  #claimMany(workerId: string, visibilityMs: number, minPriority: number, max: number, now: number): Lease<E>[] {
    const fast = this.#claimClaimable(workerId, visibilityMs, minPriority, max, now);
    if (fast) return fast;
    const leases: Lease<E>[] = [];
    while (leases.length < max) {
      const lease = this.#claim(workerId, visibilityMs, minPriority, now);
      if (!lease) break;
      leases.push(lease);
    }
    // One mark for the batch, after its last claim (a later claim may dead-letter a lower number).
    if (leases.length < 2) return leases;
    const lowWater = this.#lowWater();
    return leases.map((lease) => ({ ...lease, lowWater }));
  }

  /** The body of ackMany, inside the caller's transaction: sorts each lease into `done`. */
  #ackMany<R extends AckManyResult<E>>(leases: readonly Lease<E>[], done: R): R {
    const removed = this.#ackDistinct(leases);
    for (const lease of leases) {
      const acked = removed ? removed.get(lease.groupId) === lease.seq : this.#ack(lease);
      (acked ? done.acked : done.lost).push(lease);
    }
    return done;
  }

  /**
   * ackMany's fast path: when no two leases name one group, their acks touch disjoint rows, so
   * acking them one after another removes exactly the messages whose lease holds before any of
   * them: one DELETE per chunk of up to {@link ACK_CHUNK} leases. Returns each group's removed
   * seq, or null (nothing written) when two leases share a group and the acks must run in turn.
   */
  #ackDistinct(leases: readonly Lease<E>[]): Map<string, number> | null {
    const groups = new Set<string>();
    for (const lease of leases) groups.add(lease.groupId);
    if (groups.size < leases.length) return null;
    const removed = new Map<string, number>();
    const queue = this.#queue;
    for (let from = 0; from < leases.length; from += ACK_CHUNK) {
      const chunk = leases.slice(from, from + ACK_CHUNK);
      const params: (string | number)[] = [];
      for (const { groupId, seq, workerId, attempt } of chunk) params.push(groupId, seq, workerId, attempt);
      params.push(queue, queue, queue);
      for (const row of this.#batchStatement('ack', chunk.length).all<{ group_id: string; seq: number }>(...params)) removed.set(row.group_id, row.seq);
    }
    return removed;
  }

  /**
   * A batch statement for `count` rows, prepared once per kind and size: `ack`, the DELETE of
   * {@link #ackDistinct} (group, seq, holder, attempt per lease; queue ×3); `lease`, the UPDATE
   * of {@link #claimClaimable} (group, claim order per group; holder, expiry, queue).
   */
  #batchStatement(kind: 'ack' | 'lease', count: number): SqlStatement {
    const key = `${kind}${count}`;
    let statement = this.#batchStatements.get(key);
    if (!statement) {
      statement = this.#db.prepare(kind === 'ack' ? batchAck(count) : batchLease(count));
      this.#batchStatements.set(key, statement);
    }
    return statement;
  }

  /** The body of ack, inside the caller's transaction: whether the lease still held its message. */
  #ack(lease: Lease<E>): boolean {
    const { groupId, seq, attempt, workerId } = lease;
    const queue = this.#queue;
    return this.#sql.ackHead.run(queue, groupId, seq, queue, groupId, workerId, attempt, queue, groupId, seq) > 0;
  }

  /**
   * claimMany without a walk per claim: k successive claims at one instant lease the first k
   * claimable groups in round-robin order, each moving to the back with the next claim-order
   * value (a leased group is not claimable again at the same instant, and no other group's
   * place changes). That holds unless a head is due for the dead letters (maxAttempts), which
   * changes the groups as it goes: then null, before anything is written, and the caller runs
   * the claims one by one.
   */
  #claimClaimable(workerId: string, visibilityMs: number, minPriority: number, max: number, now: number): Lease<E>[] | null {
    const sql = this.#sql;
    const queue = this.#queue;
    const rows = sql.claimable.all<{ group_id: string; head_attempt: number; seq: number; event: string; counter: number; revision: number; claims: number }>(queue, queue, queue, minPriority, now, queue, max, queue, queue);
    const leases: Lease<E>[] = [];
    if (rows.length === 0) return leases;
    for (const row of rows) if (row.head_attempt >= this.#maxAttempts) return null;
    const expiresAt = now + visibilityMs;
    let order = rows[0]!.claims;
    for (let from = 0; from < rows.length; from += LEASE_CHUNK) {
      const chunk = rows.slice(from, from + LEASE_CHUNK);
      const params: (string | number)[] = [];
      for (const row of chunk) params.push(row.group_id, ++order);
      params.push(workerId, expiresAt, queue);
      this.#batchStatement('lease', chunk.length).run(...params);
    }
    const lowWater = this.#lowWater();
    const origin = this.#origin;
    const name = this.#queueName;
    for (const row of rows) {
      const { counter, revision } = row;
      leases.push({ seq: row.seq, groupId: row.group_id, event: JSON.parse(row.event) as E, workerId, attempt: row.head_attempt + 1, expiresAt, queue: name, origin, counter, lowWater, revision, deliveryId: deliveryId(origin, name, counter, revision) });
    }
    return leases;
  }

  /** The body of claim, inside the caller's transaction. */
  #claim(workerId: string, visibilityMs: number, minPriority: number, now: number): Lease<E> | null {
    const sql = this.#sql;
    const queue = this.#queue;
    for (;;) {
      const lease = this.#leaseNext(workerId, visibilityMs, minPriority, now);
      if (lease) return lease;
      const group = sql.nextGroup.get<{ group_id: string }>(queue, minPriority, now, queue);
      if (!group) return null;
      // Poison message: out of its group, which keeps its place in the round-robin order.
      const { seq } = sql.head.get<{ seq: number }>(queue, group.group_id)!;
      this.#bury(group.group_id, seq, now, null);
    }
  }

  /** One run of the claim statement: the lease it took, or undefined when it leased nothing. */
  #leaseNext(workerId: string, visibilityMs: number, minPriority: number, now: number): Lease<E> | undefined {
    const queue = this.#queue;
    const expiresAt = now + visibilityMs;
    // all(), not get(): it steps the statement to its end, so that outside a transaction its
    // commit happens inside the call and a failed commit throws (get() would reset it unchecked).
    const row = this.#sql.claimGroup.all<ClaimedRow>(workerId, expiresAt, queue, queue, queue, queue, minPriority, now, queue, this.#maxAttempts, queue, queue)[0];
    if (!row) return undefined;
    const [seq, counter, revision, event] = JSON.parse(row.head) as [number, number, number, E];
    const origin = this.#origin;
    const name = this.#queueName;
    return { seq, groupId: row.group_id, event, workerId, attempt: row.head_attempt, expiresAt, queue: name, origin, counter, lowWater: row.low, revision, deliveryId: deliveryId(origin, name, counter, revision) };
  }

  /** The lowest counter still queued, inside the caller's transaction (a claim just leased one, so there is one). */
  #lowWater(): number {
    return this.#sql.lowWater.get<{ low: number }>(this.#queue)!.low;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#unwatch?.();
    this.#unwatch = null;
  }

  /**
   * Calls `listener` (on a microtask) after a publish, ack, nack, redrive or cancel through this
   * object, and — while anyone listens — within about 100 ms of a commit by another connection
   * or process to the same file (its `PRAGMA data_version` is polled every 50 ms; a database
   * that no other connection can open, in memory or in exclusive locking mode, is not polled).
   */
  onChange(listener: () => void): () => void {
    const unsubscribe = this.#listeners.add(listener);
    if (!this.#closed && this.#unwatch === null) this.#unwatch = this.#db.watchCommits?.(() => this.#listeners.notify()) ?? null;
    return () => {
      unsubscribe();
      if (this.#listeners.size === 0) {
        this.#unwatch?.();
        this.#unwatch = null;
      }
    };
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('transport');
  }

  /** The parameters of the "lease still holds" condition. */
  #heldBy(lease: Lease<unknown>): [number, string, string, number, number, number, string] {
    return [this.#queue, lease.groupId, lease.workerId, lease.attempt, lease.seq, this.#queue, lease.groupId];
  }
}

/**
 * Leases acked by one statement in ackMany: 4 parameters each and 3 more make 99, within the
 * 100 bound parameters a Durable Object's SQLite allows per statement.
 */
const ACK_CHUNK = 24;
/** Groups leased by one statement in claimMany: 2 parameters each and 3 more, within 100. */
const LEASE_CHUNK = 48;

function lost(lease: Lease<unknown>): LeaseLostError {
  return new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
}

