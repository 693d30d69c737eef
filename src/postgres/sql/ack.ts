/**
 * The ack of one lease and of a batch.
 *
 * The ack deletes its message by primary key instead of first checking it is the head: a leased
 * message still queued is its group's head (seqs only grow, and only a head is leased), so the
 * delete removes the head or nothing; it then moves the group on itself.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const ack: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_ack(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_channel text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_row tid; v_next bigint; v_not_before double precision;
    BEGIN
      SELECT g.ctid INTO v_row FROM ${s}.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
      IF NOT FOUND THEN RETURN false; END IF;
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF NOT FOUND THEN RETURN false; END IF;  -- that message left already: the lease is stale
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.ctid = v_row;
        RETURN true;
      END IF;
      -- The new head is free (or held by its own delay) and not delivered yet. The group was
      -- claimed (claim_order > 0), so first_seq, which orders only never-claimed groups, stays.
      UPDATE ${s}.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before WHERE g.ctid = v_row;
      -- The next message of the group is claimable now: say so.
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_ack_many(p_queue integer, p_leases json, p_channel text) RETURNS text LANGUAGE plpgsql AS $$
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
  ],
};
