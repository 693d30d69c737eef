/**
 * A keyed publish that replaces or merges the queued message of its key (`onDuplicate`), and the RFC 7396 merge it uses.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const publishKeyed: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_merge_patch(p_target json, p_patch json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
      IF json_typeof(p_patch) IS DISTINCT FROM 'object' THEN RETURN p_patch; END IF;
      IF json_typeof(p_target) IS DISTINCT FROM 'object' THEN p_target := '{}'::json; END IF;
      RETURN coalesce((
        SELECT json_object_agg(x.k, x.v ORDER BY x.o) FROM (
          SELECT t.key AS k, CASE WHEN p.value IS NULL THEN t.value ELSE ${s}.lh_merge_patch(t.value, p.value) END AS v, t.o
            FROM json_each(p_target) WITH ORDINALITY AS t(key, value, o) LEFT JOIN json_each(p_patch) AS p ON p.key = t.key
            WHERE p.value IS NULL OR json_typeof(p.value) <> 'null'
          UNION ALL
          SELECT p.key, ${s}.lh_merge_patch(NULL, p.value), 1e15 + p.o
            FROM json_each(p_patch) WITH ORDINALITY AS p(key, value, o)
            WHERE json_typeof(p.value) <> 'null' AND NOT EXISTS (SELECT 1 FROM json_each(p_target) AS t WHERE t.key = p.key)
        ) x), '{}'::json);
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_publish_keyed(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_mode text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_holder text; v_until double precision; v_seq bigint; v_event text; v_new text;
    BEGIN
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF FOUND THEN
        SELECT m.seq, m.event INTO v_seq, v_event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
        IF FOUND THEN
          IF v_holder IS NOT NULL AND v_seq = (SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
            IF v_until >= v_now THEN
              UPDATE ${s}.lh_messages m SET key = NULL WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
              RETURN ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel, NULL);
            END IF;
            UPDATE ${s}.lh_groups g SET holder = NULL, locked_until = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
          END IF;
          v_new := CASE WHEN p_mode = 'merge' THEN ${s}.lh_merge_patch(v_event::json, p_event::json)::text ELSE p_event END;
          -- A new revision (Lease.deliveryId) only when the content changed, as JSON values compare.
          UPDATE ${s}.lh_messages m SET event = v_new, revision = m.revision + (v_new::jsonb IS DISTINCT FROM v_event::jsonb)::integer
            WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
          IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
          RETURN v_seq;
        END IF;
      END IF;
      RETURN ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel, NULL);
    END $$`,
  ],
};
