/**
 * Crash at every point: a child process writing to a better-sqlite3 file is killed with SIGKILL
 * at random moments, many times over. After every kill the file must pass
 * `PRAGMA integrity_check`, hold everything the child was told had succeeded, and nothing
 * half-written: the execution's version, its outbox and its trace agree with each other.
 * SOAK=1 kills it many more times.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { runChild } from './support/child.js';
import { seeded } from './support/torture.js';

const KILLS = process.env.SOAK === '1' ? 500 : 60;
/**
 * About 0.3 s a kill on an idle machine, 2 s at a load average of 15 (the child starts through
 * tsx); the soak needs far longer than the default test timeout.
 */
const TIMEOUT = KILLS * 4_000;
const child = new URL('./support/crash-child.ts', import.meta.url).pathname;

interface Told {
  published: Map<number, number>; // n → seq
  committed: number; // highest version reported
  acked: Set<number>;
  /** Claimed, then killed before the ack was reported: it may or may not have been acked. */
  maybeAcked: Set<number>;
}

/**
 * Runs the child until it has reported `lines` more calls (plus a random extra moment), then
 * kills it, and resolves once every report it wrote has been read (not merely on its exit).
 */
async function runAndKill(file: string, lines: number, extraMs: number, told: Told): Promise<void> {
  let seen = 0;
  let claimed: number | undefined;
  const { proc, ended } = runChild(child, [file], (line) => {
    const [kind, a, b] = line.split(' ');
    if (kind === 'P') told.published.set(Number(a), Number(b));
    if (kind === 'C') told.committed = Math.max(told.committed, Number(a));
    if (kind === 'L') claimed = Number(a);
    if (kind === 'A') {
      told.acked.add(Number(a));
      claimed = undefined;
    }
    if (kind !== 'READY' && ++seen === lines) setTimeout(() => proc.kill('SIGKILL'), extraMs);
  });
  const { code, signal, stderr } = await ended;
  if (claimed !== undefined) told.maybeAcked.add(claimed);
  if (signal !== 'SIGKILL') throw new Error(`child exited with ${code}: ${stderr}`);
}

describe('crash at every point (better-sqlite3 file, SIGKILL)', () => {
  it(`keeps every acknowledged call and nothing half-written across ${KILLS} kills`, async () => {
    const scratch = scratchDir();
    const file = join(scratch.dir, 'crash.db');
    const random = seeded(2026);
    const told: Told = { published: new Map(), committed: 0, acked: new Set(), maybeAcked: new Set() };
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        await runAndKill(file, 1 + Math.floor(random() * 60), Math.floor(random() * 4), told);
        const db = await openBetterSqliteDatabase(file);
        try {
          expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
          const transport = new SqliteTransport(db);
          const store = new SqliteStore(db);
          const exe = (await store.load('stream'))!;
          // The commit reported last is there; at most the one in flight when killed went further.
          expect(exe.version).toBeGreaterThanOrEqual(told.committed);
          expect(exe.version).toBeLessThanOrEqual(told.committed + 1);
          // Nothing half-written: one outbox entry and one trace step per committed version.
          const outbox = await store.pendingOutbox();
          expect(outbox.map((e) => (e.event as { n: number }).n)).toEqual(Array.from({ length: exe.version }, (_, i) => i + 1));
          const trace = await store.readTrace('stream');
          expect(trace.at(-1)).toMatchObject({ n: exe.n, index: exe.version - 1 });
          // Every message reported published is queued, unless it was acked (or its ack was in
          // flight when the child died).
          const queued = new Set((await transport.inspect()).groups.flatMap((g) => g.messages.map((m) => m.seq)));
          for (const [n, seq] of told.published) {
            if (!queued.has(seq) && !told.acked.has(seq) && !told.maybeAcked.has(seq)) throw new Error(`message ${n} (seq ${seq}) was lost`);
          }
          // And an acked message is gone for good.
          for (const seq of told.acked) expect(queued.has(seq)).toBe(false);
        } finally {
          db.close();
        }
      }
      expect(told.committed).toBeGreaterThan(KILLS);
    } finally {
      scratch.remove();
    }
  }, TIMEOUT);
});
