/**
 * What a message waiting for others (`after`) is freed by.
 * @internal
 */
import { BLOCKED } from '../../locks.js';
import type { SqlOperation } from './operation.js';

export const waits: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_satisfy(p_queue integer, p_seq bigint) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE ${s}.lh_messages m SET waits = nullif(m.waits - 1, 0)
        FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq;
      UPDATE ${s}.lh_messages m SET not_before = m.delay_until, delay_until = NULL
        FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq
          AND m.waits IS NULL AND m.not_before = ${BLOCKED};
      UPDATE ${s}.lh_groups g SET locked_until = (SELECT m.not_before FROM ${s}.lh_messages m
          WHERE m.queue = g.queue AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1)
        WHERE g.queue = p_queue AND g.locked_until = ${BLOCKED}
          AND g.group_id IN (SELECT w.group_id FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq);
      DELETE FROM ${s}.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_waited_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ${s}.lh_dead_letters d WHERE d.queue = OLD.queue AND d.seq = OLD.seq) THEN
        PERFORM ${s}.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_dead_letter_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM ${s}.lh_messages m WHERE m.queue = OLD.queue AND m.group_id = OLD.group_id AND m.seq = OLD.seq) THEN
        PERFORM ${s}.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_waiter_gone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM ${s}.lh_waits w WHERE w.queue = OLD.queue AND w.seq = OLD.seq;
      RETURN NULL;
    END $$`,
  ],
  triggers: (s) => [
    `CREATE TRIGGER lh_waited_gone AFTER DELETE ON ${s}.lh_messages FOR EACH ROW WHEN (OLD.watched) EXECUTE FUNCTION ${s}.lh_waited_gone()`,
    `CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON ${s}.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION ${s}.lh_dead_letter_gone()`,
    `CREATE TRIGGER lh_waiter_gone AFTER DELETE ON ${s}.lh_messages FOR EACH ROW WHEN (OLD.waits IS NOT NULL) EXECUTE FUNCTION ${s}.lh_waiter_gone()`,
  ],
};
