/**
 * Snapshots kept with the schema fixtures were written before schema 6 (core) / 5 (PostgreSQL)
 * added holds and reasons, 7 pauses and 9 (core and PostgreSQL) a message's last error, and
 * before snapshots named what a message waits for and its coalescing window: read by today's
 * leasehold, every group has `heldBy: null` and `paused: false`, every message `lastError: null`,
 * `waitsFor: []` (a caller compares a blocked message's waits apart) and `window: null`, the
 * queue `paused: false`, every dead letter `reason: null`, and nothing else differs.
 */
import type { TransportSnapshot } from '../../src/transport/contract.js';

export function asReadToday(snapshot: TransportSnapshot): TransportSnapshot {
  return {
    ...snapshot,
    paused: snapshot.paused ?? false,
    groups: snapshot.groups.map((group) => ({
      ...group,
      heldBy: group.heldBy ?? null,
      paused: group.paused ?? false,
      messages: group.messages.map((message) => ({ ...message, lastError: message.lastError ?? null, waitsFor: message.waitsFor ?? [], window: message.window ?? null })),
    })),
    deadLetters: snapshot.deadLetters.map((letter) => ({ ...letter, reason: letter.reason ?? null })),
  };
}
