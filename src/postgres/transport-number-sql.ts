/**
 * Migration 11: messages numbered at insert, and a claim that reads its lease's counter and the
 * low-water mark without planning a query each time.
 *
 * Numbering. Migration 10 numbered each new message at COMMIT, in a deferred trigger that took
 * the queue row's lock, because a publish locked its group rows as it went and a queue-row lock
 * taken at the first insert could deadlock with another publish. Here every function that can
 * insert a message (`lh_publish`, `lh_publish_keyed`, `lh_publish_after`, `lh_publish_many`,
 * `lh_redrive`) takes its queue row's lock first, before any group row, so the lock order is
 * the same for all of them: queue, then groups. The message is then numbered as it is inserted
 * (`lh_append`), and written once instead of twice (the trigger updated every new row, and the
 * counter is indexed, so that update left a dead version and index entries each ack and claim
 * then passed). The queue row's lock is held to the commit as before, so numbers are still given
 * in commit order and without gaps: a publish that rolls back rolls its number back with it, a
 * `'skip'` duplicate takes none, and a redrive gives its message its dead letter's number. No
 * other call locks a queue row after a group row: claims, acks, nacks and cancels never lock it.
 *
 * Counter and mark. The claim statement read a lease's counter and the mark through two SQL
 * functions in its select list. PostgreSQL plans a non-inlined SQL function's query again on
 * every call of the statement around it; PL/pgSQL keeps its plans for the session. `claim` and
 * `ackAndClaim` now call `lh_claim_one` and `lh_ack_claim_one`, which read the counter with the
 * head they lease and the mark in a statement of their own after the lease is written (the
 * same snapshot rule as before: it sees the claim and everything committed before it); the
 * batches keep the select-list functions, now in PL/pgSQL.
 * @internal
 */
import { publishAfterFunction, publishManyFunction, redriveFunction } from './transport-after-sql.js';
import { publishKeyedFunction } from './transport-duplicate-sql.js';
import { buryingClaim } from './transport-hold-sql.js';
import { pausedWalk } from './transport-pause-sql.js';
import { ackClaimFunction } from './transport-sql.js';

export function transportNumberMigration(s: string): string[] {
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  // Every publish path starts here: the queue row, before any group row (see above).
  const lockQueue = `PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;`;
  const lock = `\n      ${lockQueue}`;
  // The queue row is held: append (and number) without taking it again.
  const append = (args: string) => `${s}.lh_append(${args}, NULL)`;
  return [
    `DROP TRIGGER lh_counter_taken ON ${s}.lh_messages`,
    `DROP FUNCTION ${s}.lh_take_counter()`,

    // Migration 1's publish, numbering each message it inserts: p_counter, or the queue's next.
    // The caller holds the queue row's lock. The loop locks the group row (so seqs in a group are
    // taken in commit order) or creates it; when a concurrent publish created it first, this seq
    // becomes a gap and the loop locks the row.
    `CREATE FUNCTION ${s}.lh_append(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_counter bigint) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_seq bigint;
      v_counter bigint := p_counter;
      v_not_before double precision := CASE WHEN p_delay > 0 THEN coalesce(p_now, ${s}.lh_now()) + p_delay END;
    BEGIN
      LOOP
        PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
        IF FOUND THEN
          IF p_key IS NOT NULL THEN
            SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
            IF FOUND THEN RETURN v_seq; END IF;
          END IF;
          v_seq := nextval(p_seqs);
          EXIT;
        END IF;
        v_seq := nextval(p_seqs);
        INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq, locked_until) VALUES (p_queue, p_group, p_priority, v_seq, v_not_before)
          ON CONFLICT DO NOTHING;
        EXIT WHEN FOUND;
      END LOOP;
      IF v_counter IS NULL THEN
        UPDATE ${s}.lh_queues q SET last_counter = q.last_counter + 1 WHERE q.id = p_queue RETURNING q.last_counter INTO v_counter;
      END IF;
      INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, key, not_before, counter)
        VALUES (p_queue, p_group, v_seq, p_event, p_key, v_not_before, v_counter);
      ${notify}
      RETURN v_seq;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_publish(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    BEGIN
      ${lockQueue}
      RETURN ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, NULL);
    END $$`,

    // Migrations 6's, 8's and 10's, the queue row locked first, appending through lh_append.
    publishKeyedFunction(s, 'CREATE OR REPLACE FUNCTION', lock, append),
    publishAfterFunction(s, 'CREATE OR REPLACE FUNCTION', lock, append),
    publishManyFunction(s, lock, append),
    redriveFunction(s, true, lock),

    // What the claim and ackAndClaim calls run now: the lease's counter and the mark come back
    // from the function itself (lh_claim stays for the batches, which read the mark once a row).
    buryingClaim(s, pausedWalk(s), true),
    ackClaimFunction(s, true),

    // Migration 10's, in PL/pgSQL, for the batches' select lists.
    `CREATE OR REPLACE FUNCTION ${s}.lh_counter_of(p_queue integer, p_group text, p_seq bigint) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN (SELECT m.counter FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq);
    END $$`,
    `CREATE OR REPLACE FUNCTION ${s}.lh_low_water(p_queue integer) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN (SELECT min(m.counter) FROM ${s}.lh_messages m WHERE m.queue = p_queue);
    END $$`,
  ];
}
