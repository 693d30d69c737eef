/**
 * Part of migration 1: the transport's batch calls and cancel, built on the single-message
 * functions of transport-sql.ts. Each is still one statement, so a batch is one transaction:
 * it lands whole or not at all. Batches arrive as JSON arrays (every driver passes a `json`
 * parameter the same way; array parameters differ between drivers).
 * @internal
 */
export function batchFunctions(s: string): string[] {
  return [
    // p_items: [[groupId, eventJson, priority, key|null, delayMs], …]. Seqs come back in item
    // order, as from successive publishes. Existing group rows are locked first, in one order
    // (by id), so two batches over the same groups cannot deadlock on them.
    `CREATE FUNCTION ${s}.lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
      RETURNS TABLE (o_seq bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_item json;
    BEGIN
      PERFORM 1 FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id IN (SELECT x->>0 FROM json_array_elements(p_items) x)
        ORDER BY g.group_id COLLATE "C" FOR NO KEY UPDATE;
      FOR v_item IN SELECT x FROM json_array_elements(p_items) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
        o_seq := ${s}.lh_publish(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
          (v_item->>4)::double precision, v_now, NULL);
        RETURN NEXT;
      END LOOP;
      ${notify}
    END $$`,

    // At most p_max leases at one clock reading: what p_max successive claims would return.
    `CREATE FUNCTION ${s}.lh_claim_many(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint, p_max integer)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_found boolean;
    BEGIN
      FOR i IN 1..p_max LOOP
        v_found := false;
        FOR o_seq, o_group, o_event, o_attempt, o_expires IN
          SELECT * FROM ${s}.lh_claim(p_queue, p_claims, p_worker, p_visibility, p_min_priority, v_now, p_max_attempts) LOOP
          v_found := true;
          RETURN NEXT;
        END LOOP;
        EXIT WHEN NOT v_found;
      END LOOP;
    END $$`,

    // p_leases: [[groupId, seq, attempt, workerId], …]. Returns one letter per lease, in input
    // order: 't' acked, 'f' no longer held. Group rows are locked in one order (by id).
    `CREATE FUNCTION ${s}.lh_ack_many(p_queue integer, p_leases json, p_channel text) RETURNS text LANGUAGE plpgsql AS $$
    DECLARE
      v_done text[] := array_fill('f'::text, ARRAY[json_array_length(p_leases)]);
      v_lease record;
      v_any boolean := false;
    BEGIN
      FOR v_lease IN SELECT x, n FROM json_array_elements(p_leases) WITH ORDINALITY AS a(x, n) ORDER BY (x->>0) COLLATE "C", n LOOP
        IF ${s}.lh_ack(p_queue, v_lease.x->>0, (v_lease.x->>1)::bigint, (v_lease.x->>2)::integer, v_lease.x->>3, NULL) THEN
          v_done[v_lease.n] := 't';
          v_any := true;
        END IF;
      END LOOP;
      IF v_any AND p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN array_to_string(v_done, '');
    END $$`,

    // 0: no such message queued; 1: removed from behind its head; 2: removed the head (its group
    // is free for the next message); -1: the head is under a live lease (nothing changed). A
    // message is found by seq with a scan of the queue: an index by seq would cost every publish
    // and ack a write, and cancelling is rare.
    `CREATE FUNCTION ${s}.lh_cancel(p_queue integer, p_seq bigint, p_now double precision, p_channel text) RETURNS integer LANGUAGE plpgsql AS $$
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
        ${notify}
        RETURN 2;
      END IF;
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = p_seq;
      RETURN CASE WHEN FOUND THEN 1 ELSE 0 END;
    END $$`,
  ];
}

const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
