/**
 * Migration 3: the claim and the ack, the two calls every message goes through, rewritten to
 * cost the server fewer statements (same signatures and results, so `lh_ack_claim`,
 * `lh_claim_many` and `lh_ack_many`, which call them, speed up too):
 *
 * - the server clock is read in the function itself (a simple expression) instead of through
 *   `lh_now()` (a query of its own each call);
 * - the claim locks the group it picks, then updates that row by its tuple id while reading
 *   the head message in the same statement;
 * - the ack deletes its message by primary key instead of first checking it is the head: a
 *   leased message still queued is its group's head (seqs only grow, and only a head is ever
 *   leased), so the delete removes the head or nothing; and it moves the group on itself
 *   instead of calling `lh_remove_head`.
 *
 * Measured with `npm run bench:postgres` (docs/BENCHMARKS.md).
 * @internal
 */
/**
 * The end of a claim's loop: leases the head of the group row `v_row` it locked (v_group at
 * v_attempt deliveries) and returns that lease. Shared by every version of `lh_claim`; `marked`
 * (migration 11's `lh_claim_one`) also returns the head's counter and then the queue's low-water
 * mark, read by a statement of its own after the lease was written.
 */
export function leaseLockedGroup(s: string, marked = false): string {
  return `        -- The row is locked by this transaction, so its tuple id stays put until the update.
        UPDATE ${s}.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event${marked ? ', m.counter' : ''} FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event${marked ? ', h.counter' : ''} INTO o_seq, o_event${marked ? ', o_counter' : ''};
        IF NOT FOUND THEN RETURN; END IF;  -- a group row without messages: never left behind by any call${marked ? `
        o_low := (SELECT min(m.counter) FROM ${s}.lh_messages m WHERE m.queue = p_queue);` : ''}
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;`;
}

export function transportSpeedMigration(s: string): string[] {
  const now = `floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;
  return [
    `CREATE OR REPLACE FUNCTION ${s}.lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${now});
      v_row tid; v_group text; v_attempt integer; v_priority smallint; v_seq bigint; v_event text;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt, g.priority INTO v_row, v_group, v_attempt, v_priority FROM ${s}.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq, m.event INTO v_seq, v_event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          INSERT INTO ${s}.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at)
            VALUES (p_queue, v_seq, v_group, v_priority, v_event, v_attempt, v_now);
          PERFORM ${s}.lh_remove_head(p_queue, v_group, v_seq);
          CONTINUE;
        END IF;
${leaseLockedGroup(s)}
      END LOOP;
    END $$`,

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
  ];
}
