/**
 * A removal with what depends on it (`discard` with dependents, `cancelGroup`):
 * `lh_remove_dependents` finds the messages, checks their leases, then cancels them newest
 * first and discards the dead letter, in one statement.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const remove: SqlOperation = {
  functions: (s) => [
    // p_seq names a dead letter or (with dependents) a queued message, or p_group a group (its
    // messages and the dead letter holding it). One row per removed seq; none when p_seq names
    // nothing; a single row with a negative seq when that message is under a live lease, and
    // nothing is removed.
    `CREATE OR REPLACE FUNCTION ${s}.lh_remove_dependents(p_queue integer, p_seq bigint, p_group text, p_dependents boolean,
        p_now double precision, p_channel text) RETURNS TABLE (o_seq bigint, o_group text) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${s}.lh_now());
      v_group text; v_dead bigint; v_from bigint; v_seqs bigint[]; v_groups text[]; v_leased bigint;
    BEGIN
      -- The queue row first, as a publish takes it: no publish adds a waiter while this runs.
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      IF p_group IS NULL THEN
        SELECT d.group_id INTO v_group FROM ${s}.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq;
        IF FOUND THEN
          v_dead := p_seq;
          v_from := CASE WHEN p_dependents THEN p_seq + 1 END;
        ELSIF p_dependents THEN
          SELECT m.group_id INTO v_group FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.seq = p_seq;
          IF NOT FOUND THEN RETURN; END IF;
          v_from := p_seq;
        ELSE
          RETURN;
        END IF;
      ELSE
        v_group := p_group;
        v_from := 0;
        SELECT g.held_seq INTO v_dead FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group;
      END IF;
      WITH RECURSIVE roots(group_id, from_seq) AS (
        SELECT v_group, v_from WHERE v_from IS NOT NULL
        UNION ALL
        SELECT w.group_id, w.seq FROM ${s}.lh_waits w WHERE p_dependents AND v_dead IS NOT NULL AND w.queue = p_queue AND w.on_seq = v_dead
      ), chosen(group_id, seq) AS (
        SELECT m.group_id, m.seq FROM roots r JOIN ${s}.lh_messages m ON m.queue = p_queue AND m.group_id = r.group_id AND m.seq >= r.from_seq
        UNION
        SELECT m.group_id, m.seq FROM chosen c
          JOIN ${s}.lh_waits w ON p_dependents AND w.queue = p_queue AND w.on_seq = c.seq
          JOIN ${s}.lh_messages m ON m.queue = p_queue AND m.group_id = w.group_id AND m.seq >= w.seq
      )
      SELECT coalesce(array_agg(c.seq ORDER BY c.seq DESC), '{}'), coalesce(array_agg(c.group_id ORDER BY c.seq DESC), '{}')
        INTO v_seqs, v_groups FROM chosen c;
      PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = ANY (v_groups)
        ORDER BY g.group_id COLLATE "C" FOR UPDATE;
      SELECT h.seq INTO v_leased FROM ${s}.lh_groups g
        CROSS JOIN LATERAL (SELECT m.seq FROM ${s}.lh_messages m WHERE m.queue = g.queue AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1) h
        WHERE g.queue = p_queue AND g.group_id = ANY (v_groups) AND g.holder IS NOT NULL AND g.locked_until >= v_now AND h.seq = ANY (v_seqs)
        LIMIT 1;
      IF FOUND THEN
        o_seq := -v_leased;
        RETURN NEXT;
        RETURN;
      END IF;
      -- Newest first: every waiter goes before what it waits for.
      FOR i IN 1 .. coalesce(array_length(v_seqs, 1), 0) LOOP
        IF ${s}.lh_cancel(p_queue, v_seqs[i], v_now, NULL) > 0 THEN
          o_seq := v_seqs[i];
          o_group := v_groups[i];
          RETURN NEXT;
        END IF;
      END LOOP;
      IF v_dead IS NOT NULL AND ${s}.lh_discard(p_queue, v_dead, NULL) THEN
        o_seq := v_dead;
        o_group := v_group;
        RETURN NEXT;
      END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
    END $$`,
  ],
};
