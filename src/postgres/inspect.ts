/**
 * The snapshot of a queue, read in one statement (one consistent view of groups, messages and
 * dead letters) and turned into the contract's shapes. Not fast, not meant to be: for
 * operators, tests and demos, not for a worker's loop. And the stats: counts only, cheap
 * enough to poll.
 * @internal
 */
import { BLOCKED, NO_DEADLINE } from '../locks.js';
import { headState, waitingState } from '../transport/shared.js';
import type { DeadLetter, GroupInspection, GroupSnapshot, MessageSnapshot, MessageWindow, TransportSnapshot, TransportStats } from '../transport/contract.js';
import { decodeId } from './ids.js';

interface GroupJson { g: string; p: number; o: number; a: number; h: string | null; u: number | null; x: number | null; z: boolean | null }
interface MessageJson { g: string; s: number; e: string; k: string | null; n: number | null; du: number | null; dd: number | null; r: string | null }
/** One `after` wait: message `s` waits for `o`. */
interface WaitJson { s: number; o: number }
export interface DeadJson { s: number; g: string; p: number; e: string; a: number; d: number; r: string | null }

export interface InspectRow {
  now: number;
  paused: boolean | null;
  groups: GroupJson[];
  messages: MessageJson[];
  waits: WaitJson[];
  dead: DeadJson[];
}

/**
 * $1: queue id; $2: the injected clock's reading, or null for the server's; with `byGroup`, $3:
 * the (encoded) group whose part alone is read (`inspectGroup`).
 */
export function inspectQuery(s: string, byGroup = false): string {
  const group = byGroup ? ' AND group_id = $3' : '';
  return `SELECT coalesce($2::double precision, ${s}.lh_now()) AS now,
    (SELECT paused FROM ${s}.lh_queues WHERE id = $1) AS paused,
    (SELECT coalesce(json_agg(json_build_object('g', group_id, 'p', priority, 'o', claim_order, 'a', head_attempt, 'h', holder, 'u', locked_until, 'x', held_seq, 'z', paused)
      ORDER BY claim_order, first_seq), '[]') FROM ${s}.lh_groups WHERE queue = $1${group}) AS groups,
    (SELECT coalesce(json_agg(json_build_object('g', group_id, 's', seq, 'e', event, 'k', key, 'n', not_before, 'du', delay_until, 'dd', debounce_deadline, 'r', last_error) ORDER BY seq), '[]')
      FROM ${s}.lh_messages WHERE queue = $1${group}) AS messages,
    (SELECT coalesce(json_agg(json_build_object('s', seq, 'o', on_seq) ORDER BY on_seq), '[]') FROM ${s}.lh_waits WHERE queue = $1${group}) AS waits,
    ${deadLettersSelect(s, group)} AS dead`;
}

/** The dead letters of queue $1 (with `where`, those it selects) as a JSON array, in the order they died. */
export function deadLettersSelect(s: string, where = ''): string {
  return `(SELECT coalesce(json_agg(json_build_object('s', seq, 'g', group_id, 'p', priority, 'e', event, 'a', attempt, 'd', dead_at, 'r', reason) ORDER BY id), '[]')
      FROM ${s}.lh_dead_letters WHERE queue = $1${where})`;
}

export function deadLettersFrom<E>(rows: DeadJson[]): DeadLetter<E>[] {
  return rows.map((d) => ({ seq: d.s, groupId: decodeId(d.g), priority: d.p, event: JSON.parse(d.e) as E, attempt: d.a, deadAt: d.d, reason: d.r === null ? null : decodeId(d.r) }));
}

export function snapshotFrom<E>(row: InspectRow): TransportSnapshot<E> {
  const groups = groupsFrom<E>(row);
  return { now: row.now, paused: row.paused === true, groups, deadLetters: deadLettersFrom<E>(row.dead) };
}

/** The row of `inspectQuery(s, true)` as one group's inspection. */
export function groupInspectionFrom<E>(groupId: string, row: InspectRow): GroupInspection<E> {
  const [group = null] = groupsFrom<E>(row);
  return { groupId, now: row.now, queuePaused: row.paused === true, group, deadLetters: deadLettersFrom<E>(row.dead) };
}

function groupsFrom<E>(row: InspectRow): GroupSnapshot<E>[] {
  const now = row.now;
  const queuePaused = row.paused === true;
  const waits = new Map<number, number[]>();
  for (const w of row.waits) {
    const seqs = waits.get(w.s);
    if (seqs) seqs.push(w.o);
    else waits.set(w.s, [w.o]);
  }
  const groups = new Map<string, { snapshot: GroupSnapshot<E>; lock: GroupJson }>();
  for (const g of row.groups) {
    groups.set(g.g, {
      lock: g,
      snapshot: { groupId: decodeId(g.g), priority: g.p, claimOrder: g.o, inFlight: g.x === null && g.u !== null && g.u >= now && g.u < BLOCKED, heldBy: g.x, paused: g.z === true, messages: [] },
    });
  }
  for (const m of row.messages) {
    const { snapshot, lock } = groups.get(m.g)!;
    // The head carries the group's lease; every later message is untouched.
    const head = snapshot.messages.length === 0;
    const base = { seq: m.s, groupId: snapshot.groupId, event: JSON.parse(m.e) as E, key: m.k === null ? null : decodeId(m.k), lastError: reasonOf(m), waitsFor: waits.get(m.s) ?? [], window: windowOf(m, now) };
    let message: MessageSnapshot<E>;
    const holder = head && lock.h !== null ? decodeId(lock.h) : null;
    // The head's lease, park or delay lives on its group; a message further back has only its own delay.
    const expiry = head ? lock.u : m.n;
    if (lock.x !== null) {
      message = { ...base, state: 'held', attempt: 0, holder: null, expiresAt: null };
    } else if ((queuePaused || lock.z === true) && !(holder !== null && expiry! >= now)) {
      message = { ...base, state: 'paused', attempt: head ? lock.a : 0, holder: null, expiresAt: null };
    } else {
      const state = head ? headState(holder, expiry, lock.a, now) : waitingState(m.n, now);
      message = { ...base, state, attempt: head ? lock.a : 0, holder, expiresAt: state === 'ready' || state === 'blocked' ? null : expiry };
    }
    snapshot.messages.push(message);
  }
  return [...groups.values()].map((g) => g.snapshot);
}

/** A message's running coalescing window: it has a bound and its wait (behind `after`: its own delay) has not ended. */
function windowOf(m: MessageJson, now: number): MessageWindow | null {
  const until = m.n === BLOCKED ? m.du : m.n;
  if (m.dd === null || until === null || until < now) return null;
  return { endsAt: until, latestEndAt: m.dd === NO_DEADLINE ? null : m.dd };
}

export interface StatsRow { queued: string; groups: string; ready: string; leased: string; held: string; blocked: string; next: number | null; dead: string; paused: boolean | null; paused_groups: string }

/** The counts of `stats()` in one statement. $1: queue id; $2: the injected clock's reading, or null for the server's. */
export function statsQuery(s: string): string {
  return `WITH t AS (SELECT coalesce($2::double precision, ${s}.lh_now()) AS now)
    SELECT (SELECT count(*) FROM ${s}.lh_messages WHERE queue = $1) AS queued,
      count(g.group_id) AS groups,
      count(g.group_id) FILTER (WHERE g.paused IS NULL AND (g.locked_until IS NULL OR g.locked_until < t.now)) AS ready,
      count(g.group_id) FILTER (WHERE g.holder IS NOT NULL AND g.locked_until >= t.now) AS leased,
      count(g.group_id) FILTER (WHERE g.held_seq IS NOT NULL) AS held,
      count(g.group_id) FILTER (WHERE g.locked_until = ${BLOCKED}) AS blocked,
      min(g.locked_until) FILTER (WHERE g.locked_until >= t.now AND g.locked_until < ${BLOCKED} AND g.paused IS NULL) AS next,
      (SELECT count(*) FROM ${s}.lh_dead_letters WHERE queue = $1) AS dead,
      (SELECT paused FROM ${s}.lh_queues WHERE id = $1) AS paused,
      (SELECT count(*) FROM ${s}.lh_paused_groups WHERE queue = $1) AS paused_groups
    FROM t LEFT JOIN ${s}.lh_groups g ON g.queue = $1 GROUP BY t.now`;
}

export function statsFrom(row: StatsRow): TransportStats {
  const groups = Number(row.groups);
  const paused = row.paused === true;
  // A paused queue has nothing ready and no deadline that would make anything ready.
  const ready = paused ? 0 : Number(row.ready);
  const leased = Number(row.leased);
  const held = Number(row.held);
  const blocked = Number(row.blocked);
  return {
    queued: Number(row.queued),
    groups,
    ready,
    leased,
    waiting: groups - ready - leased - held - blocked,
    dead: Number(row.dead),
    held,
    blocked,
    paused,
    pausedGroups: Number(row.paused_groups),
    nextReadyAt: row.next === null || paused ? null : row.next + 1,
  };
}

function reasonOf(m: MessageJson): string | null {
  return m.r === null ? null : decodeId(m.r);
}
