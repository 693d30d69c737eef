/**
 * Migration 5: dead letters that hold their group, `reject`, `release` and `discard`.
 *
 * A queue keeps its `on_dead_letter` policy, read where a message dies (another transport may
 * name it later). With `'hold'`, a dead letter keeps its group's row
 * (even with no message left, so later publishes wait too) with `held_seq` naming it and
 * `locked_until` at {@link HELD} (later than any clock): the claim's walk passes such a group
 * over as it passes a parked one, so the claim gains no condition. `lh_remove_head` (a cancel)
 * leaves a held group as it is. The claim reads the policy only on its dead-letter path.
 * @internal
 */
import { HELD } from '../locks.js';
import { leaseLockedGroup } from './transport-speed-sql.js';
import { holdsLease } from './transport-sql.js';

/**
 * `lh_claim` with its dead-letter path through `lh_bury`, as migration 5 wrote it; `walk` adds
 * conditions to the walk over the groups (migration 7: pauses), and is empty for migration 5,
 * whose text must not change. `marked`: migration 11's `lh_claim_one`, which returns the lease's
 * counter and the low-water mark too.
 */
export function buryingClaim(s: string, walk = '', marked = false): string {
  const now = `floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;
  return `${marked ? `CREATE FUNCTION ${s}.lh_claim_one` : `CREATE OR REPLACE FUNCTION ${s}.lh_claim`}(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision${marked ? ', o_counter bigint, o_low bigint' : ''}) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${now});
      v_row tid; v_group text; v_attempt integer; v_seq bigint;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt INTO v_row, v_group, v_attempt FROM ${s}.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now)${walk}
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          PERFORM ${s}.lh_bury(p_queue, v_group, v_seq, v_now, NULL);
          CONTINUE;
        END IF;
${leaseLockedGroup(s, marked)}
      END LOOP;
    END $$`;
}

/**
 * `lh_bury`: moves the head p_seq of a locked group to the dead letters, with `reason` (an SQL
 * expression) as its reason; with the queue's hold policy the group is held at it. True if the
 * group goes on (its next message is claimable). Migration 5 creates it, 9 replaces it.
 */
export function buryFunction(s: string, create: 'CREATE' | 'CREATE OR REPLACE', reason: string): string {
  return `${create} FUNCTION ${s}.lh_bury(p_queue integer, p_group text, p_seq bigint, p_now double precision, p_reason text)
      RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at, reason)
        SELECT p_queue, m.seq, m.group_id, g.priority, m.event, g.head_attempt, p_now, ${reason}
        FROM ${s}.lh_messages m JOIN ${s}.lh_groups g ON g.queue = m.queue AND g.group_id = m.group_id
        WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF (SELECT q.on_dead_letter FROM ${s}.lh_queues q WHERE q.id = p_queue) = 'hold' THEN
        UPDATE ${s}.lh_groups g SET held_seq = p_seq, holder = NULL, head_attempt = 0, locked_until = ${HELD}
          WHERE g.queue = p_queue AND g.group_id = p_group;
        DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
        RETURN false;
      END IF;
      RETURN ${s}.lh_remove_head(p_queue, p_group, p_seq);
    END $$`;
}

export function transportHoldMigration(s: string): string[] {
  const now = `floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  const holds = holdsLease(s);
  return [
    // NULL until a transport names a policy; it then works as 'continue', as every queue did before.
    `ALTER TABLE ${s}.lh_queues ADD COLUMN on_dead_letter text`,
    `ALTER TABLE ${s}.lh_groups ADD COLUMN held_seq bigint`,
    `ALTER TABLE ${s}.lh_dead_letters ADD COLUMN reason text`,

    // A held group goes on only by a redrive or a discard: a cancelled head leaves it held.
    `CREATE OR REPLACE FUNCTION ${s}.lh_remove_head(p_queue integer, p_group text, p_seq bigint) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_next bigint; v_not_before double precision;
    BEGIN
      DELETE FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
        RETURN false;
      END IF;
      UPDATE ${s}.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before,
          first_seq = CASE WHEN g.claim_order = 0 THEN v_next ELSE g.first_seq END
        WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
      RETURN FOUND;
    END $$`,

    buryFunction(s, 'CREATE', 'p_reason'),

    // Migration 3's claim with its dead-letter path through lh_bury.
    buryingClaim(s),

    `CREATE FUNCTION ${s}.lh_reject(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_reason text,
        p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holds}
      IF ${s}.lh_bury(p_queue, p_group, p_seq, coalesce(p_now, ${now}), p_reason) THEN ${notify} END IF;
      RETURN true;
    END $$`,

    // release: a nack that hands the attempt back (the next claim's increment gives it again).
    `CREATE FUNCTION ${s}.lh_release_keeping(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holds}
      UPDATE ${s}.lh_groups g SET holder = NULL, head_attempt = g.head_attempt - 1,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, ${now}) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      ${notify}
      RETURN true;
    END $$`,

    // redrive: the message's seq (its own, back at the head it held; or a new one at its group's
    // tail), or NULL when p_seq is not a dead letter.
    `CREATE OR REPLACE FUNCTION ${s}.lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_priority smallint; v_event text;
    BEGIN
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq RETURNING d.group_id, d.priority, d.event
        INTO v_group, v_priority, v_event;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF FOUND THEN
        -- Every message behind it has a later seq, so under its own it is the head again.
        INSERT INTO ${s}.lh_messages (queue, group_id, seq, event) VALUES (p_queue, v_group, p_seq, v_event);
        UPDATE ${s}.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = NULL
          WHERE g.queue = p_queue AND g.group_id = v_group;
        ${notify}
        RETURN p_seq;
      END IF;
      RETURN ${s}.lh_publish(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel);
    END $$`,

    // discard: false when p_seq is not a dead letter. A group it held goes on with its next message.
    `CREATE FUNCTION ${s}.lh_discard(p_queue integer, p_seq bigint, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_group text; v_not_before double precision;
    BEGIN
      DELETE FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq RETURNING d.group_id INTO v_group;
      IF NOT FOUND THEN RETURN false; END IF;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN true; END IF;
      SELECT m.not_before INTO v_not_before FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group;
        RETURN true;
      END IF;
      UPDATE ${s}.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = v_not_before
        WHERE g.queue = p_queue AND g.group_id = v_group;
      ${notify}
      RETURN true;
    END $$`,
  ];
}
