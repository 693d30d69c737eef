/**
 * Publishing one message: `lh_publish` locks the queue row (before any group row, the one lock order of every path that inserts a message) and `lh_append` appends and numbers it.
 *
 * Numbering. The queue row's lock is held to the commit, so numbers (`counter`) are given in
 * commit order and without gaps: a publish that rolls back rolls its number back with it, a
 * `'skip'` duplicate takes none, and a redrive gives its message its dead letter's number. Seqs
 * come from a sequence, which is not transactional, hence the two.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const publish: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_append(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text, p_counter bigint) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_seq bigint;
      v_counter bigint := p_counter;
      v_not_before double precision := CASE WHEN p_delay > 0 THEN coalesce(p_now, ${s}.lh_now()) + p_delay END;
    BEGIN
      LOOP
        PERFORM 1 FROM ${s}.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
        IF FOUND THEN
          IF p_key IS NOT NULL THEN
            SELECT m.seq INTO v_seq FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
            IF FOUND THEN RETURN v_seq; END IF;
          END IF;
          v_seq := nextval(p_seqs);
          EXIT;
        END IF;
        v_seq := nextval(p_seqs);
        INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq, locked_until) VALUES (p_queue, p_group, p_priority, v_seq, v_not_before)
          ON CONFLICT DO NOTHING;
        EXIT WHEN FOUND;
      END LOOP;
      IF v_counter IS NULL THEN
        UPDATE ${s}.lh_queues q SET last_counter = q.last_counter + 1 WHERE q.id = p_queue RETURNING q.last_counter INTO v_counter;
      END IF;
      INSERT INTO ${s}.lh_messages (queue, group_id, seq, event, key, not_before, counter)
        VALUES (p_queue, p_group, v_seq, p_event, p_key, v_not_before, v_counter);
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN v_seq;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_publish(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text,
        p_delay double precision, p_now double precision, p_channel text) RETURNS bigint LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM ${s}.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      RETURN ${s}.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, NULL);
    END $$`,
  ],
};
