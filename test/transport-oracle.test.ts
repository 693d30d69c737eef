/**
 * The oracle: the seed's claim SQL (shared/seeds/001), verbatim, on the seed's own schema.
 * Random workloads run in lock-step against it and against every backend, with a clock that
 * advances between claims (the condition under which the seed's time-based round-robin is
 * well defined); every claim must pick the message the seed's SQL picks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { Lease } from '../src/transport/contract.js';
import { transportBackends } from './support/backends.js';

const SEED_SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  group_id     TEXT NOT NULL,
  event        TEXT NOT NULL,
  locked_by    TEXT,
  lock_expiry  REAL
);
CREATE TABLE IF NOT EXISTS groups (
  group_id       TEXT PRIMARY KEY,
  last_claimed_at REAL NOT NULL DEFAULT 0.0,
  priority        INT  NOT NULL DEFAULT 0
);`;

const SEED_CLAIM = `
SELECT m.seq, m.group_id, m.event
  FROM messages m JOIN groups g ON g.group_id = m.group_id
  WHERE (m.locked_by IS NULL OR m.lock_expiry < ?)
    AND m.group_id NOT IN (
      SELECT group_id FROM messages WHERE locked_by IS NOT NULL AND lock_expiry >= ?)
    AND g.priority >= ?
  ORDER BY g.last_claimed_at ASC, m.seq ASC LIMIT 1`;

/** The seed's SqliteTransport, operation by operation, as 001 writes it. */
class SeedTransport {
  private readonly claimStmt;
  constructor(private readonly db: SqlDatabase) {
    db.exec(SEED_SCHEMA);
    this.claimStmt = db.prepare(SEED_CLAIM);
  }
  publish(groupId: string, event: unknown, priority: number): number {
    const { seq } = this.db.prepare('INSERT INTO messages (group_id, event) VALUES (?, ?) RETURNING seq').get<{ seq: number }>(groupId, JSON.stringify(event))!;
    this.db.prepare('INSERT OR IGNORE INTO groups (group_id, priority) VALUES (?, ?)').run(groupId, priority);
    return seq;
  }
  claim(workerId: string, visibility: number, minPriority: number, now: number): number | null {
    return this.db.transaction(() => {
      const row = this.claimStmt.get<{ seq: number; group_id: string }>(now, now, minPriority);
      if (!row) return null;
      this.db.prepare('UPDATE groups SET last_claimed_at = ? WHERE group_id = ?').run(now, row.group_id);
      this.db.prepare('UPDATE messages SET locked_by = ?, lock_expiry = ? WHERE seq = ?').run(workerId, now + visibility, row.seq);
      return row.seq;
    });
  }
  ack(seq: number, groupId: string): void {
    this.db.prepare('DELETE FROM messages WHERE seq = ?').run(seq);
    this.db.prepare('DELETE FROM groups WHERE group_id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE group_id = ?)').run(groupId, groupId);
  }
  nack(seq: number, delay: number, now: number): void {
    if (delay > 0) this.db.prepare("UPDATE messages SET locked_by = '__parked__', lock_expiry = ? WHERE seq = ?").run(now + delay, seq);
    else this.db.prepare('UPDATE messages SET locked_by = NULL, lock_expiry = NULL WHERE seq = ?').run(seq);
  }
}

type Op =
  | { kind: 'publish'; group: number; priority: number }
  | { kind: 'claim'; visibility: number; minPriority: number }
  | { kind: 'ack'; pick: number }
  | { kind: 'nack'; pick: number; delay: number }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('publish' as const), group: fc.nat(7), priority: fc.nat(4) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), visibility: fc.constantFrom(5, 10, 30), minPriority: fc.oneof(fc.constant(0), fc.nat(4)) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), pick: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('nack' as const), pick: fc.nat(20), delay: fc.constantFrom(0, 0, 5, 15) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1, 5, 10, 30) }) },
);

describe.each(transportBackends)('the seed SQL oracle: $name', (backend) => {
  it('claims exactly what the seed claim SQL claims, every time', async () => {
    let claims = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 80, size: 'max' }), async (ops) => {
        const h = await backend.make({});
        const seedDb = await openWasmDatabase();
        const seed = new SeedTransport(seedDb);
        const held: Lease[] = [];
        try {
          for (const o of ops) {
            const now = h.clock.now();
            if (o.kind === 'publish') {
              const event = { n: claims };
              expect(await h.transport.publish(`g${o.group}`, event, { priority: o.priority })).toBe(seed.publish(`g${o.group}`, event, o.priority));
            } else if (o.kind === 'claim') {
              // The seed's round-robin needs time to move between claims.
              await h.clock.advance(1);
              const lease = await h.transport.claim('w', o.visibility, { minPriority: o.minPriority });
              const expected = seed.claim('w', o.visibility, o.minPriority, h.clock.now());
              expect(lease?.seq ?? null).toBe(expected);
              if (expected !== null) claims++;
              if (lease) held.push(lease);
            } else if (o.kind === 'ack' || o.kind === 'nack') {
              // Act only on leases still valid, as the seed has no fencing to compare.
              const live = held.filter((l) => l.expiresAt >= now);
              const lease = live[o.pick % Math.max(live.length, 1)];
              if (!lease) continue;
              held.splice(held.indexOf(lease), 1);
              if (o.kind === 'ack') {
                await h.transport.ack(lease);
                seed.ack(lease.seq, lease.groupId);
              } else {
                await h.transport.nack(lease, o.delay);
                seed.nack(lease.seq, o.delay, now);
              }
            } else {
              await h.clock.advance(o.ms);
            }
          }
        } finally {
          seedDb.close();
          await h.dispose();
        }
      }),
      { seed: Number(process.env.FC_SEED ?? 1130), numRuns: 300 },
    );
    expect(claims).toBeGreaterThan(1000);
  });
});
