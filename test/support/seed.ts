/**
 * The seeds' own algorithms, as the seed documents write them: the oracle for the tests and
 * "what the seed achieves" in the benchmarks. Not part of the library.
 */
import type { SqlDatabase } from '../../src/sqlite/driver.js';

export const SEED_SCHEMA = `
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

export const SEED_CLAIM = `
SELECT m.seq, m.group_id, m.event
  FROM messages m JOIN groups g ON g.group_id = m.group_id
  WHERE (m.locked_by IS NULL OR m.lock_expiry < ?)
    AND m.group_id NOT IN (
      SELECT group_id FROM messages WHERE locked_by IS NOT NULL AND lock_expiry >= ?)
    AND g.priority >= ?
  ORDER BY g.last_claimed_at ASC, m.seq ASC LIMIT 1`;

/** The seed's SqliteTransport, operation by operation, as 001 writes it. */
export class SeedSqlTransport {
  private readonly claimStmt;
  private readonly stmts;
  constructor(private readonly db: SqlDatabase) {
    db.exec(SEED_SCHEMA);
    this.claimStmt = db.prepare(SEED_CLAIM);
    this.stmts = {
      insert: db.prepare('INSERT INTO messages (group_id, event) VALUES (?, ?) RETURNING seq'),
      group: db.prepare('INSERT OR IGNORE INTO groups (group_id, priority) VALUES (?, ?)'),
      touch: db.prepare('UPDATE groups SET last_claimed_at = ? WHERE group_id = ?'),
      lock: db.prepare('UPDATE messages SET locked_by = ?, lock_expiry = ? WHERE seq = ?'),
      delete: db.prepare('DELETE FROM messages WHERE seq = ?'),
      dropGroup: db.prepare('DELETE FROM groups WHERE group_id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE group_id = ?)'),
      park: db.prepare("UPDATE messages SET locked_by = '__parked__', lock_expiry = ? WHERE seq = ?"),
      free: db.prepare('UPDATE messages SET locked_by = NULL, lock_expiry = NULL WHERE seq = ?'),
    };
  }
  publish(groupId: string, event: unknown, priority: number): number {
    return this.db.transaction(() => {
      const { seq } = this.stmts.insert.get<{ seq: number }>(groupId, JSON.stringify(event))!;
      this.stmts.group.run(groupId, priority);
      return seq;
    });
  }
  /**
   * `claimedAt` (default `now`) is the time recorded as the group's last claim: several claims
   * at one instant get increasing fractions of a millisecond, so the seed's time-based
   * round-robin orders them as its claims would be ordered if time moved between them.
   */
  claim(workerId: string, visibility: number, minPriority: number, now: number, claimedAt = now): number | null {
    return this.db.transaction(() => {
      const row = this.claimStmt.get<{ seq: number; group_id: string }>(now, now, minPriority);
      if (!row) return null;
      this.stmts.touch.run(claimedAt, row.group_id);
      this.stmts.lock.run(workerId, now + visibility, row.seq);
      return row.seq;
    });
  }
  ack(seq: number, groupId: string): void {
    this.db.transaction(() => {
      this.stmts.delete.run(seq);
      this.stmts.dropGroup.run(groupId, groupId);
    });
  }
  nack(seq: number, delay: number, now: number): void {
    if (delay > 0) this.stmts.park.run(now + delay, seq);
    else this.stmts.free.run(seq);
  }
}


interface SeedMessage {
  seq: number;
  groupId: string;
  event: unknown;
  lockedBy: string | null;
  lockExpiry: number;
}

/** The seed's InMemoryTransport (000): a list of messages, sorted in full on every claim. */
export class SeedMemoryTransport {
  private messages: SeedMessage[] = [];
  private readonly groups = new Map<string, { lastClaimedAt: number; priority: number }>();
  private seq = 0;

  publish(groupId: string, event: unknown, priority = 0): number {
    this.seq += 1;
    this.messages.push({ seq: this.seq, groupId, event, lockedBy: null, lockExpiry: 0 });
    if (!this.groups.has(groupId)) this.groups.set(groupId, { lastClaimedAt: 0, priority });
    return this.seq;
  }

  claim(workerId: string, visibility: number, minPriority: number, now: number): { seq: number; groupId: string; event: unknown } | null {
    const inFlight = new Set(this.messages.filter((m) => m.lockedBy !== null && m.lockExpiry >= now).map((m) => m.groupId));
    const sorted = [...this.messages].sort((a, b) => this.groups.get(a.groupId)!.lastClaimedAt - this.groups.get(b.groupId)!.lastClaimedAt || a.seq - b.seq);
    for (const m of sorted) {
      const available = m.lockedBy === null || m.lockExpiry < now;
      if (!available || inFlight.has(m.groupId)) continue;
      if (this.groups.get(m.groupId)!.priority < minPriority) continue;
      m.lockedBy = workerId;
      m.lockExpiry = now + visibility;
      this.groups.get(m.groupId)!.lastClaimedAt = now;
      return { seq: m.seq, groupId: m.groupId, event: m.event };
    }
    return null;
  }

  ack(seq: number): void {
    const m = this.messages.find((x) => x.seq === seq)!;
    this.messages = this.messages.filter((x) => x.seq !== seq);
    if (!this.messages.some((x) => x.groupId === m.groupId)) this.groups.delete(m.groupId);
  }
}
