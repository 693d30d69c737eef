/**
 * Moving a head to the dead letters (`lh_bury`: attempts ran out; `lh_reject`).
 * @internal
 */
import { HELD } from '../../locks.js';
import type { SqlOperation } from './operation.js';

export const deadLetter: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_bury(p_queue integer, p_group text, p_seq bigint, p_now double precision, p_reason text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at, reason)
        SELECT p_queue, m.seq, m.group_id, g.priority, m.event, g.head_attempt, p_now, coalesce(p_reason, m.last_error)
        FROM ${s}.lh_messages m JOIN ${s}.lh_groups g ON g.queue = m.queue AND g.group_id = m.group_id
        WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF (SELECT q.on_dead_letter FROM ${s}.lh_queues q WHERE q.id = p_queue) = 'hold' THEN
        UPDATE ${s}.lh_groups g SET held_seq = p_seq, holder = NULL, head_attempt = 0, locked_until = ${HELD}
          WHERE g.queue = p_queue AND g.group_id = p_group;
        DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
        RETURN false;
      END IF;
      RETURN ${s}.lh_remove_head(p_queue, p_group, p_seq);
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_reject(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_reason text,
        p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      IF ${s}.lh_bury(p_queue, p_group, p_seq, coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision), p_reason) THEN IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF; END IF;
      RETURN true;
    END $$`,
  ],
};
