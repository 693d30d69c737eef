/**
 * Migration 7: pause and resume, of a queue or of one group.
 *
 * A queue's pause is a flag on its `lh_queues` row, which the claim's walk reads once (an
 * uncorrelated subquery: one test before the walk, not one per group). A group's pause is kept
 * by name in `lh_paused_groups` (a group row comes and goes with its messages, and a pause may
 * name a group before its first publish) and copied onto the group row while one exists, where
 * the walk reads it beside the lock it reads already; a trigger copies it onto a group row when
 * one is created. The lock stays as it is, so a lease in flight keeps its expiry and its holder
 * may still ack it.
 * @internal
 */
import { buryingClaim } from './transport-hold-sql.js';

export function transportPauseMigration(s: string): string[] {
  // A publish creating the group right now (not committed yet) read the names before this call
  // changed them, and this call's UPDATE cannot see its row: an insert of the same key waits for
  // that publish to end, after which the UPDATE sees the row. (The probe row is never kept.)
  const waitForCreator = `
      INSERT INTO ${s}.lh_groups (queue, group_id, priority, first_seq) VALUES (p_queue, p_group, 0, 0)
        ON CONFLICT DO NOTHING RETURNING ctid INTO v_probe;
      IF v_probe IS NOT NULL THEN DELETE FROM ${s}.lh_groups g WHERE g.ctid = v_probe; END IF;`;
  return [
    `ALTER TABLE ${s}.lh_queues ADD COLUMN paused boolean`,
    `ALTER TABLE ${s}.lh_groups ADD COLUMN paused boolean`,
    `CREATE TABLE ${s}.lh_paused_groups (
      queue    integer NOT NULL,
      group_id text    NOT NULL,
      PRIMARY KEY (queue, group_id)
    )`,

    // Each statement of a volatile function sees what committed before it started, so a publish
    // that waited for a pause's commit sees its name here.
    `CREATE FUNCTION ${s}.lh_group_created() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM ${s}.lh_paused_groups p WHERE p.queue = NEW.queue AND p.group_id = NEW.group_id) THEN
        NEW.paused := true;
      END IF;
      RETURN NEW;
    END $$`,
    `CREATE TRIGGER lh_group_created BEFORE INSERT ON ${s}.lh_groups FOR EACH ROW EXECUTE FUNCTION ${s}.lh_group_created()`,

    buryingClaim(s, pausedWalk(s)),

    // p_group NULL: the queue. Pausing changes nothing claimable, so it raises no notice.
    `CREATE FUNCTION ${s}.lh_pause(p_queue integer, p_group text) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE ${s}.lh_queues q SET paused = true WHERE q.id = p_queue AND q.paused IS NULL;
        RETURN;
      END IF;
      INSERT INTO ${s}.lh_paused_groups (queue, group_id) VALUES (p_queue, p_group) ON CONFLICT DO NOTHING;
      ${waitForCreator}
      UPDATE ${s}.lh_groups g SET paused = true WHERE g.queue = p_queue AND g.group_id = p_group;
    END $$`,

    // True when something was paused and now is not (its messages may be claimable: a notice).
    `CREATE FUNCTION ${s}.lh_resume(p_queue integer, p_group text, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE ${s}.lh_queues q SET paused = NULL WHERE q.id = p_queue AND q.paused;
      ELSE
        DELETE FROM ${s}.lh_paused_groups p WHERE p.queue = p_queue AND p.group_id = p_group;
        IF NOT FOUND THEN RETURN false; END IF;
        ${waitForCreator}
        UPDATE ${s}.lh_groups g SET paused = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN true;
      END IF;
      IF NOT FOUND THEN RETURN false; END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,
  ];
}

/** The claim's walk skips paused groups, and everything while the queue is paused (migration 7). */
export function pausedWalk(s: string): string {
  return ` AND g.paused IS NULL
            AND NOT EXISTS (SELECT 1 FROM ${s}.lh_queues q WHERE q.id = p_queue AND q.paused)`;
}
