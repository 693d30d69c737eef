/**
 * A schedule under contention and SIGKILL: four worker processes fire one schedule (every
 * 100 ms, catch-up 'all') on a better-sqlite3 file for 2.5 s each, on the real clock; one of
 * them dies — by its own SIGKILL inside a firing, after publishing a slot and before the commit
 * that records it, or by the test's SIGKILL at a random moment. Every slot from the first to
 * the last is then published exactly once (one seq per slot id across every publish and every
 * claim the workers reported: the queue's history of slot messages) and applied once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../src/runtime/runtime.js';
import { Schedules } from '../src/schedule/schedules.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { runChild } from './support/child.js';
import { drain } from './support/runtime-workflows.js';
import { seeded } from './support/torture.js';

const child = new URL('./support/schedule-crash-child.ts', import.meta.url).pathname;
const EVERY_MS = 100;
/** How long each worker runs, from its own start (tsx takes 0.5–2 s to start one). */
const RUN_MS = 2_500;

/** Seqs seen per slot event id, from every worker's reports. */
type History = Map<string, Set<number>>;

function note(history: History, seq: string, id: string): void {
  if (!history.has(id)) history.set(id, new Set());
  history.get(id)!.add(Number(seq));
}

describe('a schedule under 4 processes and a SIGKILL (better-sqlite3 file)', () => {
  it.each(['inside a firing, after its publish and before its commit', 'at a random moment'])(
    'publishes every slot exactly once when one worker dies %s',
    async (how) => {
      const scratch = scratchDir();
      const file = join(scratch.dir, 'schedule.db');
      try {
        const setup = await openBetterSqliteDatabase(file);
        const store = new SqliteStore(setup);
        const transport = new SqliteTransport(setup);
        const schedules = new Schedules({ store, transport });
        const begin = Date.now() + 1_500; // after the workers have started (tsx)
        await schedules.schedule('tick', { everyMs: EVERY_MS, startAt: begin, catchUp: 'all' }, { group: 'ticks', event: { type: 'tick' } });
        await new Runtime({ store, transport, workerId: 'setup', handler: () => {} }).createExecution('ticks', { seen: [] });
        setup.close();

        const history: History = new Map();
        const random = seeded(how.length);
        const inside = how.startsWith('inside');
        const start = (i: number) =>
          runChild(child, [file, `for=${RUN_MS}`, ...(inside && i === 0 ? ['die=1'] : [])], (line) => {
            const [kind, seq, id] = line.split(' ');
            // At a random moment of the first 0.8 s of slots (and before the worker's own end).
            if (!inside && i === 0 && kind === 'READY') setTimeout(() => workers[0]!.proc.kill('SIGKILL'), Math.min(RUN_MS - 400, Math.max(0, begin - Date.now()) + random() * 800));
            if (kind === 'PUB' || kind === 'CLAIM') note(history, seq!, id!);
            // Inside a firing: the others start as the first worker publishes its first slot (and dies).
            if (inside && i === 0 && kind === 'PUB' && workers.length === 1) workers.push(...[1, 2, 3].map(start));
          });
        const workers = inside ? [start(0)] : [0, 1, 2, 3].map(start);
        await workers[0]!.ended;
        const ended = await Promise.all(workers.map((w) => w.ended));
        expect(workers).toHaveLength(4);
        expect([ended[0]!.signal, ended[0]!.stderr]).toEqual(['SIGKILL', '']);
        for (const end of ended.slice(1)) expect([end.code, end.stderr]).toEqual([0, '']);

        // One more worker, its clock past any lease the dead one may still hold, finishes what is
        // due and queued; then the schedule stops and it finishes again.
        const clock = () => Date.now() + 1_100;
        const db = await openBetterSqliteDatabase(file);
        const finalStore = new SqliteStore(db);
        const sqlite = new SqliteTransport(db, { clock });
        const final = new Schedules({ store: finalStore, transport: sqlite, clock });
        const runtime = new Runtime({ store: finalStore, transport: sqlite, workerId: 'final', clock, handler: final.handler((exe, event) => void (exe.seen as unknown[]).push(event.slot)) });
        const results = await drain([runtime]);
        const stopped = await final.pause('tick');
        results.push(...(await drain([runtime])));
        for (const r of results) if (r.kind === 'handled' && r.executionId === 'ticks') note(history, String(r.seq), r.eventId);

        const slots = Array.from({ length: stopped.fired }, (_, k) => begin + k * EVERY_MS);
        expect(stopped.fired).toBeGreaterThan(RUN_MS / EVERY_MS / 2);
        expect(stopped.last).toBe(slots.at(-1));
        const ids = slots.map((slot) => `schedule:tick:${slot}`);
        // One message per slot, and no message for anything else.
        expect([...history.keys()].sort()).toEqual([...ids].sort());
        for (const id of ids) expect([id, history.get(id)!.size]).toEqual([id, 1]);
        expect((await finalStore.load('ticks'))!.seen).toEqual(slots);
        expect((await sqlite.inspect()).groups).toEqual([]);
        expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
        db.close();
      } finally {
        scratch.remove();
      }
    },
    60_000,
  );
});
