/**
 * Removing a queued message: `lh_remove_head` (a head leaving) and `lh_cancel`.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const cancel: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_remove_head(p_queue integer, p_group text, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_next bigint; v_not_before double precision;
    BEGIN
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
        RETURN false;
      END IF;
      UPDATE ${s}.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before,
          first_seq = CASE WHEN g.claim_order = 0 THEN v_next ELSE g.first_seq END
        WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
      RETURN FOUND;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_cancel(p_queue integer, p_seq bigint, p_now double precision, p_channel text) RETURNS integer LANGUAGE plpgsql AS $$
    DECLARE
      v_group text; v_holder text; v_until double precision; v_head bigint;
    BEGIN
      SELECT m.group_id INTO v_group FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.seq = p_seq;
      IF NOT FOUND THEN RETURN 0; END IF;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = v_group FOR UPDATE;
      IF NOT FOUND THEN RETURN 0; END IF;  -- acked meanwhile
      SELECT m.seq INTO v_head FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
      IF v_head = p_seq THEN
        IF v_holder IS NOT NULL AND v_until >= coalesce(p_now, ${s}.lh_now()) THEN RETURN -1; END IF;
        PERFORM ${s}.lh_remove_head(p_queue, v_group, p_seq);
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN 2;
      END IF;
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = p_seq;
      RETURN CASE WHEN FOUND THEN 1 ELSE 0 END;
    END $$`,
  ],
};
