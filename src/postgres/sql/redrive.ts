/**
 * A dead letter back to its queue (`lh_redrive`) or gone (`lh_discard`).
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const redrive: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_priority smallint; v_event text; v_seq bigint; v_counter bigint; v_revision integer;
    BEGIN
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT d.group_id, d.priority, d.event, d.counter, d.revision INTO v_group, v_priority, v_event, v_counter, v_revision FROM ${s}.lh_dead_letters d
        WHERE d.queue = p_queue AND d.seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF FOUND THEN
        -- Every message behind it has a later seq, so under its own it is the head again.
        INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, watched, counter, revision)
          VALUES (p_queue, v_group, p_seq, v_event, EXISTS (SELECT 1 FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq), v_counter, v_revision);
        UPDATE ${s}.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = NULL
          WHERE g.queue = p_queue AND g.group_id = v_group;
        v_seq := p_seq;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      ELSE
        v_seq := ${s}.lh_append(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel, v_counter);
        -- Its own number and content: the delivery id it had as a dead letter.
        UPDATE ${s}.lh_messages m SET revision = v_revision WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq AND v_revision <> 0;
        UPDATE ${s}.lh_waits w SET on_seq = v_seq WHERE w.queue = p_queue AND w.on_seq = p_seq;
        IF FOUND THEN
          UPDATE ${s}.lh_messages m SET watched = true WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq;
        END IF;
      END IF;
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq;
      RETURN v_seq;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_discard(p_queue integer, p_seq bigint, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_not_before double precision;
    BEGIN
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq RETURNING d.group_id INTO v_group;
      IF NOT FOUND THEN RETURN false; END IF;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN true; END IF;
      SELECT m.not_before INTO v_not_before FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group;
        RETURN true;
      END IF;
      UPDATE ${s}.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = v_not_before
        WHERE g.queue = p_queue AND g.group_id = v_group;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,
  ],
};
