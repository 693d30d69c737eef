/**
 * Every operation leasehold installs on PostgreSQL, and the hash that versions them as a whole.
 * The live SQL of a call is in the file named for it (`claim.ts`, `ack.ts`, `publish.ts`, …).
 *
 * Every transport call is one statement calling one of these functions: one round trip, run by
 * PostgreSQL as its own transaction (in READ COMMITTED each statement inside a function sees
 * what committed before it started). Only a group's head is ever leased or parked, so the lease
 * (holder, attempt, expiry) lives on the group row and a message row never changes after its
 * publish.
 *
 * Concurrency. Every call that changes a group locks its group row first and keeps the lock to
 * its commit, so per group everything is serialized: publishes take seqs in commit order, and an
 * ack, a nack, a claim of an expired lease and a publish never interleave. Every path that
 * inserts a message locks its queue row before any group row (one lock order; claims, acks,
 * nacks and cancels never lock the queue row). A claim walks groups in claim order with
 * `FOR UPDATE SKIP LOCKED`: a group another transaction holds is passed over, never waited for.
 * The claim order comes from a sequence per queue; sequences never go back, so a rolled-back
 * claim or publish leaves a gap; only the order matters.
 *
 * Times are milliseconds (double precision, as JavaScript numbers are). A call passes the
 * injected clock's reading as `p_now`, or NULL to use the server's clock.
 * @internal
 */
import { ack } from './ack.js';
import { ackClaim } from './ack-claim.js';
import { cancel } from './cancel.js';
import { claim } from './claim.js';
import { commit } from './commit.js';
import { counter } from './counter.js';
import { deadLetter } from './dead-letter.js';
import { lease } from './lease.js';
import { nack } from './nack.js';
import { now } from './now.js';
import type { SqlOperation } from './operation.js';
import { pause } from './pause.js';
import { publish } from './publish.js';
import { publishAfter } from './publish-after.js';
import { publishDebounced } from './publish-debounced.js';
import { publishKeyed } from './publish-keyed.js';
import { publishMany } from './publish-many.js';
import { redrive } from './redrive.js';
import { remove } from './remove.js';
import { waits } from './waits.js';

export const operations: readonly SqlOperation[] = [now, cancel, publish, publishKeyed, publishAfter, publishDebounced, publishMany, claim, ack, ackClaim, lease, nack, deadLetter, redrive, remove, pause, waits, counter, commit];

/** Every function statement, then every trigger statement, for the quoted schema `s`. */
export function operationSql(s: string): { functions: string[]; triggers: string[] } {
  return { functions: operations.flatMap((o) => o.functions(s)), triggers: operations.flatMap((o) => o.triggers?.(s) ?? []) };
}

/**
 * A 53-bit hash (cyrb53) of `text` as 14 hex digits: enough to tell one build's source from
 * another's, computed without `node:crypto` so it runs wherever the backend does.
 */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}

/** The hash of the whole source, the same for every schema name: what `lh_operations` records. */
export const OPERATIONS_HASH = ((): string => {
  const { functions, triggers } = operationSql('"\u0000"');
  return hash([...functions, ...triggers].join('\u0000'));
})();
