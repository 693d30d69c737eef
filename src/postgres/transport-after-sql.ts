/**
 * Migration 8: a message that waits for others to be gone (`after`).
 *
 * As on SQLite: the waiting message counts the named messages still in the queue (`waits`) and
 * carries the delay {@link BLOCKED} (later than any clock) in `not_before`, its own delay kept in
 * `delay_until`, so every function that gives a group its new head's delay blocks the group
 * unchanged and the claim's walk passes it like a parked one. `lh_waits` links each waiter to
 * what it names; a named message is `watched`. When one leaves the queue (acked, cancelled, not
 * into the dead letters) or its dead letter is discarded, a trigger counts it off its waiters and
 * frees a group whose head waited for it last. A redrive puts the message back before its dead
 * letter goes, and moves the waits to its new seq.
 *
 * Concurrency: the publish locks the group row of each named message (and each named dead
 * letter) before it counts it, so an ack of it either committed before (the message is gone:
 * nothing to wait for) or waits for this publish to commit (then its trigger sees the wait).
 * @internal
 */
import { BLOCKED } from '../locks.js';

export function transportAfterMigration(s: string): string[] {
  return [
    `ALTER TABLE ${s}.lh_messages ADD COLUMN waits integer, ADD COLUMN delay_until double precision, ADD COLUMN watched boolean`,
    `CREATE TABLE ${s}.lh_waits (
      queue    integer NOT NULL,
      on_seq   bigint  NOT NULL,  -- the message waited for
      group_id text    NOT NULL,  -- the waiting message's group and seq
      seq      bigint  NOT NULL,
      PRIMARY KEY (queue, on_seq, seq)
    )`,

    // p_seq left the queue for good: count it off its waiters, free the groups it blocked last.
    `CREATE FUNCTION ${s}.lh_satisfy(p_queue integer, p_seq bigint) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE ${s}.lh_messages m SET waits = nullif(m.waits - 1, 0)
        FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq;
      UPDATE ${s}.lh_messages m SET not_before = m.delay_until, delay_until = NULL
        FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq
          AND m.waits IS NULL AND m.not_before = ${BLOCKED};
      UPDATE ${s}.lh_groups g SET locked_until = (SELECT m.not_before FROM ${s}.lh_messages m
          WHERE m.queue = g.queue AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1)
        WHERE g.queue = p_queue AND g.locked_until = ${BLOCKED}
          AND g.group_id IN (SELECT w.group_id FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq);
      DELETE FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq;
    END $$`,
    `CREATE FUNCTION ${s}.lh_waited_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ${s}.lh_dead_letters d WHERE d.queue = OLD.queue AND d.seq = OLD.seq) THEN
        PERFORM ${s}.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER lh_waited_gone AFTER DELETE ON ${s}.lh_messages FOR EACH ROW WHEN (OLD.watched) EXECUTE FUNCTION ${s}.lh_waited_gone()`,
    `CREATE FUNCTION ${s}.lh_dead_letter_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ${s}.lh_messages m WHERE m.queue = OLD.queue AND m.group_id = OLD.group_id AND m.seq = OLD.seq) THEN
        PERFORM ${s}.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON ${s}.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION ${s}.lh_dead_letter_gone()`,
    // A waiter cancelled before what it named left: its waits go with it.
    `CREATE FUNCTION ${s}.lh_waiter_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM ${s}.lh_waits w WHERE w.queue = OLD.queue AND w.seq = OLD.seq;
      RETURN NULL;
    END $$`,
    `CREATE TRIGGER lh_waiter_gone AFTER DELETE ON ${s}.lh_messages FOR EACH ROW WHEN (OLD.waits IS NOT NULL) EXECUTE FUNCTION ${s}.lh_waiter_gone()`,

    // A publish with p_after (seqs, no repeats): -seq when one was never issued (nothing written).
    // The new message (if the publish appends one) waits for those still queued or dead.
    publishAfterFunction(s),

    // Migration 6's batch, its items gaining a seventh member: the seqs of after (a JSON array).
    publishManyFunction(s),

    // Migration 5's redrive, the message put back before its dead letter goes (whose trigger
    // would otherwise free what waits for it), and the waits moved to a new seq.
    redriveFunction(s, false),
  ];
}

/**
 * `lh_publish_after`: migration 8's, or (with `lock`, a statement run first after the check of
 * the named seqs, and `append`, the call that appends a message) migration 11's.
 */
export function publishAfterFunction(s: string, create = 'CREATE FUNCTION', lock = '', append = (args: string) => `${s}.lh_publish(${args})`): string {
  return `${create} ${s}.lh_publish_after(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_mode text, p_after bigint[]) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_last bigint; v_named bigint; v_group text; v_existing bigint; v_seq bigint; v_waits integer := 0;
    BEGIN
      v_last := coalesce(pg_sequence_last_value(p_seqs), 0);
      FOREACH v_named IN ARRAY p_after LOOP
        IF v_named > v_last THEN RETURN -v_named; END IF;
      END LOOP;${lock}
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF p_key IS NOT NULL THEN
        SELECT m.seq INTO v_existing FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
      END IF;
      v_seq := CASE WHEN p_mode = 'skip' THEN ${append('p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel')}
        ELSE ${s}.lh_publish_keyed(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, p_mode) END;
      IF v_seq IS NOT DISTINCT FROM v_existing THEN RETURN v_seq; END IF;  -- a queued message took it: after is for a new one
      FOREACH v_named IN ARRAY p_after LOOP
        SELECT m.group_id INTO v_group FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.seq = v_named;
        IF FOUND THEN
          PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group FOR NO KEY UPDATE;
          UPDATE ${s}.lh_messages m SET watched = true WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_named;
        ELSE
          PERFORM 1 FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = v_named FOR UPDATE;
        END IF;
        IF FOUND THEN
          INSERT INTO ${s}.lh_waits (queue, on_seq, group_id, seq) VALUES (p_queue, v_named, p_group, v_seq);
          v_waits := v_waits + 1;
        END IF;
      END LOOP;
      IF v_waits > 0 THEN
        UPDATE ${s}.lh_messages m SET delay_until = m.not_before, not_before = ${BLOCKED}, waits = v_waits
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        UPDATE ${s}.lh_groups g SET locked_until = ${BLOCKED} WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder IS NULL
          AND v_seq = (SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1);
      END IF;
      RETURN v_seq;
    END $$`;
}

/** `lh_publish_many`: migration 8's, or (with `lock` and `append`, as above) migration 11's. */
export function publishManyFunction(s: string, lock = '', append = (args: string) => `${s}.lh_publish(${args})`): string {
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  return `CREATE OR REPLACE FUNCTION ${s}.lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
      RETURNS TABLE (o_seq bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_item json;
    BEGIN${lock}
      PERFORM 1 FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id IN (SELECT x->>0 FROM json_array_elements(p_items) x)
        ORDER BY g.group_id COLLATE "C" FOR NO KEY UPDATE;
      FOR v_item IN SELECT x FROM json_array_elements(p_items) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
        IF json_array_length(coalesce(v_item->6, '[]')) > 0 THEN
          o_seq := ${s}.lh_publish_after(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, coalesce(v_item->>5, 'skip'),
            ARRAY(SELECT e::bigint FROM json_array_elements_text(v_item->6) e));
          IF o_seq < 0 THEN RAISE EXCEPTION 'leasehold: after names seq % which this queue never issued', -o_seq USING ERRCODE = 'LH001'; END IF;
        ELSIF coalesce(v_item->>5, 'skip') = 'skip' THEN
          o_seq := ${append(`p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL`)};
        ELSE
          o_seq := ${s}.lh_publish_keyed(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, v_item->>5);
        END IF;
        RETURN NEXT;
      END LOOP;
      ${notify}
    END $$`;
}

/**
 * `lh_redrive`: migration 8's (the message put back before its dead letter goes, whose trigger
 * would otherwise free what waits for it, and the waits moved to a new seq) and, with
 * `keepCounter`, migration 10's: the message comes back under its dead letter's counter; with
 * `lock` too (a statement run first), migration 11's, whose tail path appends the message under
 * that counter (lh_append) instead of numbering it and then renumbering it.
 */
export function redriveFunction(s: string, keepCounter: boolean, lock = ''): string {
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  // The tail path publishes, whose counter is taken at commit only while still NULL (migration 10).
  const counter = keepCounter ? `\n        UPDATE ${s}.lh_messages m SET counter = v_counter WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq;` : '';
  return `CREATE OR REPLACE FUNCTION ${s}.lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_priority smallint; v_event text; v_seq bigint;${keepCounter ? ' v_counter bigint;' : ''}
    BEGIN${lock}
      SELECT d.group_id, d.priority, d.event${keepCounter ? ', d.counter' : ''} INTO v_group, v_priority, v_event${keepCounter ? ', v_counter' : ''} FROM ${s}.lh_dead_letters d
        WHERE d.queue = p_queue AND d.seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF FOUND THEN
        -- Every message behind it has a later seq, so under its own it is the head again.
        INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, watched${keepCounter ? ', counter' : ''})
          VALUES (p_queue, v_group, p_seq, v_event, EXISTS (SELECT 1 FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq)${keepCounter ? ', v_counter' : ''});
        UPDATE ${s}.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = NULL
          WHERE g.queue = p_queue AND g.group_id = v_group;
        v_seq := p_seq;
        ${notify}
      ELSE
        v_seq := ${lock ? `${s}.lh_append(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel, v_counter);` : `${s}.lh_publish(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel);${counter}`}
        UPDATE ${s}.lh_waits w SET on_seq = v_seq WHERE w.queue = p_queue AND w.on_seq = p_seq;
        IF FOUND THEN
          UPDATE ${s}.lh_messages m SET watched = true WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq;
        END IF;
      END IF;
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq;
      RETURN v_seq;
    END $$`;
}
