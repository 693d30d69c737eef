/**
 * The seed's claim SQL (shared/seeds/001) extended by one condition for what the seed has no
 * word for: a group delivers nothing while it is paused (by name, or the whole queue), held at
 * its dead letter (`onDeadLetter: 'hold'`), or while its head waits for a message it names in
 * `after` that is still queued or dead. Everything else — the round-robin by last claim time,
 * FIFO within a group, one lease per group, priorities — is the seed's own SQL, unchanged, so
 * the oracle test can compare every claim of a backend using these features with it.
 * Not part of the library.
 */
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { SEED_CLAIM, SEED_SCHEMA } from './seed.js';

const STOPS_SCHEMA = `
CREATE TABLE dead (seq INTEGER PRIMARY KEY, group_id TEXT NOT NULL, event TEXT NOT NULL, priority INT NOT NULL);
CREATE TABLE held_groups (group_id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE paused_groups (group_id TEXT PRIMARY KEY);
CREATE TABLE waits (seq INTEGER NOT NULL, on_seq INTEGER NOT NULL);
-- A head waits while a message it names is still queued or dead (a dead letter may be redriven).
CREATE VIEW stopped_groups AS
  SELECT group_id FROM paused_groups
  UNION SELECT group_id FROM held_groups
  UNION SELECT m.group_id FROM messages m JOIN waits w ON w.seq = m.seq
    WHERE m.seq = (SELECT min(seq) FROM messages WHERE group_id = m.group_id)
      AND (w.on_seq IN (SELECT seq FROM messages) OR w.on_seq IN (SELECT seq FROM dead));`;

const CLAIM_WITH_STOPS = SEED_CLAIM.replace('AND g.priority >= ?', 'AND g.priority >= ?\n    AND m.group_id NOT IN (SELECT group_id FROM stopped_groups)');

export class SeedWithStops {
  private readonly claimStmt;
  private queuePaused = false;

  constructor(
    private readonly db: SqlDatabase,
    private readonly policy: 'hold' | 'continue',
  ) {
    if (CLAIM_WITH_STOPS === SEED_CLAIM) throw new Error('the seed claim changed: the stop condition found no place');
    db.exec(SEED_SCHEMA);
    db.exec(STOPS_SCHEMA);
    this.claimStmt = db.prepare(CLAIM_WITH_STOPS);
  }

  publish(groupId: string, event: unknown, priority: number, after: readonly number[] = []): number {
    return this.db.transaction(() => {
      const { seq } = this.db.prepare('INSERT INTO messages (group_id, event) VALUES (?, ?) RETURNING seq').get<{ seq: number }>(groupId, JSON.stringify(event))!;
      this.db.prepare('INSERT OR IGNORE INTO groups (group_id, priority) VALUES (?, ?)').run(groupId, priority);
      for (const on of after) this.db.prepare('INSERT INTO waits (seq, on_seq) VALUES (?, ?)').run(seq, on);
      return seq;
    });
  }

  /** As SeedSqlTransport.claim; nothing while the queue is paused. */
  claim(workerId: string, visibility: number, minPriority: number, now: number, claimedAt = now): number | null {
    if (this.queuePaused) return null;
    return this.db.transaction(() => {
      const row = this.claimStmt.get<{ seq: number; group_id: string }>(now, now, minPriority);
      if (!row) return null;
      this.db.prepare('UPDATE groups SET last_claimed_at = ? WHERE group_id = ?').run(claimedAt, row.group_id);
      this.db.prepare('UPDATE messages SET locked_by = ?, lock_expiry = ? WHERE seq = ?').run(workerId, now + visibility, row.seq);
      return row.seq;
    });
  }

  ack(seq: number, groupId: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM messages WHERE seq = ?').run(seq);
      this.dropIfEmpty(groupId);
    });
  }

  nack(seq: number, delay: number, now: number): void {
    if (delay > 0) this.db.prepare("UPDATE messages SET locked_by = '__parked__', lock_expiry = ? WHERE seq = ?").run(now + delay, seq);
    else this.db.prepare('UPDATE messages SET locked_by = NULL, lock_expiry = NULL WHERE seq = ?').run(seq);
  }

  /** Dead-letters a leased message; with 'hold' its group delivers nothing until redrive or discard. */
  reject(seq: number, groupId: string): void {
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO dead (seq, group_id, event, priority) SELECT m.seq, m.group_id, m.event, g.priority FROM messages m JOIN groups g ON g.group_id = m.group_id WHERE m.seq = ?')
        .run(seq);
      this.db.prepare('DELETE FROM messages WHERE seq = ?').run(seq);
      if (this.policy === 'hold') this.db.prepare('INSERT INTO held_groups (group_id, seq) VALUES (?, ?)').run(groupId, seq);
      else this.dropIfEmpty(groupId);
    });
  }

  /** The seq it returns to the queue under, or null when `seq` is no dead letter. */
  redrive(seq: number): number | null {
    return this.db.transaction(() => {
      const letter = this.db.prepare('SELECT group_id, event, priority FROM dead WHERE seq = ?').get<{ group_id: string; event: string; priority: number }>(seq);
      if (!letter) return null;
      this.db.prepare('DELETE FROM dead WHERE seq = ?').run(seq);
      if (this.db.prepare('DELETE FROM held_groups WHERE group_id = ? AND seq = ?').run(letter.group_id, seq) > 0) {
        // Back at its group's head under its own seq; the group keeps its place.
        this.db.prepare('INSERT INTO messages (seq, group_id, event) VALUES (?, ?, ?)').run(seq, letter.group_id, letter.event);
        return seq;
      }
      const { seq: again } = this.db.prepare('INSERT INTO messages (group_id, event) VALUES (?, ?) RETURNING seq').get<{ seq: number }>(letter.group_id, letter.event)!;
      this.db.prepare('INSERT OR IGNORE INTO groups (group_id, priority) VALUES (?, ?)').run(letter.group_id, letter.priority);
      this.db.prepare('UPDATE waits SET on_seq = ? WHERE on_seq = ?').run(again, seq);
      return again;
    });
  }

  /** Whether `seq` was a dead letter. */
  discard(seq: number): boolean {
    return this.db.transaction(() => {
      const letter = this.db.prepare('SELECT group_id FROM dead WHERE seq = ?').get<{ group_id: string }>(seq);
      if (!letter) return false;
      this.db.prepare('DELETE FROM dead WHERE seq = ?').run(seq);
      if (this.db.prepare('DELETE FROM held_groups WHERE group_id = ? AND seq = ?').run(letter.group_id, seq) > 0) this.dropIfEmpty(letter.group_id);
      return true;
    });
  }

  pause(groupId?: string): void {
    if (groupId === undefined) this.queuePaused = true;
    else this.db.prepare('INSERT OR IGNORE INTO paused_groups (group_id) VALUES (?)').run(groupId);
  }

  resume(groupId?: string): void {
    if (groupId === undefined) this.queuePaused = false;
    else this.db.prepare('DELETE FROM paused_groups WHERE group_id = ?').run(groupId);
  }

  /** The seqs of messages still queued, and of dead letters: what `after` may name. */
  issued(): number[] {
    return this.db.prepare('SELECT seq FROM messages UNION SELECT seq FROM dead').all<{ seq: number }>().map((r) => r.seq);
  }

  private dropIfEmpty(groupId: string): void {
    this.db.prepare('DELETE FROM groups WHERE group_id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE group_id = ?) AND NOT EXISTS (SELECT 1 FROM held_groups WHERE group_id = ?)').run(groupId, groupId, groupId);
  }
}
