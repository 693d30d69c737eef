/**
 * kill -9 of a consuming process loses nothing: a child runs consume() (4 at once) on a
 * better-sqlite3 file and is killed with SIGKILL at random moments, many times over, while this
 * process keeps publishing. Every call the child reports goes into one history; after each kill
 * (and once every report has been read) the file must pass `PRAGMA integrity_check` and the
 * history checker must find nothing lost, duplicated, out of order or overlapping. A last child
 * then drains the queue: every message published was acked exactly once. SOAK=1 kills more.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { runChild } from './support/child.js';
import { checkHistory, type HistoryEntry } from './support/history.js';
import { seeded } from './support/torture.js';

const KILLS = process.env.SOAK === '1' ? 300 : 20;
/**
 * Each kill waits at most ~3.3 s for its child (a child slow to start under load is killed before
 * it did anything: no harm), the last one drains what is left: generous, so a loaded machine
 * (child start-up through tsx takes seconds there) does not run out of time.
 */
const TIMEOUT = 120_000 + KILLS * 6_000;
/** Short, so the leases of a killed child run out before the next one looks. */
const VISIBILITY_MS = 300;
const child = new URL('./support/consume-crash-child.ts', import.meta.url).pathname;

/** Reads the child's reports into `history`; `intents` holds acks sent but not yet answered. */
function reader(history: HistoryEntry[], intents: Map<string, { seq: number; attempt: number; t: number }>, worker: string) {
  return (line: string): boolean => {
    if (!line.endsWith(' $')) return false;
    const [kind, ...f] = line.slice(0, -2).split(' ');
    if (kind === 'L') {
      history.push({ op: 'claim', seq: Number(f[0]), groupId: f[1]!, attempt: Number(f[2]), worker, t: Number(f[3]), expiresAt: Number(f[4]) });
    } else if (kind === 'a') {
      intents.set(`${f[0]}#${f[1]}`, { seq: Number(f[0]), attempt: Number(f[1]), t: Number(f[2]) });
    } else if (kind === 'A') {
      const intent = intents.get(`${f[0]}#${f[1]}`)!;
      intents.delete(`${f[0]}#${f[1]}`);
      // An ack is recorded at the moment it was sent: it landed no earlier.
      history.push({ op: 'ack', seq: intent.seq, attempt: intent.attempt, worker, t: intent.t, ok: f[2] === 'ok' });
    } else if (kind === 'E' && f[3] !== 'lost') {
      history.push({ op: 'extend', seq: Number(f[0]), attempt: Number(f[1]), worker, t: Number(f[2]), ok: true, expiresAt: Number(f[3]) });
    } else {
      return false;
    }
    return true;
  };
}

describe('kill -9 of a consuming process (better-sqlite3 file)', () => {
  it(`loses nothing across ${KILLS} kills, and a last consumer acks every message exactly once`, async () => {
    const scratch = scratchDir();
    const file = join(scratch.dir, 'consume-crash.db');
    const random = seeded(1313);
    const history: HistoryEntry[] = [];
    const db = await openBetterSqliteDatabase(file);
    const transport = new SqliteTransport(db);
    const queued = async () => new Set((await transport.inspect()).groups.flatMap((g) => g.messages.map((m) => m.seq)));
    const publish = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const groupId = `g${Math.floor(random() * 8)}`;
        const t = Date.now();
        history.push({ op: 'publish', seq: await transport.publish(groupId, { i }), groupId, t });
      }
    };
    /** Runs one child; `stopWhen` says (after each report) when to kill it. */
    const runOnce = async (run: number, stopWhen: (reports: number) => boolean | Promise<boolean>, extraMs: number, deadlineMs = 3_000) => {
      const intents = new Map<string, { seq: number; attempt: number; t: number }>();
      const read = reader(history, intents, `child-${run}`);
      let reports = 0;
      let killing = false;
      const kill = (afterMs: number) => {
        if (killing) return;
        killing = true;
        setTimeout(() => proc.kill('SIGKILL'), afterMs);
      };
      const { proc, ended } = runChild(child, [file, String(VISIBILITY_MS)], (line) => {
        if (!read(line) || killing) return;
        void Promise.resolve(stopWhen(++reports)).then((stop) => stop && kill(extraMs));
      });
      // A child that ran out of work before its kill point reports nothing more: kill it anyway.
      const deadline = setTimeout(() => kill(0), deadlineMs + VISIBILITY_MS);
      const { signal, code, stderr } = await ended.finally(() => clearTimeout(deadline));
      if (signal !== 'SIGKILL') throw new Error(`child exited with ${code}: ${stderr}`);
      // An ack sent but unanswered when the child died landed exactly when its message is gone.
      const left = await queued();
      for (const intent of intents.values()) if (!left.has(intent.seq)) history.push({ op: 'ack', ...intent, worker: `child-${run}`, ok: true });
      expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      const verdict = checkHistory(history, left);
      expect(verdict).toEqual({ lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] });
      return left;
    };
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        await publish(5 + Math.floor(random() * 20));
        const target = 1 + Math.floor(random() * 30);
        await runOnce(kill, (reports) => reports >= target, Math.floor(random() * 5));
      }
      let empty = false;
      const left = await runOnce(KILLS, async () => (empty = (await queued()).size === 0), 20, TIMEOUT / 2);
      expect(empty).toBe(true);
      expect(left.size).toBe(0);
      const acks = new Map<number, number>();
      for (const e of history) if (e.op === 'ack' && e.ok) acks.set(e.seq, (acks.get(e.seq) ?? 0) + 1);
      const published = history.filter((e) => e.op === 'publish');
      expect(published.length).toBeGreaterThan(KILLS * 5);
      for (const e of published) expect(acks.get(e.seq)).toBe(1);
    } finally {
      db.close();
      scratch.remove();
    }
  }, TIMEOUT);
});
