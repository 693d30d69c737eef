/**
 * Giving a head back: `nack` (`lh_release`, or `lh_fail` with a reason) and `release` (`lh_release_keeping`).
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const nack: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_release(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE ${s}.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, ${s}.lh_now()) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_fail(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_reason text, p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE ${s}.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      UPDATE ${s}.lh_messages m SET last_error = p_reason WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,

    // A release spends no attempt (head_attempt goes back) and, with a reason (a RetryLaterError's
    // message), leaves it as the message's last_error for every tab's status, as lh_fail does.
    `CREATE OR REPLACE FUNCTION ${s}.lh_release_keeping(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision,
        p_reason text, p_now double precision, p_channel text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      
    PERFORM 1 FROM ${s}.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM ${s}.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE ${s}.lh_groups g SET holder = NULL, head_attempt = g.head_attempt - 1,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      IF p_reason IS NOT NULL THEN
        UPDATE ${s}.lh_messages m SET last_error = p_reason WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $$`,
  ],
};
