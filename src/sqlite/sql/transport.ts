/**
 * Every statement the SQLite transport runs, as current source, by what it does; the claim
 * first. `SqliteTransport` prepares each once per connection (`TRANSPORT_STATEMENTS`) and the
 * batch statements once per size (`batchAck`, `batchLease`). The tables they read are in
 * `tables.ts`; the triggers that keep counters and group rows in step with every statement, in
 * `triggers.ts`.
 *
 * Plain `?` parameters, with a value repeated where it is used twice: better-sqlite3 binds
 * numbered ones only by name, from an object that would be built on every call. Each
 * statement's comment lists its parameters in order.
 * @internal
 */
import { BLOCKED, HELD } from '../../locks.js';

// Whether the queue is paused: a term of no table, which SQLite evaluates once, before the walk (queue).
const queueRuns = '(SELECT paused FROM lh_counters WHERE queue_id = ?) IS NULL';
// Free groups and groups whose lease, park or delay ran out, not paused, in round-robin
// order (queue, floor, now, queue).
const nextGroup =
  'SELECT group_id, priority FROM lh_groups WHERE queue_id = ? AND priority >= ? AND (locked_until IS NULL OR locked_until < ?) ' +
  `AND paused IS NULL AND ${queueRuns} ORDER BY claim_order, first_seq LIMIT 1`;
// A lease holds while the group's head is still `seq`, still at `attempt`, still held by it
// (queue, group, holder, attempt, seq, queue, group).
const held = 'queue_id = ? AND group_id = ? AND holder = ? AND head_attempt = ? AND ? = (SELECT seq FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1)';
// The next claim order: one past every claim before it, also of groups since deleted, whose
// largest order `lh_claimed_group_gone` keeps in `claims` (queue, queue).
const nextOrder = 'max((SELECT claims FROM lh_counters WHERE queue_id = ?), (SELECT max(claim_order) FROM lh_groups WHERE queue_id = ?))';
// The leased group's head as one JSON array [seq, counter, revision, event] (the event is
// stored as JSON): one lookup instead of one per column, and the event is parsed with it (queue).
const headOf = "(SELECT '[' || seq || ',' || counter || ',' || revision || ',' || event || ']' FROM lh_messages m WHERE m.queue_id = ? AND m.group_id = lh_groups.group_id ORDER BY m.seq LIMIT 1) AS head";
// The low-water mark (Lease.lowWater): the lowest counter still queued, through
// lh_messages_by_counter (queue). The claim returns it; batches read it once for all their leases.
const lowWater = 'SELECT min(counter) FROM lh_messages WHERE queue_id = ?';

/** The transport's statements by name, prepared once per connection. */
export const TRANSPORT_STATEMENTS = {
  // ── The claim ─────────────────────────────────────────────────────────────────────────────────
  // A claim picks the first group in round-robin order (the claim-order index) whose head is free
  // or whose lock ran out, leases that head on the group row, and returns it with the low-water
  // mark: one statement. The walk passes only groups in flight (about one per worker), whatever
  // the backlog. The seed's query (which sorts every queued message) lives on in the tests as
  // an oracle: both must pick the same message.
  //
  // One statement picks the group in round-robin order, leases its head and returns it with
  // the low-water mark, unless the head already had maxAttempts deliveries (then no row
  // comes back). Being one statement, it needs no transaction of its own (the claim
  // operation's `alone`). OR FAIL: nothing here can violate a constraint, and any failure
  // rolls back the caller's whole transaction or savepoint, so the statement journal that lets
  // ABORT undo one statement would never be used (holder, expiry, queue, queue, queue, queue,
  // floor, now, queue, maxAttempts, queue, queue).
  claimGroup:
    'UPDATE OR FAIL lh_groups SET holder = ?, locked_until = ?, head_attempt = head_attempt + 1, ' +
    `claim_order = ${nextOrder} + 1 ` +
    `WHERE queue_id = ? AND group_id = (SELECT group_id FROM (${nextGroup})) AND head_attempt < ? ` +
    `RETURNING group_id, head_attempt, ${headOf}, (${lowWater}) AS low`,
  // The walk alone: a claim that found a head due for the dead letters walks again (queue, floor, now, queue).
  nextGroup,
  head: 'SELECT seq, event, counter, revision FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1',
  // claimMany's fast path: the first `max` claimable groups in round-robin order with their
  // heads and the last claim order, in one statement (queue, queue, queue, floor, now, queue, max, queue, queue).
  claimable:
    `SELECT g.group_id, g.head_attempt, m.seq, m.event, m.counter, m.revision, ${nextOrder} AS claims FROM ` +
    '(SELECT group_id, head_attempt, claim_order, first_seq FROM lh_groups WHERE queue_id = ? AND priority >= ? AND (locked_until IS NULL OR locked_until < ?) ' +
    `AND paused IS NULL AND ${queueRuns} ORDER BY claim_order, first_seq LIMIT ?) g ` +
    'JOIN lh_messages m ON m.queue_id = ? AND m.group_id = g.group_id AND m.seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = ? AND group_id = g.group_id) ' +
    'ORDER BY g.claim_order, g.first_seq',
  lowWater: `SELECT (${lowWater}) AS low`,

  // ── Publish ───────────────────────────────────────────────────────────────────────────────────
  // A publish takes the next seq and counter from the queue's counters row in its own transaction;
  // a key names one pending message (skip, replace or merge).
  //
  // The next seq and the next counter (the counter a server checks for gaps), in the publish's own transaction.
  insertMessage: 'INSERT INTO lh_messages (queue_id, group_id, seq, event, key, not_before, counter) SELECT ?, ?, last_seq + 1, ?, ?, ?, last_counter + 1 FROM lh_counters WHERE queue_id = ? RETURNING seq',
  // A new group's head is its first message: held by that message's delay, if any.
  // A new group is paused if its name is (queue, group, priority, first seq, lock, queue, group).
  insertGroup:
    'INSERT OR IGNORE INTO lh_groups (queue_id, group_id, priority, first_seq, locked_until, paused) ' +
    'VALUES (?, ?, ?, ?, ?, (SELECT 1 FROM lh_paused_groups WHERE queue_id = ? AND group_id = ?))',
  findKey: 'SELECT seq FROM lh_messages WHERE queue_id = ? AND group_id = ? AND key = ?',
  // A replace or merge needs the keyed message's event and whether it is a leased head (queue, group, key).
  findKeyed:
    'SELECT m.seq, m.event, m.revision, m.debounce_deadline, g.holder, g.locked_until, m.seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = m.queue_id AND group_id = m.group_id) AS is_head ' +
    'FROM lh_messages m JOIN lh_groups g ON g.queue_id = m.queue_id AND g.group_id = m.group_id WHERE m.queue_id = ? AND m.group_id = ? AND m.key = ?',
  // (event, revision, queue, group, seq)
  setEvent: 'UPDATE lh_messages SET event = ?, revision = ? WHERE queue_id = ? AND group_id = ? AND seq = ?',
  dropKey: 'UPDATE lh_messages SET key = NULL WHERE queue_id = ? AND group_id = ? AND seq = ?',
  // A head whose lease ran out, changed by a replace or merge: its late holder's lease no
  // longer holds (the claim will count the attempt it had, as after any lapse).
  fenceHead: 'UPDATE lh_groups SET holder = NULL, locked_until = NULL WHERE queue_id = ? AND group_id = ?',
  // A coalescing window met a queued message: its bound, and the later of its wait and the
  // window's end — in `delay_until` while it waits on `after` (`not_before` is then BLOCKED).
  // (deadline, not before, not before, queue, group, seq)
  rearmMessage:
    'UPDATE lh_messages SET debounce_deadline = ?, ' +
    `delay_until = CASE WHEN not_before = ${BLOCKED} THEN max(coalesce(delay_until, 0), ?) ELSE delay_until END, ` +
    `not_before = CASE WHEN not_before = ${BLOCKED} THEN not_before ELSE max(coalesce(not_before, 0), ?) END ` +
    'WHERE queue_id = ? AND group_id = ? AND seq = ?',
  // ...and, when it is a head that is not leased, its group's lock: max keeps a park, a hold
  // (HELD) or a block (BLOCKED) that ends later. (not before, queue, group)
  rearmHead: 'UPDATE lh_groups SET locked_until = max(coalesce(locked_until, 0), ?) WHERE queue_id = ? AND group_id = ? AND holder IS NULL',
  // The bound of a new message's window (deadline, queue, group, seq).
  setDeadline: 'UPDATE lh_messages SET debounce_deadline = ? WHERE queue_id = ? AND group_id = ? AND seq = ?',

  // ── Ack, nack, release, extend ────────────────────────────────────────────────────────────────
  // Every one holds only while the lease does: the group's head is still the leased seq, at the
  // same attempt, held by the same worker.
  ackHead:
    'DELETE FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq = ? ' +
    'AND EXISTS (SELECT 1 FROM lh_groups WHERE queue_id = ? AND group_id = ? AND holder = ? AND head_attempt = ?) ' +
    'AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq < ?)',
  releaseHead: `UPDATE lh_groups SET holder = NULL, locked_until = ? WHERE ${held}`,
  // A release hands the attempt back: the next claim's increment gives the same one again.
  releaseKeep: `UPDATE lh_groups SET holder = NULL, locked_until = ?, head_attempt = head_attempt - 1 WHERE ${held}`,
  // After a nack that gives a reason (reason, queue, group, seq).
  setLastError: 'UPDATE lh_messages SET last_error = ? WHERE queue_id = ? AND group_id = ? AND seq = ?',
  extendHead: `UPDATE lh_groups SET locked_until = ? WHERE ${held}`,
  // Ends a worker's live leases as if they ran out (now - 1, queue, worker, now).
  expireHeld: 'UPDATE lh_groups SET locked_until = ? WHERE queue_id = ? AND holder = ? AND locked_until >= ?',
  holds: `SELECT 1 AS ok FROM lh_groups WHERE ${held}`,

  // ── Dead letters ──────────────────────────────────────────────────────────────────────────────
  // A head that ran out of attempts, or was rejected, moves to lh_dead_letters; under the queue's
  // hold policy its group waits at it until a redrive or a discard.
  // (now, reason, queue, group, seq)
  buryHead:
    'INSERT INTO lh_dead_letters (queue_id, seq, group_id, priority, event, attempt, dead_at, reason, counter, revision) ' +
    'SELECT m.queue_id, m.seq, m.group_id, g.priority, m.event, g.head_attempt, ?, coalesce(?, m.last_error), m.counter, m.revision FROM lh_messages m ' +
    'JOIN lh_groups g ON g.queue_id = m.queue_id AND g.group_id = m.group_id WHERE m.queue_id = ? AND m.group_id = ? AND m.seq = ?',
  deleteMessage: 'DELETE FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq = ?',
  // Read where a message dies, not kept: another transport may name the policy later.
  policy: "SELECT on_dead_letter = 'hold' AS hold FROM lh_counters WHERE queue_id = ?",
  // Before its head is deleted, so that the removal trigger leaves the group as it is (seq, queue, group).
  holdGroup: `UPDATE lh_groups SET held_seq = ?, holder = NULL, head_attempt = 0, locked_until = ${HELD} WHERE queue_id = ? AND group_id = ?`,
  heldSeq: 'SELECT held_seq FROM lh_groups WHERE queue_id = ? AND group_id = ?',
  // Lifts a hold: the head (if any) is free, or held by its own delay (queue, group, queue, group).
  unhold:
    'UPDATE lh_groups SET held_seq = NULL, head_attempt = 0, holder = NULL, ' +
    'locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1) WHERE queue_id = ? AND group_id = ?',
  dropEmptyGroup: 'DELETE FROM lh_groups WHERE queue_id = ? AND group_id = ? AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = ? AND group_id = ?)',
  deadLetters: 'SELECT seq, group_id, priority, event, attempt, dead_at, reason FROM lh_dead_letters WHERE queue_id = ? ORDER BY id',
  deadLetter: 'SELECT seq, group_id, priority, event, attempt, dead_at, reason, counter, revision FROM lh_dead_letters WHERE queue_id = ? AND seq = ?',
  deleteDeadLetter: 'DELETE FROM lh_dead_letters WHERE queue_id = ? AND seq = ?',
  // A redrive to the head: the message comes back under its own seq, watched if anything
  // waits for it, with its own counter and revision (queue, group, seq, event, counter, revision, queue, seq).
  restoreMessage: 'INSERT INTO lh_messages (queue_id, group_id, seq, event, counter, revision, watched) VALUES (?, ?, ?, ?, ?, ?, (SELECT 1 FROM lh_waits WHERE queue_id = ? AND on_seq = ? LIMIT 1))',
  // A dead letter redriven to the tail: a new seq, its own counter and revision (queue, group, event, counter, revision, queue).
  redriveMessage: 'INSERT INTO lh_messages (queue_id, group_id, seq, event, counter, revision) SELECT ?, ?, last_seq + 1, ?, ?, ? FROM lh_counters WHERE queue_id = ? RETURNING seq',
  countDead: 'SELECT count(*) AS n FROM lh_dead_letters WHERE queue_id = ?',

  // ── After ─────────────────────────────────────────────────────────────────────────────────────
  // A message that waits for others counts them and carries the lock BLOCKED; the triggers count
  // each one off as it leaves (see triggers.ts).
  // `after`: what a publish must know of each seq it names, and the rows that make it wait.
  lastSeq: 'SELECT last_seq FROM lh_counters WHERE queue_id = ?',
  isDead: 'SELECT 1 AS dead FROM lh_dead_letters WHERE queue_id = ? AND seq = ?',
  // (queue, group, event, key, BLOCKED, its own delay, waits, queue)
  insertWaiting: 'INSERT INTO lh_messages (queue_id, group_id, seq, event, key, not_before, delay_until, waits, counter) SELECT ?, ?, last_seq + 1, ?, ?, ?, ?, ?, last_counter + 1 FROM lh_counters WHERE queue_id = ? RETURNING seq',
  addWait: 'INSERT INTO lh_waits (queue_id, on_seq, group_id, seq) VALUES (?, ?, ?, ?)',
  watch: 'UPDATE lh_messages SET watched = 1 WHERE queue_id = ? AND group_id = ? AND seq = ?',
  // A dead letter redriven to the tail: its waiters wait for its new seq (new, queue, old).
  moveWaits: 'UPDATE lh_waits SET on_seq = ? WHERE queue_id = ? AND on_seq = ?',

  // ── Pause and resume ──────────────────────────────────────────────────────────────────────────
  pauseQueue: 'UPDATE lh_counters SET paused = ? WHERE queue_id = ? AND paused IS NOT ?',
  // (queue, group) each
  pauseName: 'INSERT OR IGNORE INTO lh_paused_groups (queue_id, group_id) VALUES (?, ?)',
  resumeName: 'DELETE FROM lh_paused_groups WHERE queue_id = ? AND group_id = ?',
  // (paused, queue, group)
  pauseGroup: 'UPDATE lh_groups SET paused = ? WHERE queue_id = ? AND group_id = ?',

  // ── Stats, inspect, cancel ────────────────────────────────────────────────────────────────────
  // (queue, queue)
  queueRow: 'SELECT queued, paused, (SELECT count(*) FROM lh_paused_groups WHERE queue_id = ?) AS paused_groups FROM lh_counters WHERE queue_id = ?',
  countGroups:
    'SELECT count(*) AS groups, sum(paused IS NULL AND (locked_until IS NULL OR locked_until < ?)) AS ready, ' +
    `sum(holder IS NOT NULL AND locked_until >= ?) AS leased, sum(held_seq IS NOT NULL) AS held, sum(locked_until = ${BLOCKED}) AS blocked, ` +
    `min(CASE WHEN locked_until >= ? AND locked_until < ${BLOCKED} AND paused IS NULL THEN locked_until END) AS next ` +
    'FROM lh_groups WHERE queue_id = ?',
  groups: 'SELECT group_id, priority, claim_order, head_attempt, holder, locked_until, held_seq, paused FROM lh_groups WHERE queue_id = ? ORDER BY claim_order, first_seq',
  messages: 'SELECT group_id, seq, event, key, not_before, delay_until, debounce_deadline, last_error FROM lh_messages WHERE queue_id = ? ORDER BY seq',
  waits: 'SELECT seq, on_seq FROM lh_waits WHERE queue_id = ? ORDER BY on_seq',
  // One group's (inspectGroup): (queue, group) each.
  group: 'SELECT group_id, priority, claim_order, head_attempt, holder, locked_until, held_seq, paused FROM lh_groups WHERE queue_id = ? AND group_id = ?',
  groupMessages: 'SELECT group_id, seq, event, key, not_before, delay_until, debounce_deadline, last_error FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq',
  groupWaits: 'SELECT seq, on_seq FROM lh_waits WHERE queue_id = ? AND group_id = ? ORDER BY on_seq',
  groupDeadLetters: 'SELECT seq, group_id, priority, event, attempt, dead_at, reason FROM lh_dead_letters WHERE queue_id = ? AND group_id = ? ORDER BY id',
  // No index by seq alone: it would cost a written page on every publish and ack, and
  // cancelling is rare, so finding a message by seq scans the queue's messages.
  findSeq:
    'SELECT m.group_id, g.holder, g.locked_until, m.seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = m.queue_id AND group_id = m.group_id) AS is_head ' +
    'FROM lh_messages m JOIN lh_groups g ON g.queue_id = m.queue_id AND g.group_id = m.group_id WHERE m.queue_id = ? AND m.seq = ?',
  // Never-claimed groups tie on claim order and go by their head's seq: when a cancel removes
  // such a head, the next message takes its place. (Only a cancel can: an ack follows a claim.)
  // A removal with dependents (discard, cancelGroup): a group's messages from a seq on, each
  // with whether it is a head under a lease (queue, group, from)...
  groupFrom:
    'SELECT m.seq, g.holder, g.locked_until, m.seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = m.queue_id AND group_id = m.group_id) AS is_head ' +
    'FROM lh_messages m JOIN lh_groups g ON g.queue_id = m.queue_id AND g.group_id = m.group_id WHERE m.queue_id = ? AND m.group_id = ? AND m.seq >= ?',
  // ...and the messages waiting on one (queue, seq).
  waitersOf: 'SELECT group_id, seq FROM lh_waits WHERE queue_id = ? AND on_seq = ?',
  renumberUnclaimed: 'UPDATE lh_groups SET first_seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = ? AND group_id = ?) WHERE queue_id = ? AND group_id = ? AND claim_order = 0',
} as const;

/** A statement's name in {@link TRANSPORT_STATEMENTS}. */
export type TransportStatement = keyof typeof TRANSPORT_STATEMENTS;

// ── A queue's row ─────────────────────────────────────────────────────────────────────────────
// A queue exists once it has its counters row, which gives it its id; creating it is idempotent.

/** Creates queue `name`'s row if it has none (name). */
export const CREATE_QUEUE = 'INSERT OR IGNORE INTO lh_counters (name, last_seq, claims) VALUES (?, 0, 0)';
/** A queue's id and failure policy (name). */
export const QUEUE_BY_NAME = 'SELECT queue_id, on_dead_letter FROM lh_counters WHERE name = ?';
/** Names the queue's failure policy, which the first transport that names one sets (policy, queue). */
export const SET_QUEUE_POLICY = 'UPDATE lh_counters SET on_dead_letter = ? WHERE queue_id = ?';
/** The database's origin, a random id made with its tables, which every lease carries. */
export const ORIGIN = 'SELECT origin FROM lh_origin WHERE id = 1';

// ── Batches ───────────────────────────────────────────────────────────────────────────────────

/**
 * ackMany's DELETE of `count` leases of distinct groups: each message goes only if its lease
 * still holds and it is its group's head (group, seq, holder, attempt per lease; queue ×3).
 * Returns the removed rows' group and seq.
 */
export function batchAck(count: number): string {
  return (
    `WITH l (group_id, seq, holder, attempt) AS (VALUES ${rows('(?, ?, ?, ?)', count)}) ` +
    'DELETE FROM lh_messages WHERE queue_id = ? AND (group_id, seq) IN ' +
    '(SELECT l.group_id, l.seq FROM l JOIN lh_groups g ON g.queue_id = ? AND g.group_id = l.group_id AND g.holder = l.holder AND g.head_attempt = l.attempt) ' +
    'AND NOT EXISTS (SELECT 1 FROM lh_messages e WHERE e.queue_id = ? AND e.group_id = lh_messages.group_id AND e.seq < lh_messages.seq) ' +
    'RETURNING group_id, seq'
  );
}

/**
 * claimMany's UPDATE that leases the heads of `count` groups at once, each with its own next
 * claim order (group, claim order per group; holder, expiry, queue).
 */
export function batchLease(count: number): string {
  return (
    `WITH l (group_id, claim_order) AS (VALUES ${rows('(?, ?)', count)}) ` +
    'UPDATE OR FAIL lh_groups SET claim_order = l.claim_order, holder = ?, locked_until = ?, head_attempt = head_attempt + 1 ' +
    'FROM l WHERE lh_groups.queue_id = ? AND lh_groups.group_id = l.group_id'
  );
}

function rows(row: string, count: number): string {
  return Array.from({ length: count }, () => row).join(', ');
}
