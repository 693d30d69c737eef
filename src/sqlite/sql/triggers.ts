/**
 * The core component's triggers as they are now: `installSchema` creates them, in this order,
 * after the table migrations, and again whenever this source changes (its hash is recorded).
 *
 * Triggers keep the counters and the group rows in step with every statement that changes a
 * message, so no code path can forget to, and a claim or an ack costs one statement from
 * JavaScript instead of three (each crossing into wasm costs ~4 µs).
 *
 * Their UPDATEs are OR FAIL, and they call no SQL function (CASE, not max() or nullif()). A
 * statement that fires a trigger writes two tables; while anything in it could ABORT, SQLite
 * opens a statement journal for it and copies every page it touches there first, so that an
 * ABORT can undo the statement alone. A constraint under the default ABORT could, and so can any
 * call of an SQL function (SQLite counts each one as a possible error), in the statement or in
 * any trigger it fires, even one whose WHEN is false. That copying was ~3 µs of the ~12 µs an ack
 * cost in sqlite-wasm; one max() in a trigger made a batch ack's DELETE cost 1.6× on a
 * better-sqlite3 file (bench/probe-drain.ts). Nothing these UPDATEs write can violate a
 * constraint, and every failing call rolls back its whole transaction or savepoint anyway.
 *
 * Several triggers run on a DELETE from lh_messages; they touch different rows, and the order
 * here is the order every database has had them in.
 * @internal
 */
import { BLOCKED } from '../../locks.js';
import type { TriggerSource } from '../migrate.js';

/**
 * The program of the two triggers that end a wait: message OLD.seq left the queue for good, so
 * each message waiting for it counts it off, gets its own delay back when it waited for nothing
 * else, and frees its group if it is the head (a blocked group's lock is BLOCKED).
 */
const satisfyWaits = `
    UPDATE OR FAIL lh_messages SET waits = CASE WHEN waits = 1 THEN NULL ELSE waits - 1 END
      WHERE queue_id = OLD.queue_id AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    UPDATE OR FAIL lh_messages SET not_before = delay_until, delay_until = NULL
      WHERE queue_id = OLD.queue_id AND waits IS NULL AND not_before = ${BLOCKED}
        AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    UPDATE OR FAIL lh_groups SET locked_until = (SELECT not_before FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND locked_until = ${BLOCKED} AND group_id IN (SELECT group_id FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq;`;

export const CORE_TRIGGERS: readonly TriggerSource[] = [
  {
    // A message left. If it was the head (acked, dead-lettered, cancelled): drop the group if it
    // is empty and not held at a dead letter (a held group keeps its row, so later publishes wait
    // too), else its new head has not been delivered yet and is free, or held by its own delay.
    // A message cancelled from behind the head changes nothing else. A held group is left alone.
    // One trigger, so a delete runs one trigger program, not two.
    name: 'lh_message_removed',
    sql: `CREATE TRIGGER lh_message_removed AFTER DELETE ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET queued = queued - 1 WHERE queue_id = OLD.queue_id;
    DELETE FROM lh_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL
      AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
    UPDATE OR FAIL lh_groups SET head_attempt = 0, holder = NULL,
      locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL
        AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq < OLD.seq);
  END`,
  },
  {
    // A message others wait for (`after`, marked `watched`) left the queue: acked or cancelled,
    // not moved into the dead letters (a dead letter still blocks what waits for it).
    name: 'lh_waited_gone',
    sql: `CREATE TRIGGER lh_waited_gone AFTER DELETE ON lh_messages
    WHEN OLD.watched IS NOT NULL AND NOT EXISTS (SELECT 1 FROM lh_dead_letters WHERE queue_id = OLD.queue_id AND seq = OLD.seq) BEGIN${satisfyWaits}
  END`,
  },
  {
    // A dead letter was discarded (not redriven: a redrive puts its message back first and moves
    // the waits to it), so what waited for it goes on.
    name: 'lh_dead_letter_gone',
    sql: `CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON lh_dead_letters
    WHEN NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq = OLD.seq) BEGIN${satisfyWaits}
  END`,
  },
  {
    // A waiting message left (cancelled): its waits go with it.
    name: 'lh_waiter_gone',
    sql: `CREATE TRIGGER lh_waiter_gone AFTER DELETE ON lh_messages WHEN OLD.waits IS NOT NULL BEGIN
    DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND seq = OLD.seq;
  END`,
  },
  {
    // A message came in: the queue counts it, and keeps its largest seq and counter handed out
    // (max: a redrive to the head puts a message back under its own, older seq and counter).
    name: 'lh_seq_taken',
    sql: `CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET last_seq = CASE WHEN NEW.seq > last_seq THEN NEW.seq ELSE last_seq END,
      last_counter = CASE WHEN NEW.counter IS NULL OR NEW.counter > last_counter THEN NEW.counter ELSE last_counter END, queued = queued + 1
      WHERE queue_id = NEW.queue_id;
  END`,
  },
  {
    // A claim's order is one past the largest on any group row (one seek to the end of the
    // claim-order index, a leaf the claim writes anyway) or kept in `claims`, so a claim writes
    // no counters row. `claims` keeps the largest order of a group that was deleted (emptied,
    // discarded), so the next claim still counts on from every claim before it.
    name: 'lh_claimed_group_gone',
    sql: `CREATE TRIGGER lh_claimed_group_gone AFTER DELETE ON lh_groups WHEN OLD.claim_order > 0 BEGIN
    UPDATE OR FAIL lh_counters SET claims = OLD.claim_order WHERE queue_id = OLD.queue_id AND claims < OLD.claim_order;
  END`,
  },
];
