/**
 * A publish whose message waits for others to be gone (`after`: seqs, and groups resolved to what they hold).
 * @internal
 */
import { BLOCKED } from '../../locks.js';
import type { SqlOperation } from './operation.js';

export const publishAfter: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_publish_after(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_mode text, p_after bigint[], p_after_groups text[]) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_last bigint; v_named bigint; v_group text; v_existing bigint; v_seq bigint; v_waits integer := 0; v_after bigint[];
    BEGIN
      v_last := coalesce(pg_sequence_last_value(p_seqs), 0);
      FOREACH v_named IN ARRAY p_after LOOP
        IF v_named > v_last THEN RETURN -v_named; END IF;
      END LOOP;
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF p_key IS NOT NULL THEN
        SELECT m.seq INTO v_existing FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
      END IF;
      v_seq := CASE WHEN p_mode = 'skip' THEN ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, NULL)
        ELSE ${s}.lh_publish_keyed(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, p_mode) END;
      IF v_seq IS NOT DISTINCT FROM v_existing THEN RETURN v_seq; END IF;  -- a queued message took it: after is for a new one
      -- A named group stands for what it holds now (the queue row is locked: no publish adds to
      -- it meanwhile): its queued messages and the dead letter holding it.
      v_after := ARRAY(SELECT DISTINCT x FROM unnest(p_after || ARRAY(
          SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = ANY (p_after_groups) AND m.seq <> v_seq
          UNION ALL SELECT g.held_seq FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = ANY (p_after_groups) AND g.held_seq IS NOT NULL)) AS x);
      FOREACH v_named IN ARRAY v_after LOOP
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
    END $$`,
  ],
};
