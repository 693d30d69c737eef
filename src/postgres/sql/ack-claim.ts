/**
 * An ack followed by a claim in one statement (`ackAndClaim`, `ackAndClaimMany`).
 *
 * They call the ack and claim functions rather than repeating them, so they keep their rules: acks
 * lock their groups in one order (by id), a lease that no longer holds is reported and the rest
 * go ahead. A group this call just acked is locked by this same transaction, which `SKIP
 * LOCKED` does not skip: its next message can be claimed here at once. `lh_ack_claim_many` reads
 * the server's clock after the acks, which may have waited for row locks: read before them it
 * could be older than a lease another worker took and gave back meanwhile.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const ackClaim: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_ack_claim_one(p_queue integer, p_claims regclass, p_group text, p_seq bigint, p_attempt integer, p_worker text,
        p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_channel text)
      RETURNS TABLE (o_lost boolean, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer, o_low bigint) LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT ${s}.lh_ack(p_queue, p_group, p_seq, p_attempt, p_worker, p_channel) THEN
        o_lost := true;
        RETURN NEXT;
        RETURN;
      END IF;
      RETURN QUERY SELECT false, c.* FROM ${s}.lh_claim_one(p_queue, p_claims, p_claimer, p_visibility, p_min_priority, p_now, p_max_attempts) c;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_ack_claim_many(p_queue integer, p_claims regclass, p_leases json, p_claimer text, p_visibility double precision,
        p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer, p_channel text)
      RETURNS TABLE (o_done text, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer)
      LANGUAGE plpgsql AS $$
    BEGIN
      o_done := ${s}.lh_ack_many(p_queue, p_leases, p_channel);
      RETURN NEXT;
      RETURN QUERY SELECT NULL::text, c.* FROM ${s}.lh_claim_many(p_queue, p_claims, p_claimer, p_visibility, p_min_priority,
        p_now, p_max_attempts, p_max) c;
    END $$`,
  ],
};
