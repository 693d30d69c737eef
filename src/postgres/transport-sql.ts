/**
 * Migration 1: the transport's tables and server-side functions on PostgreSQL.
 *
 * Every transport call is one statement calling one of these functions: one round trip, run by
 * PostgreSQL as its own transaction (in READ COMMITTED each statement inside a function sees
 * what committed before it started). The layout follows the SQLite backend: only a group's head
 * is ever leased or parked, so the lease (holder, attempt, expiry) lives on the group row and a
 * message row never changes after its publish.
 *
 * Concurrency. Every call that changes a group locks its group row first and keeps the lock to
 * its commit, so per group everything is serialized: publishes take seqs in commit order (FIFO
 * by seq holds even across connections), and an ack, a nack, a claim of an expired lease and a
 * publish never interleave. A claim walks groups in claim order with `FOR UPDATE SKIP LOCKED`:
 * a group another transaction holds is passed over, never waited for, so claims from many
 * connections proceed in parallel instead of queueing behind one hot row. The claim order comes
 * from a sequence per queue (no counter row every claim must update). Sequences never go back,
 * so a rolled-back claim or publish leaves a gap; only the order matters.
 *
 * Times are milliseconds (double precision, as JavaScript numbers are). A call passes the
 * injected clock's reading as `p_now`, or NULL to use the server's clock (`lh_now()`), so that
 * workers on many machines measure leases by one clock.
 * @internal
 */
import { batchFunctions } from './transport-batch-sql.js';

/**
 * The start of a function body that takes a lease (p_queue, p_group, p_seq, p_attempt,
 * p_worker): locks the group row and returns false unless the lease still holds its head.
 */
export function holdsLease(s: string): string {
  return `
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;`;
}

export function transportMigration(s: string): string[] {
  const holds = holdsLease(s);
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  return [
    `CREATE TABLE ${s}.lh_queues (
      id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE  -- each queue has its own sequences lh_q<id>_seq (seqs) and lh_q<id>_claims (claim order)
    )`,
    `CREATE TABLE ${s}.lh_groups (
      queue        integer  NOT NULL,
      group_id     text     NOT NULL,
      priority     smallint NOT NULL,           -- set by the publish that created the group
      claim_order  bigint   NOT NULL DEFAULT 0, -- from the queue's claims sequence at its last claim; 0 = never
      first_seq    bigint   NOT NULL,           -- seq that created the group: breaks ties among never-claimed groups
      head_attempt integer  NOT NULL DEFAULT 0, -- deliveries of the head so far (the fencing half of a lease)
      holder       text,                        -- the head's lease holder; NULL when free or parked
      locked_until double precision,            -- end of the head's lease, park or delay; NULL when free
      PRIMARY KEY (queue, group_id)
    )`,
    // The claim walks this index from the front and takes the first group whose head is free or
    // whose lock ran out: it passes only groups in flight (about one per worker).
    `CREATE INDEX lh_groups_by_claim_order ON ${s}.lh_groups (queue, claim_order, first_seq)`,
    `CREATE TABLE ${s}.lh_messages (
      queue      integer NOT NULL,
      group_id   text    NOT NULL,
      seq        bigint  NOT NULL,
      event      text    NOT NULL,  -- JSON, exactly as the publisher's JSON.stringify wrote it
      key        text,              -- idempotency key, unique per group while queued
      not_before double precision,  -- published with a delay: not deliverable while now <= not_before
      PRIMARY KEY (queue, group_id, seq)
    )`,
    `CREATE UNIQUE INDEX lh_messages_by_key ON ${s}.lh_messages (queue, group_id, key) WHERE key IS NOT NULL`,
    `CREATE TABLE ${s}.lh_dead_letters (
      id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- the order they died in
      queue    integer  NOT NULL,
      seq      bigint   NOT NULL,
      group_id text     NOT NULL,
      priority smallint NOT NULL,
      event    text     NOT NULL,
      attempt  integer  NOT NULL,
      dead_at  double precision NOT NULL,
      UNIQUE (queue, seq)
    )`,
    `CREATE FUNCTION ${s}.lh_now() RETURNS double precision LANGUAGE sql VOLATILE AS
      $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision $$`,

    // The head left (acked, dead-lettered, cancelled): drop the group if it is empty, else its new
    // head is free (or held by its own delay) and has not been delivered yet. Never-claimed groups
    // tie on claim order and go by their head's seq: a cancelled head passes that place on (only
    // a cancel removes an unclaimed head, so an ack never moves a group in the claim-order
    // index). True if the group goes on.
    `CREATE FUNCTION ${s}.lh_remove_head(p_queue integer, p_group text, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_next bigint; v_not_before double precision;
    BEGIN
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group;
        RETURN false;
      END IF;
      UPDATE ${s}.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before,
          first_seq = CASE WHEN g.claim_order = 0 THEN v_next ELSE g.first_seq END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      RETURN true;
    END $$`,

    // p_delay > 0: not deliverable while now <= now + p_delay (a delayed head holds its group).
    `CREATE FUNCTION ${s}.lh_publish(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_seq bigint;
      v_not_before double precision := CASE WHEN p_delay > 0 THEN coalesce(p_now, ${s}.lh_now()) + p_delay END;
    BEGIN
      LOOP
        -- Lock the group row (so seqs in a group are taken in commit order), or create it.
        PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
        IF FOUND THEN
          IF p_key IS NOT NULL THEN
            SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
            IF FOUND THEN RETURN v_seq; END IF;
          END IF;
          v_seq := nextval(p_seqs);
          INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, key, not_before) VALUES (p_queue, p_group, v_seq, p_event, p_key, v_not_before);
          EXIT;
        END IF;
        v_seq := nextval(p_seqs);
        INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq, locked_until) VALUES (p_queue, p_group, p_priority, v_seq, v_not_before)
          ON CONFLICT DO NOTHING;
        IF FOUND THEN
          INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, key, not_before) VALUES (p_queue, p_group, v_seq, p_event, p_key, v_not_before);
          EXIT;
        END IF;
        -- A concurrent publish created the group first (this seq becomes a gap): lock its row.
      END LOOP;
      ${notify}
      RETURN v_seq;
    END $$`,

    `CREATE FUNCTION ${s}.lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_group text; v_attempt integer; v_priority smallint; v_seq bigint; v_event text;
    BEGIN
      LOOP
        SELECT g.group_id, g.head_attempt, g.priority INTO v_group, v_attempt, v_priority FROM ${s}.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        SELECT m.seq, m.event INTO v_seq, v_event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          INSERT INTO ${s}.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at)
            VALUES (p_queue, v_seq, v_group, v_priority, v_event, v_attempt, v_now);
          PERFORM ${s}.lh_remove_head(p_queue, v_group, v_seq);
          CONTINUE;
        END IF;
        UPDATE ${s}.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          WHERE g.queue = p_queue AND g.group_id = v_group;
        o_seq := v_seq; o_group := v_group; o_event := v_event; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $$`,

    `CREATE FUNCTION ${s}.lh_ack(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_channel text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holds}
      -- The next message of the group is claimable now: say so.
      IF ${s}.lh_remove_head(p_queue, p_group, p_seq) THEN ${notify} END IF;
      RETURN true;
    END $$`,

    ackClaimFunction(s),

    // nack: p_delay 0 frees the head now; > 0 parks it (no holder) until now + p_delay.
    `CREATE FUNCTION ${s}.lh_release(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holds}
      UPDATE ${s}.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, ${s}.lh_now()) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      ${notify}
      RETURN true;
    END $$`,

    // extend: the new expiry, or NULL when the lease no longer holds.
    `CREATE FUNCTION ${s}.lh_extend(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_visibility double precision,
        p_now double precision) RETURNS double precision LANGUAGE plpgsql AS $$
    DECLARE v_until double precision := coalesce(p_now, ${s}.lh_now()) + p_visibility;
    BEGIN
      IF NOT ${s}.lh_holds(p_queue, p_group, p_seq, p_attempt, p_worker) THEN RETURN NULL; END IF;
      UPDATE ${s}.lh_groups g SET locked_until = v_until WHERE g.queue = p_queue AND g.group_id = p_group;
      RETURN v_until;
    END $$`,

    `CREATE FUNCTION ${s}.lh_holds(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holds}
      RETURN true;
    END $$`,

    // redrive: the new seq, or NULL when p_seq is not a dead letter.
    `CREATE FUNCTION ${s}.lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_priority smallint; v_event text;
    BEGIN
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq RETURNING d.group_id, d.priority, d.event
        INTO v_group, v_priority, v_event;
      IF NOT FOUND THEN RETURN NULL; END IF;
      RETURN ${s}.lh_publish(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel);
    END $$`,
      ...batchFunctions(s),
  ];
}

/**
 * `lh_ack_claim`: acks, then claims in the same transaction. `one`: migration 11's
 * `lh_ack_claim_one`, over `lh_claim_one`, whose rows carry the counter and the mark too.
 */
export function ackClaimFunction(s: string, one = false): string {
  return `CREATE FUNCTION ${s}.lh_ack_claim${one ? '_one' : ''}(p_queue integer, p_claims regclass, p_group text, p_seq bigint, p_attempt integer, p_worker text,
        p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_channel text)
      RETURNS TABLE (o_lost boolean, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision${one ? ', o_counter bigint, o_low bigint' : ''}) LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT ${s}.lh_ack(p_queue, p_group, p_seq, p_attempt, p_worker, p_channel) THEN
        o_lost := true;
        RETURN NEXT;
        RETURN;
      END IF;
      RETURN QUERY SELECT false, c.* FROM ${s}.lh_claim${one ? '_one' : ''}(p_queue, p_claims, p_claimer, p_visibility, p_min_priority, p_now, p_max_attempts) c;
    END $$`;
}
