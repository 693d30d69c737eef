/**
 * The claim: `lh_claim_one` (claim), `lh_claim` and `lh_claim_many` (the batches).
 *
 * The walk takes the first group in claim order whose head is free or whose lock ran out, with
 * `FOR UPDATE SKIP LOCKED`, then leases that row by its tuple id while reading the head in the
 * same statement; the server clock is read inline rather than through `lh_now()` (a query of its
 * own). Held and blocked groups carry a lock later than any clock, so the walk passes them as
 * parked ones; a paused group by a flag on its row, a paused queue by one test before the walk.
 * A head out of
 * attempts goes to `lh_bury` and the walk goes on. `lh_claim_one` also returns the lease's
 * low-water mark, read by a statement of its own after the lease is written: PL/pgSQL keeps
 * its plans for the session, where SQL functions in a select list were planned on every call.
 * Every claim returns the head's counter and revision with it; the batches read the low-water
 * mark through `lh_low_water`. Measured with `npm run bench:postgres` (docs/BENCHMARKS.md).
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const claim: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision);
      v_row tid; v_group text; v_attempt integer; v_seq bigint;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt INTO v_row, v_group, v_attempt FROM ${s}.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now) AND g.paused IS NULL
            AND NOT EXISTS (SELECT 1 FROM ${s}.lh_queues q WHERE q.id = p_queue AND q.paused)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          PERFORM ${s}.lh_bury(p_queue, v_group, v_seq, v_now, NULL);
          CONTINUE;
        END IF;
        -- The row is locked by this transaction, so its tuple id stays put until the update.
        UPDATE ${s}.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event, m.counter, m.revision FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event, h.counter, h.revision INTO o_seq, o_event, o_counter, o_revision;
        IF NOT FOUND THEN RETURN; END IF;  -- a group row without messages: never left behind by any call
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_claim_one(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer, o_low bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision);
      v_row tid; v_group text; v_attempt integer; v_seq bigint;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt INTO v_row, v_group, v_attempt FROM ${s}.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now) AND g.paused IS NULL
            AND NOT EXISTS (SELECT 1 FROM ${s}.lh_queues q WHERE q.id = p_queue AND q.paused)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          PERFORM ${s}.lh_bury(p_queue, v_group, v_seq, v_now, NULL);
          CONTINUE;
        END IF;
        -- The row is locked by this transaction, so its tuple id stays put until the update.
        UPDATE ${s}.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event, m.counter, m.revision FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event, h.counter, h.revision INTO o_seq, o_event, o_counter, o_revision;
        IF NOT FOUND THEN RETURN; END IF;  -- a group row without messages: never left behind by any call
        o_low := (SELECT min(m.counter) FROM ${s}.lh_messages m WHERE m.queue = p_queue);
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_claim_many(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint, p_max integer)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_found boolean;
    BEGIN
      FOR i IN 1..p_max LOOP
        v_found := false;
        FOR o_seq, o_group, o_event, o_attempt, o_expires, o_counter, o_revision IN
          SELECT * FROM ${s}.lh_claim(p_queue, p_claims, p_worker, p_visibility, p_min_priority, v_now, p_max_attempts) LOOP
          v_found := true;
          RETURN NEXT;
        END LOOP;
        EXIT WHEN NOT v_found;
      END LOOP;
    END $$`,
  ],
};
