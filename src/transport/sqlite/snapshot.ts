/**
 * The read side of the SQLite transport: `stats()` and `inspect()` from its tables, and how a
 * row reads as a snapshot or a dead letter. Apart from the transport because nothing here
 * writes, and nothing on the claim and ack paths reads it.
 * @internal
 */
import { BLOCKED, NO_DEADLINE } from '../../locks.js';
import type { SqlStatement } from '../../sqlite/driver.js';
import type { TransportStatement } from '../../sqlite/sql/transport.js';
import type { DeadLetter, GroupInspection, GroupSnapshot, MessageSnapshot, MessageWindow, TransportSnapshot, TransportStats } from '../contract.js';
import { headState, waitingState } from '../shared.js';

/** The transport's prepared statements. */
export type Statements = Record<TransportStatement, SqlStatement>;

/** A group's row as inspect reads it. */
interface GroupRow {
  group_id: string;
  priority: number;
  claim_order: number;
  head_attempt: number;
  holder: string | null;
  locked_until: number | null;
  held_seq: number | null;
  paused: number | null;
}
/** A queue's counters row as stats and inspect read it. */
interface QueueRow {
  queued: number;
  paused: number | null;
  paused_groups: number;
}
/** A message's row as inspect reads it. */
interface MessageRow {
  group_id: string;
  seq: number;
  event: string;
  key: string | null;
  not_before: number | null;
  /** Its own delay while it waits on `after` (`not_before` is then BLOCKED). */
  delay_until: number | null;
  debounce_deadline: number | null;
  last_error: string | null;
}
/** One `after` wait: message `seq` waits for `on_seq`. */
interface WaitRow {
  seq: number;
  on_seq: number;
}
/** A dead letter's row; `counter` where the statement reads it (a redrive keeps it). */
export interface DeadRow {
  seq: number;
  group_id: string;
  priority: number;
  event: string;
  attempt: number;
  dead_at: number;
  reason: string | null;
  counter?: number;
  revision?: number;
}
/** The counts of a queue's groups by state, and the next deadline. */
interface StatsRow {
  groups: number;
  ready: number | null;
  leased: number | null;
  held: number | null;
  blocked: number | null;
  next: number | null;
}

/** `stats()` of queue `queue` at `now`, inside the caller's transaction. */
export function readStats(sql: Statements, queue: number, now: number): TransportStats {
  const counts = sql.countGroups.get<StatsRow>(now, now, now, queue)!;
  const row = sql.queueRow.get<QueueRow>(queue, queue)!;
  const paused = row.paused !== null;
  // A paused queue has nothing ready and no deadline that would make anything ready.
  const ready = paused ? 0 : (counts.ready ?? 0);
  const leased = counts.leased ?? 0;
  const held = counts.held ?? 0;
  const blocked = counts.blocked ?? 0;
  return {
    queued: row.queued,
    groups: counts.groups,
    ready,
    leased,
    waiting: counts.groups - ready - leased - held - blocked,
    dead: sql.countDead.get<{ n: number }>(queue)!.n,
    held,
    blocked,
    paused,
    pausedGroups: row.paused_groups,
    nextReadyAt: counts.next === null || paused ? null : counts.next + 1,
  };
}

/** `inspect()` of queue `queue` at `now`, inside the caller's transaction. */
export function readSnapshot<E>(sql: Statements, queue: number, now: number): TransportSnapshot<E> {
  const groups = new Map<string, { snapshot: GroupSnapshot<E>; row: GroupRow }>();
  for (const row of sql.groups.all<GroupRow>(queue)) groups.set(row.group_id, { row, snapshot: groupOf<E>(row, now) });
  const queuePaused = sql.queueRow.get<QueueRow>(queue, queue)!.paused !== null;
  const waits = waitsBySeq(sql.waits.all<WaitRow>(queue));
  for (const row of sql.messages.all<MessageRow>(queue)) {
    const { snapshot, row: group } = groups.get(row.group_id)!;
    addMessage(snapshot, row, group, queuePaused, waits, now);
  }
  return { now, paused: queuePaused, groups: [...groups.values()].map((g) => g.snapshot), deadLetters: sql.deadLetters.all<DeadRow>(queue).map(deadLetterOf<E>) };
}

/** `inspectGroup()` of group `groupId` of queue `queue` at `now`, inside the caller's transaction. */
export function readGroup<E>(sql: Statements, queue: number, groupId: string, now: number): GroupInspection<E> {
  const queuePaused = sql.queueRow.get<QueueRow>(queue, queue)!.paused !== null;
  const row = sql.group.get<GroupRow>(queue, groupId);
  const deadLetters = sql.groupDeadLetters.all<DeadRow>(queue, groupId).map(deadLetterOf<E>);
  if (!row) return { groupId, now, queuePaused, group: null, deadLetters };
  const group = groupOf<E>(row, now);
  const waits = waitsBySeq(sql.groupWaits.all<WaitRow>(queue, groupId));
  for (const message of sql.groupMessages.all<MessageRow>(queue, groupId)) addMessage(group, message, row, queuePaused, waits, now);
  return { groupId, now, queuePaused, group, deadLetters };
}

function groupOf<E>(row: GroupRow, now: number): GroupSnapshot<E> {
  return {
    groupId: row.group_id,
    priority: row.priority,
    claimOrder: row.claim_order,
    inFlight: row.held_seq === null && row.locked_until !== null && row.locked_until >= now && row.locked_until < BLOCKED,
    heldBy: row.held_seq,
    paused: row.paused !== null,
    messages: [],
  };
}

/** The seqs each waiting message waits for, ascending (the rows come ordered by what they wait for). */
function waitsBySeq(rows: WaitRow[]): Map<number, number[]> {
  const bySeq = new Map<number, number[]>();
  for (const { seq, on_seq } of rows) {
    const seqs = bySeq.get(seq);
    if (seqs) seqs.push(on_seq);
    else bySeq.set(seq, [on_seq]);
  }
  return bySeq;
}

function addMessage<E>(snapshot: GroupSnapshot<E>, row: MessageRow, group: GroupRow, queuePaused: boolean, waits: Map<number, number[]>, now: number): void {
  // The head carries the group's lease; every later message is untouched.
  const isHead = snapshot.messages.length === 0;
  snapshot.messages.push(snapshotOf<E>(row, isHead ? group : undefined, group.held_seq !== null, queuePaused || group.paused !== null, waits.get(row.seq) ?? [], now));
}

/** A message's running coalescing window: it has a bound and its wait (behind `after`: its own delay) has not ended. */
export function windowOf(notBefore: number | null, delayUntil: number | null, deadline: number | null, now: number): MessageWindow | null {
  const until = notBefore === BLOCKED ? delayUntil : notBefore;
  if (deadline === null || until === null || until < now) return null;
  return { endsAt: until, latestEndAt: deadline === NO_DEADLINE ? null : deadline };
}

function snapshotOf<E>(row: MessageRow, lease: GroupRow | undefined, held: boolean, paused: boolean, waitsFor: number[], now: number): MessageSnapshot<E> {
  const window = windowOf(row.not_before, row.delay_until, row.debounce_deadline, now);
  const base = { seq: row.seq, groupId: row.group_id, event: JSON.parse(row.event) as E, key: row.key, lastError: row.last_error, waitsFor, window };
  if (held) return { ...base, state: 'held', attempt: 0, holder: null, expiresAt: null };
  if (paused && !(lease && lease.holder !== null && lease.locked_until! >= now)) return { ...base, state: 'paused', attempt: lease?.head_attempt ?? 0, holder: null, expiresAt: null };
  const holder = lease?.holder ?? null;
  const expiry = lease ? lease.locked_until : row.not_before;
  const state = lease ? headState(holder, expiry, lease.head_attempt, now) : waitingState(row.not_before, now);
  return { ...base, state, attempt: lease?.head_attempt ?? 0, holder, expiresAt: state === 'ready' || state === 'blocked' ? null : expiry };
}

/** A dead letter's row as the contract's dead letter. */
export function deadLetterOf<E>(row: DeadRow): DeadLetter<E> {
  return { seq: row.seq, groupId: row.group_id, priority: row.priority, event: JSON.parse(row.event) as E, attempt: row.attempt, deadAt: row.dead_at, reason: row.reason };
}
