/**
 * Whether a lease still holds its head, and extending it.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const lease: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_holds(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      RETURN true;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_extend(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_visibility double precision,
        p_now double precision) RETURNS double precision LANGUAGE plpgsql AS $$
    DECLARE v_until double precision := coalesce(p_now, ${s}.lh_now()) + p_visibility;
    BEGIN
      IF NOT ${s}.lh_holds(p_queue, p_group, p_seq, p_attempt, p_worker) THEN RETURN NULL; END IF;
      UPDATE ${s}.lh_groups g SET locked_until = v_until WHERE g.queue = p_queue AND g.group_id = p_group;
      RETURN v_until;
    END $$`,
  ],
};
