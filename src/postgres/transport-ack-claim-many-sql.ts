/**
 * Migration 4: `lh_ack_claim_many`, the batch worker's step (`ackAndClaimMany`) as one function:
 * `lh_ack_many` then `lh_claim_many` in one statement, so one round trip and one transaction
 * (one commit flush) where the two calls take two of each.
 *
 * It calls the two functions rather than repeating them, so it keeps their rules exactly: acks
 * lock their groups in one order (by id), a lease that no longer holds is reported and the rest
 * go ahead, claims walk the round-robin order with `SKIP LOCKED` and dead-letter a head out of
 * attempts. A group this call just acked is locked by this same transaction, which `SKIP LOCKED`
 * does not skip: its next message can be claimed here at once, as after a separate ackMany.
 * @internal
 */
export function ackClaimManyMigration(s: string): string[] {
  return [
    // Rows: first one with o_done (one letter per lease in input order, 't' acked, 'f' lost; ''
    // for no leases) and no lease; then one per claimed lease, in claim order, with o_done NULL.
    // lh_claim_many reads the clock once for all its claims. With the server's clock (p_now
    // NULL) that reading comes after the acks, which may have waited for row locks: read before
    // them it could be older than a lease another worker took and gave back meanwhile, and the
    // new lease would then be dated before that one and run out early.
    `CREATE FUNCTION ${s}.lh_ack_claim_many(p_queue integer, p_claims regclass, p_leases json, p_claimer text, p_visibility double precision,
        p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer, p_channel text)
      RETURNS TABLE (o_done text, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision) LANGUAGE plpgsql AS $$
    BEGIN
      o_done := ${s}.lh_ack_many(p_queue, p_leases, p_channel);
      RETURN NEXT;
      RETURN QUERY SELECT NULL::text, c.* FROM ${s}.lh_claim_many(p_queue, p_claims, p_claimer, p_visibility, p_min_priority,
        p_now, p_max_attempts, p_max) c;
    END $$`,
  ];
}
