/**
 * A publish with a coalescing window (`debounceMs`, `maxWaitMs`): it re-arms the queued message
 * of its key, or appends a new one that waits out the window.
 * @internal
 */
import { BLOCKED, NO_DEADLINE } from '../../locks.js';
import type { SqlOperation } from './operation.js';

export const publishDebounced: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_publish_debounced(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_mode text, p_debounce double precision, p_max_wait double precision,
        p_after bigint[], p_after_groups text[]) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_bound double precision := CASE WHEN p_max_wait IS NULL THEN ${NO_DEADLINE} ELSE v_now + p_max_wait END;
      v_last bigint; v_named bigint; v_holder text; v_until double precision; v_seq bigint; v_head bigint;
      v_event text; v_new text; v_deadline double precision; v_wait double precision;
    BEGIN
      IF cardinality(p_after) > 0 THEN
        v_last := coalesce(pg_sequence_last_value(p_seqs), 0);
        FOREACH v_named IN ARRAY p_after LOOP
          IF v_named > v_last THEN RETURN -v_named; END IF;
        END LOOP;
      END IF;
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF FOUND THEN
        SELECT m.seq, m.event, m.debounce_deadline INTO v_seq, v_event, v_deadline FROM ${s}.lh_messages m
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
      END IF;
      IF v_seq IS NOT NULL THEN
        v_head := (SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1);
        IF v_holder IS NOT NULL AND v_seq = v_head THEN
          IF p_mode = 'skip' THEN RETURN v_seq; END IF;
          IF v_until >= v_now THEN
            -- Under a live lease, maybe on the wire already: the new event goes behind it, with the key.
            UPDATE ${s}.lh_messages m SET key = NULL WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
            v_seq := NULL;
          ELSE
            UPDATE ${s}.lh_groups g SET holder = NULL, locked_until = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
          END IF;
        END IF;
      END IF;
      IF v_seq IS NOT NULL THEN
        IF p_mode <> 'skip' THEN
          v_new := CASE WHEN p_mode = 'merge' THEN ${s}.lh_merge_patch(v_event::json, p_event::json)::text ELSE p_event END;
          UPDATE ${s}.lh_messages m SET event = v_new, revision = m.revision + (v_new::jsonb IS DISTINCT FROM v_event::jsonb)::integer
            WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        END IF;
        -- The bound stays the first window's; the wait moves on, never past the bound, never
        -- shortening a later one (a park, a hold, a block: greatest keeps it).
        v_deadline := coalesce(v_deadline, v_bound);
        v_wait := least(v_now + p_debounce, v_deadline);
        UPDATE ${s}.lh_messages m SET debounce_deadline = v_deadline,
            delay_until = CASE WHEN m.not_before = ${BLOCKED} THEN greatest(m.delay_until, v_wait) ELSE m.delay_until END,
            not_before = CASE WHEN m.not_before = ${BLOCKED} THEN m.not_before ELSE greatest(m.not_before, v_wait) END
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        IF v_seq = v_head THEN
          UPDATE ${s}.lh_groups g SET locked_until = greatest(g.locked_until, v_wait) WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder IS NULL;
        END IF;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN v_seq;
      END IF;
      v_seq := CASE WHEN cardinality(p_after) > 0 OR cardinality(p_after_groups) > 0
        THEN ${s}.lh_publish_after(p_queue, p_seqs, p_group, p_event, p_priority, p_key, greatest(p_delay, p_debounce), v_now, p_channel, 'skip', p_after, p_after_groups)
        ELSE ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, greatest(p_delay, p_debounce), v_now, p_channel, NULL) END;
      UPDATE ${s}.lh_messages m SET debounce_deadline = v_bound WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
      RETURN v_seq;
    END $$`,
  ],
};
