/**
 * A batch of publishes as one statement.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const publishMany: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
      RETURNS TABLE (o_seq bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_item json;
    BEGIN
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      PERFORM 1 FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id IN (SELECT x->>0 FROM json_array_elements(p_items) x)
        ORDER BY g.group_id COLLATE "C" FOR NO KEY UPDATE;
      FOR v_item IN SELECT x FROM json_array_elements(p_items) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
        IF coalesce((v_item->>7)::double precision, 0) > 0 THEN
          o_seq := ${s}.lh_publish_debounced(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, coalesce(v_item->>5, 'skip'), (v_item->>7)::double precision,
            (v_item->>8)::double precision, ARRAY(SELECT e::bigint FROM json_array_elements_text(coalesce(v_item->6, '[]')) e),
            ARRAY(SELECT e FROM json_array_elements_text(coalesce(v_item->9, '[]')) e));
          IF o_seq < 0 THEN RAISE EXCEPTION 'leasehold: after names seq % which this queue never issued', -o_seq USING ERRCODE = 'LH001'; END IF;
        ELSIF json_array_length(coalesce(v_item->6, '[]')) > 0 OR json_array_length(coalesce(v_item->9, '[]')) > 0 THEN
          o_seq := ${s}.lh_publish_after(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, coalesce(v_item->>5, 'skip'),
            ARRAY(SELECT e::bigint FROM json_array_elements_text(coalesce(v_item->6, '[]')) e),
            ARRAY(SELECT e FROM json_array_elements_text(coalesce(v_item->9, '[]')) e));
          IF o_seq < 0 THEN RAISE EXCEPTION 'leasehold: after names seq % which this queue never issued', -o_seq USING ERRCODE = 'LH001'; END IF;
        ELSIF coalesce(v_item->>5, 'skip') = 'skip' THEN
          o_seq := ${s}.lh_append(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, NULL);
        ELSE
          o_seq := ${s}.lh_publish_keyed(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, v_item->>5);
        END IF;
        RETURN NEXT;
      END LOOP;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
    END $$`,
  ],
};
