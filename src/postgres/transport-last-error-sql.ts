/**
 * Migration 9: why a message failed. A nack may give a reason (`consume()` gives the handler's
 * error message); it is kept on the message (`last_error`, written only by such a nack through
 * `lh_fail`), and `lh_bury` gives a dead letter that ran out of attempts that reason. On the
 * message rather than its group: it leaves with the message, so no path that changes a group's
 * head has to clear it. A nack without a reason still goes through `lh_release`, unchanged.
 * @internal
 */
import { buryFunction } from './transport-hold-sql.js';
import { holdsLease } from './transport-sql.js';

export function transportLastErrorMigration(s: string): string[] {
  const now = `floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;
  const notify = `IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;`;
  return [
    `ALTER TABLE ${s}.lh_messages ADD COLUMN last_error text`,

    // A nack with a reason: the head goes back as lh_release gives it back, and keeps the reason.
    `CREATE FUNCTION ${s}.lh_fail(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_reason text, p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      ${holdsLease(s)}
      UPDATE ${s}.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, ${now}) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      UPDATE ${s}.lh_messages m SET last_error = p_reason WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      ${notify}
      RETURN true;
    END $$`,

    // Migration 5's lh_bury, the reason falling back on the message's last one.
    buryFunction(s, 'CREATE OR REPLACE', 'coalesce(p_reason, m.last_error)'),
  ];
}
