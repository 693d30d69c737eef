/**
 * Pause and resume of a queue or a group.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const pause: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_group_created() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM ${s}.lh_paused_groups p WHERE p.queue = NEW.queue AND p.group_id = NEW.group_id) THEN
        NEW.paused := true;
      END IF;
      RETURN NEW;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_pause(p_queue integer, p_group text) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE ${s}.lh_queues q SET paused = true WHERE q.id = p_queue AND q.paused IS NULL;
        RETURN;
      END IF;
      INSERT INTO ${s}.lh_paused_groups (queue, group_id) VALUES (p_queue, p_group) ON CONFLICT DO NOTHING;
      
      INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq) VALUES (p_queue, p_group, 0, 0)
        ON CONFLICT DO NOTHING RETURNING ctid INTO v_probe;
      IF v_probe IS NOT NULL THEN DELETE FROM ${s}.lh_groups g WHERE g.ctid = v_probe; END IF;
      UPDATE ${s}.lh_groups g SET paused = true WHERE g.queue = p_queue AND g.group_id = p_group;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_resume(p_queue integer, p_group text, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE ${s}.lh_queues q SET paused = NULL WHERE q.id = p_queue AND q.paused;
      ELSE
        DELETE FROM ${s}.lh_paused_groups p WHERE p.queue = p_queue AND p.group_id = p_group;
        IF NOT FOUND THEN RETURN false; END IF;
        
      INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq) VALUES (p_queue, p_group, 0, 0)
        ON CONFLICT DO NOTHING RETURNING ctid INTO v_probe;
      IF v_probe IS NOT NULL THEN DELETE FROM ${s}.lh_groups g WHERE g.ctid = v_probe; END IF;
        UPDATE ${s}.lh_groups g SET paused = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN true;
      END IF;
      IF NOT FOUND THEN RETURN false; END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,
  ],
  triggers: (s) => [
    `CREATE TRIGGER lh_group_created BEFORE INSERT ON ${s}.lh_groups FOR EACH ROW EXECUTE FUNCTION ${s}.lh_group_created()`,
  ],
};
