/**
 * Migration 6: a keyed publish that replaces or merges the queued message of its key
 * (`onDuplicate`).
 *
 * The merge runs on the server, on `json` (not `jsonb`): `json` keeps the text of every member
 * and the order of an object's keys, so a merged event reads back with its members where the
 * in-memory and SQLite backends put them (the target's keys in their order, then the patch's new
 * ones), and a number or a string exactly as it was written.
 * @internal
 */
export function transportDuplicateMigration(s: string): string[] {
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  return [
    // RFC 7396: an object patch merges member by member (a null member removes one, a member
    // the target lacks is added, merged into nothing so that its own nulls go); any other patch
    // replaces the whole.
    `CREATE FUNCTION ${s}.lh_merge_patch(p_target json, p_patch json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $$
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

    // A publish with a key and p_mode 'replace' or 'merge'. The keyed message, if queued and not
    // under a live lease, takes the new event (or the merge) in place: same seq, place, attempts.
    // A head whose lease ran out loses its late holder (who worked on the old event). Under a
    // live lease, the key moves to a new message behind it, published as lh_publish would.
    publishKeyedFunction(s),

    // Migration 1's batch, its items gaining a sixth member: the onDuplicate policy.
    `CREATE OR REPLACE FUNCTION ${s}.lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
      RETURNS TABLE (o_seq bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_item json;
    BEGIN
      PERFORM 1 FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id IN (SELECT x->>0 FROM json_array_elements(p_items) x)
        ORDER BY g.group_id COLLATE "C" FOR NO KEY UPDATE;
      FOR v_item IN SELECT x FROM json_array_elements(p_items) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
        IF coalesce(v_item->>5, 'skip') = 'skip' THEN
          o_seq := ${s}.lh_publish(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL);
        ELSE
          o_seq := ${s}.lh_publish_keyed(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, v_item->>5);
        END IF;
        RETURN NEXT;
      END LOOP;
      ${notify}
    END $$`,
  ];
}

/**
 * `lh_publish_keyed`: migration 6's, or (with `lock`, a statement run first, and `append`, the
 * call that appends a message) migration 11's, which locks the queue row first.
 */
export function publishKeyedFunction(s: string, create = 'CREATE FUNCTION', lock = '', append = (args: string) => `${s}.lh_publish(${args})`): string {
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  return `${create} ${s}.lh_publish_keyed(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_mode text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_holder text; v_until double precision; v_seq bigint; v_event text;
    BEGIN${lock}
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF FOUND THEN
        SELECT m.seq, m.event INTO v_seq, v_event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
        IF FOUND THEN
          IF v_holder IS NOT NULL AND v_seq = (SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
            IF v_until >= v_now THEN
              UPDATE ${s}.lh_messages m SET key = NULL WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
              RETURN ${append('p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel')};
            END IF;
            UPDATE ${s}.lh_groups g SET holder = NULL, locked_until = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
          END IF;
          UPDATE ${s}.lh_messages m
            SET event = CASE WHEN p_mode = 'merge' THEN ${s}.lh_merge_patch(v_event::json, p_event::json)::text ELSE p_event END
            WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
          ${notify}
          RETURN v_seq;
        END IF;
      END IF;
      RETURN ${append('p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel')};
    END $$`;
}
