/**
 * PostgresTransport: the transport contract on PostgreSQL (a server through `fromPg`, or PGlite
 * through `fromPglite`), for queues shared by many processes and machines.
 *
 * Each call is one statement calling a server-side function (see transport-sql.ts): one round
 * trip, one transaction. Calls on one object are independent: on a pool they run on separate
 * connections in parallel, and PostgreSQL's row locks (not this object) keep them apart.
 */
import { ClosedError, LeaseholdError, LeaseLostError } from '../errors.js';
import { Listeners } from '../transport/notifier.js';
import { checkClaim, checkClaimMany, checkLease, checkLeases, checkPublish, checkPublishItems, checkReason, checkRemoveOptions, checkSeq, checkTransportOptions, checkQueuePolicy, deliveryId, leasedError, neverIssued, removedOf } from '../transport/shared.js';
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
} from '../transport/contract.js';
import { checkDuration, checkId, checkJsonBytes, readClock, toJson } from '../validate.js';
import type { PgDatabase } from './driver.js';
import { checkIndexedId, decodeId, encodeId } from './ids.js';
import { type DeadJson, deadLettersFrom, deadLettersSelect, groupInspectionFrom, inspectQuery, snapshotFrom, type InspectRow, type StatsRow, statsFrom, statsQuery } from './inspect.js';
import { checkSchemaName, migratePostgres, quoteIdent } from './schema.js';

/** Options of {@link PostgresTransport}. */
export interface PostgresTransportOptions extends TransportOptions {
  /**
   * The clock leases, parks and dead letters are measured with. Default: the database server's
   * clock, so workers on several machines never disagree about a lease. Inject one in tests.
   */
  clock?: () => number;
  /** The schema holding leasehold's `lh_*` tables and functions (created if missing). Default `public`. */
  schema?: string;
}

/** What opening a queue resolves: its id, its two sequences (by OID) and its notice channel. */
interface QueueRefs {
  id: number;
  seqs: number;
  claims: number;
  channel: string;
  /** The schema's origin (`lh_origin`, made with its tables), which its leases carry. */
  origin: string;
}

interface LeaseRow {
  o_seq: string | number;
  o_group: string;
  o_event: string;
  o_attempt: number;
  o_expires: number;
  o_counter: string | number | null;
  o_revision: number | null;
  /** From lh_claim_one / lh_ack_claim_one, or, for batches, lh_low_water in the select list (see #leaseColumns). */
  o_low: string | number | null;
}

/**
 * The PostgreSQL transport. Stores each event as JSON text and returns parsed copies; an event
 * JSON cannot carry faithfully (a cycle, a BigInt, a function, `undefined`, NaN, a Map…) is
 * rejected with a TypeError before anything is written.
 *
 * The schema is created or migrated, and the queue opened, on the first call (so the
 * constructor can stay synchronous); a failure there rejects that call and the next call tries
 * again. `close()` does not close `db`: whoever opened it closes it.
 *
 * Group ids and idempotency keys longer than `PG_MAX_ID_BYTES` (1024) bytes of UTF-8 are refused
 * with a RangeError: PostgreSQL indexes them (the other backends have no such limit).
 *
 * A failure of the server or the connection rejects with a `StorageError` (code
 * `STORAGE_UNAVAILABLE` while the server cannot be reached); the object stays usable and the
 * next call after the server is back succeeds.
 */
export class PostgresTransport<E = unknown> implements Transport<E>, ChangeNotifier {
  readonly #db: PgDatabase;
  readonly #clock: (() => number) | null;
  readonly #maxAttempts: number | null;
  readonly #maxEventBytes: number;
  readonly #schema: string;
  readonly #queueName: string;
  /** The `onDeadLetter` asked for (null: the queue's); checked against the queue's when it opens. */
  readonly #requestedPolicy: DeadLetterPolicy | null;
  readonly #s: string;
  #queue: Promise<QueueRefs> | null = null;
  #closed = false;
  readonly #listeners = new Listeners();
  #unlisten: Promise<(() => Promise<void>) | null> | null = null;
  /** Whether LISTEN is established: then every change, this object's own too, arrives through it. */
  #listening = false;
  /** Bumped when listening stops, so a LISTEN still being set up then does not count. */
  #listenEpoch = 0;

  /**
   * @param db an open database (`fromPg(pool)`, `fromPglite(pglite)`).
   * @param options `clock` (default: the server's), `maxAttempts` (default unlimited), `schema`, `queue`.
   * @throws TypeError / RangeError for a bad option.
   */
  constructor(db: PgDatabase, options?: PostgresTransportOptions) {
    const { maxAttempts, maxEventBytes, queue, onDeadLetter } = checkTransportOptions(options, ['schema']);
    this.#maxEventBytes = maxEventBytes;
    this.#requestedPolicy = onDeadLetter;
    if (typeof db !== 'object' || db === null || typeof db.query !== 'function' || typeof db.transaction !== 'function') {
      throw new TypeError('db must be an open PgDatabase (from fromPg or fromPglite)');
    }
    const schema = options?.schema ?? 'public';
    checkSchemaName(schema);
    this.#db = db;
    this.#clock = options?.clock ?? null;
    this.#maxAttempts = Number.isFinite(maxAttempts) ? maxAttempts : null;
    this.#schema = schema;
    this.#queueName = queue;
    this.#s = quoteIdent(schema);
  }

  /**
   * The injected clock's reading, or null for the server's clock. Read when a call is made,
   * before its first await, as the synchronous backends do: a call means "at this instant".
   */
  #now(): number | null {
    return this.#clock === null ? null : readClock(this.#clock);
  }

  /** Migrates the schema and opens the queue, once; a failed attempt is retried by the next call. */
  #open(): Promise<QueueRefs> {
    if (this.#closed) return Promise.reject(new ClosedError('transport'));
    this.#queue ??= this.#openQueue().catch((error: unknown) => {
      this.#queue = null;
      throw error;
    });
    return this.#queue;
  }

  async #openQueue(): Promise<QueueRefs> {
    const s = this.#s;
    await migratePostgres(this.#db, this.#schema);
    const refs = `SELECT id, to_regclass(format('%I.%I', $2::text, 'lh_q' || id || '_seq'))::oid::int8 AS seqs,
      to_regclass(format('%I.%I', $2::text, 'lh_q' || id || '_claims'))::oid::int8 AS claims, on_dead_letter,
      (SELECT origin FROM ${s}.lh_origin) AS origin FROM ${s}.lh_queues WHERE name = $1`;
    type Row = { id: number; seqs: string | null; claims: string | null; on_dead_letter: DeadLetterPolicy | null; origin: string };
    let [row] = await this.#db.query<Row>(refs, [this.#queueName, this.#schema]);
    if (!row?.claims) {
      [row] = await this.#db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`leasehold:${this.#schema}`]);
        await tx.query(`INSERT INTO ${s}.lh_queues (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [this.#queueName]);
        const [{ id }] = (await tx.query<{ id: number }>(`SELECT id FROM ${s}.lh_queues WHERE name = $1`, [this.#queueName])) as [{ id: number }];
        await tx.query(`CREATE SEQUENCE IF NOT EXISTS ${s}.${quoteIdent(`lh_q${id}_seq`)}`);
        await tx.query(`CREATE SEQUENCE IF NOT EXISTS ${s}.${quoteIdent(`lh_q${id}_claims`)}`);
        return tx.query<Row>(refs, [this.#queueName, this.#schema]);
      });
    }
    const { id, seqs, claims } = row!;
    // The policy is the queue's: the first transport that names one sets it, the others must agree.
    let policy = row!.on_dead_letter;
    if (policy === null && this.#requestedPolicy !== null) {
      await this.#db.query(`UPDATE ${s}.lh_queues SET on_dead_letter = $2 WHERE id = $1 AND on_dead_letter IS NULL`, [id, this.#requestedPolicy]);
      [{ on_dead_letter: policy }] = (await this.#db.query<{ on_dead_letter: DeadLetterPolicy }>(`SELECT on_dead_letter FROM ${s}.lh_queues WHERE id = $1`, [id])) as [{ on_dead_letter: DeadLetterPolicy }];
    }
    if (policy !== null) checkQueuePolicy(this.#queueName, policy, this.#requestedPolicy);
    // The claims sequence's OID is unique in the database: a channel no other queue or schema shares.
    return { id, seqs: Number(seqs), claims: Number(claims), channel: `lh_${claims}`, origin: row!.origin };
  }

  /**
   * A batch claim function's rows (as `c`) with the queue's low-water mark ($1 is the queue),
   * read after the claim ran: the batch functions return leases without it, and a row without a
   * group (lh_ack_claim_many's first) gets null. (Single claims call lh_claim_one and
   * lh_ack_claim_one, which return it themselves, see sql/claim.ts.)
   */
  get #leaseColumns(): string {
    return `c.*, CASE WHEN c.o_group IS NULL THEN NULL ELSE ${this.#s}.lh_low_water($1) END AS o_low`;
  }

  #fn(name: string, args: number): string {
    return `${this.#s}.${name}(${params(args)})`;
  }

  /** The last seq the queue's sequence handed out (0 before the first). */
  async #lastSeq(seqs: number): Promise<number> {
    const [row] = await this.#db.query<{ last: string }>('SELECT coalesce(pg_sequence_last_value($1::oid::regclass), 0) AS last', [seqs]);
    return Number(row!.last);
  }

  async publish(groupId: string, event: E, options?: PublishOptions): Promise<number> {
    const { priority, key, delayMs, onDuplicate, after, afterGroups, debounceMs, maxWaitMs } = checkPublish(groupId, options);
    checkIndexedId('groupId', groupId);
    if (key !== null) checkIndexedId('options.key', key);
    afterGroups.forEach((group) => checkIndexedId('options.after.group', group));
    const json = toJson('event', event);
    checkJsonBytes('event', json, this.#maxEventBytes);
    const { now, q, heard } = await this.#begin(true);
    const args = [q.id, q.seqs, encodeId(groupId), json, priority, key === null ? null : encodeId(key), delayMs, now, q.channel];
    const seqs = (n: number) => `ARRAY(SELECT e::bigint FROM json_array_elements_text($${n}::json) e)`;
    const groups = (n: number) => `ARRAY(SELECT e FROM json_array_elements_text($${n}::json) e)`;
    const waits = [JSON.stringify(after), JSON.stringify(afterGroups.map(encodeId))];
    const [row] = await (debounceMs > 0
      ? this.#db.query<{ seq: string }>(`SELECT ${this.#s}.lh_publish_debounced(${params(12)}, ${seqs(13)}, ${groups(14)}) AS seq`, [...args, onDuplicate, debounceMs, maxWaitMs, ...waits])
      : after.length > 0 || afterGroups.length > 0
        ? this.#db.query<{ seq: string }>(`SELECT ${this.#s}.lh_publish_after(${params(10)}, ${seqs(11)}, ${groups(12)}) AS seq`, [...args, onDuplicate, ...waits])
        : onDuplicate === 'skip'
          ? this.#db.query<{ seq: string }>(`SELECT ${this.#fn('lh_publish', 9)} AS seq`, args)
          : this.#db.query<{ seq: string }>(`SELECT ${this.#fn('lh_publish_keyed', 10)} AS seq`, [...args, onDuplicate]));
    const seq = Number(row!.seq);
    if (seq < 0) throw neverIssued(-seq, await this.#lastSeq(q.seqs));
    this.#changed(null, heard);
    return seq;
  }

  async publishMany(items: readonly PublishItem<E>[]): Promise<number[]> {
    const checked = checkPublishItems<E>(items).map(({ groupId, event, args }, i) => {
      checkIndexedId(`items[${i}].groupId`, groupId);
      if (args.key !== null) checkIndexedId(`items[${i}].options.key`, args.key);
      args.afterGroups.forEach((group) => checkIndexedId(`items[${i}].options.after.group`, group));
      const json = toJson(`items[${i}].event`, event);
      checkJsonBytes(`items[${i}].event`, json, this.#maxEventBytes);
      return [
        encodeId(groupId), json, args.priority, args.key === null ? null : encodeId(args.key), args.delayMs, args.onDuplicate,
        args.after, args.debounceMs, args.maxWaitMs, args.afterGroups.map(encodeId),
      ];
    });
    this.#ensureOpen();
    if (checked.length === 0) return [];
    const { now, q, heard } = await this.#begin(true);
    const named = checked.flatMap((item) => item[6] as number[]);
    if (named.length > 0) {
      // Seqs only grow: one issued before this call stays issued (the batch checks again).
      const last = await this.#lastSeq(q.seqs);
      const unknown = named.find((seq) => seq > last);
      if (unknown !== undefined) throw neverIssued(unknown, last);
    }
    const rows = await this.#db.query<{ o_seq: string }>(`SELECT o_seq FROM ${this.#fn('lh_publish_many', 5)}`, [q.id, q.seqs, JSON.stringify(checked), now, q.channel]);
    this.#changed(null, heard);
    return rows.map((r) => Number(r.o_seq));
  }

  async claim(workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    const minPriority = checkClaim(workerId, visibilityMs, options);
    const { now, q } = await this.#begin(true);
    const rows = await this.#db.query<LeaseRow>(`SELECT * FROM ${this.#fn('lh_claim_one', 7)}`, [
      q.id, q.claims, encodeId(workerId), visibilityMs, minPriority, now, this.#maxAttempts,
    ]);
    return rows[0] ? leaseOf<E>(rows[0], workerId, this.#queueName, q.origin) : null;
  }

  async claimMany(workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<Lease<E>[]> {
    const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
    const { now, q } = await this.#begin(true);
    const rows = await this.#db.query<LeaseRow>(`SELECT ${this.#leaseColumns} FROM ${this.#fn('lh_claim_many', 8)} c`, [
      q.id, q.claims, encodeId(workerId), visibilityMs, minPriority, now, this.#maxAttempts, max,
    ]);
    return rows.map((row) => leaseOf<E>(row, workerId, this.#queueName, q.origin));
  }

  async ack(lease: Lease<E>): Promise<void> {
    checkLease(lease, this.#queueName);
    const { q, heard } = await this.#begin(false);
    const [row] = await this.#db.query<{ ok: boolean }>(`SELECT ${this.#fn('lh_ack', 6)} AS ok`, [q.id, ...heldBy(lease), this.#inline(q)]);
    if (!row!.ok) throw lost(lease);
    this.#changed(q, heard);
  }

  async ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>> {
    checkLeases<E>(leases, this.#queueName);
    this.#ensureOpen();
    if (leases.length === 0) return { acked: [], lost: [] };
    const { q, heard } = await this.#begin(false);
    const [row] = await this.#db.query<{ done: string }>(`SELECT ${this.#fn('lh_ack_many', 3)} AS done`, [q.id, JSON.stringify(leases.map(heldBy)), this.#inline(q)]);
    const result = sortAcks(leases, row!.done);
    if (result.acked.length > 0) this.#changed(q, heard);
    return result;
  }

  async ackAndClaimMany(leases: readonly Lease<E>[], workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<AckAndClaimManyResult<E>> {
    checkLeases<E>(leases, this.#queueName);
    const { minPriority, max } = checkClaimMany(workerId, visibilityMs, options);
    const { now, q, heard } = await this.#begin(true);
    // The first row carries the acks' outcome; the claimed leases follow (lh_ack_claim_many).
    const [acks, ...claimed] = await this.#db.query<LeaseRow & { o_done: string }>(`SELECT ${this.#leaseColumns} FROM ${this.#fn('lh_ack_claim_many', 10)} c`, [
      q.id, q.claims, JSON.stringify(leases.map(heldBy)), encodeId(workerId), visibilityMs, minPriority, now, this.#maxAttempts, max, this.#inline(q),
    ]);
    const result = { ...sortAcks(leases, acks!.o_done), claimed: claimed.map((row) => leaseOf<E>(row, workerId, this.#queueName, q.origin)) };
    if (result.acked.length > 0) this.#changed(q, heard);
    return result;
  }

  async ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions): Promise<Lease<E> | null> {
    checkLease(lease, this.#queueName);
    const minPriority = checkClaim(workerId, visibilityMs, options);
    const { now, q, heard } = await this.#begin(true);
    const [group, seq, attempt, holder] = heldBy(lease);
    const rows = await this.#db.query<LeaseRow & { o_lost: boolean }>(`SELECT * FROM ${this.#fn('lh_ack_claim_one', 12)}`, [
      q.id, q.claims, group, seq, attempt, holder, encodeId(workerId), visibilityMs, minPriority, now, this.#maxAttempts, this.#inline(q),
    ]);
    if (rows[0]?.o_lost) throw lost(lease);
    this.#changed(q, heard);
    return rows[0] ? leaseOf<E>(rows[0], workerId, this.#queueName, q.origin) : null;
  }

  async nack(lease: Lease<E>, delayMs = 0, reason?: string): Promise<void> {
    return this.#giveBack('lh_release', lease, delayMs, reason);
  }

  async release(lease: Lease<E>, delayMs = 0, reason?: string): Promise<void> {
    return this.#giveBack('lh_release_keeping', lease, delayMs, reason);
  }

  async #giveBack(fn: 'lh_release' | 'lh_release_keeping', lease: Lease<E>, delayMs: number, reason: unknown): Promise<void> {
    checkLease(lease, this.#queueName);
    checkDuration('delayMs', delayMs, false);
    const why = checkReason(reason);
    const { now, q, heard } = await this.#begin(true);
    const [row] =
      fn === 'lh_release_keeping'
        ? await this.#db.query<{ ok: boolean }>(`SELECT ${this.#fn(fn, 9)} AS ok`, [q.id, ...heldBy(lease), delayMs, why === null ? null : encodeId(why), now, q.channel])
        : why === null
          ? await this.#db.query<{ ok: boolean }>(`SELECT ${this.#fn(fn, 8)} AS ok`, [q.id, ...heldBy(lease), delayMs, now, q.channel])
          : await this.#db.query<{ ok: boolean }>(`SELECT ${this.#fn('lh_fail', 9)} AS ok`, [q.id, ...heldBy(lease), delayMs, encodeId(why), now, q.channel]);
    if (!row!.ok) throw lost(lease);
    this.#changed(null, heard);
  }

  async reject(lease: Lease<E>, reason?: string): Promise<void> {
    checkLease(lease, this.#queueName);
    const why = checkReason(reason);
    const { now, q, heard } = await this.#begin(true);
    const [row] = await this.#db.query<{ ok: boolean }>(`SELECT ${this.#fn('lh_reject', 8)} AS ok`, [q.id, ...heldBy(lease), why === null ? null : encodeId(why), now, q.channel]);
    if (!row!.ok) throw lost(lease);
    this.#changed(null, heard);
  }

  async extend(lease: Lease<E>, visibilityMs: number): Promise<Lease<E>> {
    checkLease(lease, this.#queueName);
    checkDuration('visibilityMs', visibilityMs, true);
    const { now, q } = await this.#begin(true);
    const [row] = await this.#db.query<{ until: number | null }>(`SELECT ${this.#fn('lh_extend', 7)} AS until`, [q.id, ...heldBy(lease), visibilityMs, now]);
    if (row!.until === null) throw lost(lease);
    return { ...lease, expiresAt: row!.until, queue: this.#queueName };
  }

  async expireLeases(workerId: string): Promise<number> {
    checkId('workerId', workerId);
    const { now, q, heard } = await this.#begin(true);
    const rows = await this.#db.query<{ n: string }>(
      `WITH t AS (SELECT coalesce($3::double precision, ${this.#s}.lh_now()) AS now),
       ended AS (UPDATE ${this.#s}.lh_groups g SET locked_until = t.now - 1 FROM t
         WHERE g.queue = $1 AND g.holder = $2 AND g.locked_until >= t.now RETURNING 1)
       SELECT count(*) AS n FROM ended`,
      [q.id, workerId, now],
    );
    const ended = Number(rows[0]!.n);
    if (ended > 0) this.#changed(q, heard);
    return ended;
  }

  async stats(): Promise<TransportStats> {
    const { now, q } = await this.#begin(true);
    const [row] = await this.#db.query<StatsRow>(statsQuery(this.#s), [q.id, now]);
    return statsFrom(row!);
  }

  async cancel(seq: number): Promise<boolean> {
    checkSeq(seq);
    const { now, q, heard } = await this.#begin(true);
    const [row] = await this.#db.query<{ outcome: number }>(`SELECT ${this.#fn('lh_cancel', 4)} AS outcome`, [q.id, seq, now, q.channel]);
    const outcome = row!.outcome;
    if (outcome === -1) {
      throw new LeaseholdError('MESSAGE_LEASED', `message ${seq} is under a live lease and cannot be cancelled; cancel it after its holder acks or nacks it, or once the lease runs out`);
    }
    if (outcome === 2) this.#changed(null, heard);
    return outcome > 0;
  }

  async inspect(): Promise<TransportSnapshot<E>> {
    const { now, q } = await this.#begin(true);
    const [row] = await this.#db.query<InspectRow>(inspectQuery(this.#s), [q.id, now]);
    return snapshotFrom<E>(row!);
  }

  async inspectGroup(groupId: string): Promise<GroupInspection<E>> {
    checkId('groupId', groupId);
    checkIndexedId('groupId', groupId);
    const { now, q } = await this.#begin(true);
    const [row] = await this.#db.query<InspectRow>(inspectQuery(this.#s, true), [q.id, now, encodeId(groupId)]);
    return groupInspectionFrom<E>(groupId, row!);
  }

  async deadLetters(): Promise<DeadLetter<E>[]> {
    const { q } = await this.#begin(false);
    const [row] = await this.#db.query<{ dead: DeadJson[] }>(`SELECT ${deadLettersSelect(this.#s)} AS dead`, [q.id]);
    return deadLettersFrom<E>(row!.dead);
  }

  async redrive(seq: number): Promise<number> {
    checkSeq(seq);
    const { q, heard } = await this.#begin(false);
    const [row] = await this.#db.query<{ seq: string | null }>(`SELECT ${this.#fn('lh_redrive', 4)} AS seq`, [q.id, q.seqs, seq, q.channel]);
    if (row!.seq === null) throw new LeaseholdError('NOT_FOUND', `message ${seq} is not a dead letter`);
    this.#changed(null, heard);
    return Number(row!.seq);
  }

  async discard(seq: number, options?: RemoveOptions): Promise<Removed> {
    checkSeq(seq);
    const dependents = checkRemoveOptions(options);
    const removed = await this.#remove(seq, null, dependents);
    if (removed.seqs.length === 0) throw new LeaseholdError('NOT_FOUND', dependents ? `message ${seq} is neither a dead letter nor queued` : `message ${seq} is not a dead letter`);
    return removed;
  }

  async cancelGroup(groupId: string, options?: RemoveOptions): Promise<Removed> {
    checkId('groupId', groupId);
    checkIndexedId('groupId', groupId);
    return this.#remove(null, encodeId(groupId), checkRemoveOptions(options));
  }

  /** Runs `lh_remove_dependents` (see sql/remove.ts) for a seq or a group. */
  async #remove(seq: number | null, group: string | null, dependents: boolean): Promise<Removed> {
    const { now, q, heard } = await this.#begin(true);
    const rows = await this.#db.query<{ o_seq: string; o_group: string | null }>(`SELECT o_seq, o_group FROM ${this.#fn('lh_remove_dependents', 6)}`, [
      q.id, seq, group, dependents, now, q.channel,
    ]);
    const leasedSeq = rows.length === 1 && Number(rows[0]!.o_seq) < 0 ? -Number(rows[0]!.o_seq) : null;
    if (leasedSeq !== null) throw leasedError(leasedSeq, 'removed');
    if (rows.length > 0) this.#changed(null, heard);
    return removedOf(rows.map((row) => [Number(row.o_seq), decodeId(row.o_group!)] as const));
  }

  async pause(groupId?: string): Promise<void> {
    const group = checkGroupArgument(groupId);
    const { q } = await this.#begin(false);
    await this.#db.query(`SELECT ${this.#fn('lh_pause', 2)}`, [q.id, group]);
  }

  async resume(groupId?: string): Promise<void> {
    const group = checkGroupArgument(groupId);
    const { q, heard } = await this.#begin(false);
    const [row] = await this.#db.query<{ resumed: boolean }>(`SELECT ${this.#fn('lh_resume', 3)} AS resumed`, [q.id, group, q.channel]);
    if (row!.resumed) this.#changed(null, heard);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    await this.#stopListening();
  }

  /**
   * Calls `listener` (on a microtask) after a publish, ack, nack or redrive through this object,
   * and, through `LISTEN`, after those of any other connection, process or machine on the same
   * queue. While anybody listens the transport holds one listening connection (on a pool, one
   * of its connections). Work that becomes claimable because time passed raises no notice.
   */
  onChange(listener: () => void): () => void {
    const unsubscribe = this.#listeners.add(listener);
    if (!this.#unlisten && !this.#closed) {
      const epoch = this.#listenEpoch;
      this.#unlisten = this.#open()
        .then((q) => this.#db.listen(q.channel, () => this.#listeners.notify()))
        .then((stop) => {
          this.#listening = epoch === this.#listenEpoch;
          return stop;
        })
        // Without a listening connection, notices from this object still arrive; others are polled for.
        .catch(() => null);
    }
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      unsubscribe();
      if (this.#listeners.size === 0) void this.#stopListening();
    };
  }

  /**
   * For acks, the hot path of every consumer: the channel the server-side function NOTIFYs inside
   * its transaction, or null when the driver sends the notice after the commit itself
   * (`db.notify`, a server: an in-transaction NOTIFY holds a database-wide lock through the
   * commit flush, so concurrent acks would commit one flush at a time). Publishes, nacks,
   * cancels and redrives always NOTIFY inside their transaction: their notice then cannot be
   * lost to a process that ends right after the call.
   */
  #inline(q: QueueRefs): string | null {
    return this.#db.notify ? null : q.channel;
  }

  /**
   * After a change this object committed: announce it (`q`: an ack whose notice the driver sends
   * after the commit) and tell listeners now, unless the notice will come through LISTEN.
   * `heard`: whether LISTEN was established before the change's statement was sent. Only then is
   * its notice sure to come through LISTEN: one set up while the statement ran may have begun
   * after the commit, and its notice is lost to it (a listener may then be told twice, which a
   * hint allows, rather than not at all).
   */
  #changed(q: QueueRefs | null, heard: boolean): void {
    if (q) this.#db.notify?.(q.channel);
    if (!heard) this.#listeners.notify();
  }

  async #stopListening(): Promise<void> {
    const pending = this.#unlisten;
    this.#unlisten = null;
    this.#listening = false;
    this.#listenEpoch++;
    const stop = await pending;
    await stop?.();
  }

  /**
   * What every call does before its statement, written once: refuses a closed transport, reads
   * the clock (when `withClock`) before its first await, so a call means "at this instant", opens
   * the queue, and notes whether a listener was live then, for the notice after a change.
   * @throws ClosedError when the transport was closed; whatever the clock or the open throws.
   */
  async #begin(withClock: boolean): Promise<{ q: QueueRefs; now: number | null; heard: boolean }> {
    this.#ensureOpen();
    const now = withClock ? this.#now() : null;
    const q = await this.#open();
    return { q, now, heard: this.#listening };
  }

  #ensureOpen(): void {
    if (this.#closed) throw new ClosedError('transport');
  }
}

/** The lease's group, seq, attempt and holder, as the functions take them. */
function heldBy(lease: Lease<unknown>): [string, number, number, string] {
  return [encodeId(lease.groupId), lease.seq, lease.attempt, encodeId(lease.workerId)];
}

/** The leases as acked or lost, in input order, from the functions' letters ('t' acked, else lost). */
function sortAcks<E>(leases: readonly Lease<E>[], done: string): AckManyResult<E> {
  const result: AckManyResult<E> = { acked: [], lost: [] };
  leases.forEach((lease, i) => (done[i] === 't' ? result.acked : result.lost).push(lease));
  return result;
}

function lost(lease: Lease<unknown>): LeaseLostError {
  return new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
}

function leaseOf<E>(row: LeaseRow, workerId: string, queue: string, origin: string): Lease<E> {
  const counter = Number(row.o_counter);
  const revision = row.o_revision!;
  return {
    seq: Number(row.o_seq), groupId: decodeId(row.o_group), event: JSON.parse(row.o_event) as E, workerId, attempt: row.o_attempt, expiresAt: row.o_expires, queue,
    origin, counter, lowWater: Number(row.o_low), revision, deliveryId: deliveryId(origin, queue, counter, revision),
  };
}

/** pause/resume's optional group: checked, and as stored (null: the whole queue). */
function checkGroupArgument(groupId: string | undefined): string | null {
  if (groupId === undefined) return null;
  checkId('groupId', groupId);
  checkIndexedId('groupId', groupId);
  return encodeId(groupId);
}

/** `$1, …, $n`. */
function params(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
}
