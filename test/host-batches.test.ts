/**
 * Group commit and fair service in the owner's dispatcher, in Node on a real sqlite-wasm
 * database: calls queued together share one transaction, each under its own savepoint, are
 * answered only after the COMMIT, and callers are served in turn.
 */
import { describe, expect, it } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { ClosedError, LeaseLostError } from '../src/errors.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { CallMessage } from '../src/browser/protocol.js';
import { leaseFences } from '../src/remote/wire.js';
import type { AckAndClaimManyResult, Lease } from '../src/transport/contract.js';

let ids = 0;
const call = (target: CallMessage['target'], method: string, args: unknown[], id = `b${++ids}`): CallMessage => ({ kind: 'call', id, target, method, args, now: 1_000 });
const publish = (groupId: string, event: unknown, id?: string) => call('transport', 'publish', [groupId, event, undefined], id);

/** The real database, with its transactions and savepoints counted. */
async function counted(): Promise<{ db: SqlDatabase; commits: () => number; savepoints: () => number }> {
  const db = await openWasmDatabase();
  let n = 0;
  let s = 0;
  // Everything else is the real database's own (its methods close over it, not over `this`).
  const counting: SqlDatabase = Object.assign(Object.create(db) as SqlDatabase, {
    transaction: <T>(body: () => T): T => db.transaction(() => (n++, body())),
    savepoint: <T>(body: () => T): T => db.savepoint!(() => (s++, body())),
  });
  return { db: counting, commits: () => n, savepoints: () => s };
}

describe('group commit in the owner', () => {
  it('applies calls that queue up together in one transaction, and answers each', async () => {
    const { db, commits } = await counted();
    const core = new HostCore(db);
    const before = commits();
    const seqs = await Promise.all(Array.from({ length: 20 }, (_, i) => core.serve(publish(`g${i % 3}`, { i }), i % 2 === 0, `tab${i % 4}`)));
    expect(commits() - before).toBe(1);
    expect(new Set(seqs).size).toBe(20);
    const snapshot = (await core.serve(call('transport', 'inspect', []))) as { groups: { messages: unknown[] }[] };
    expect(snapshot.groups.flatMap((g) => g.messages)).toHaveLength(20);
  });

  it('runs a call that comes alone in its own transaction, with no savepoint, still atomic and journaled', async () => {
    const { db, commits, savepoints } = await counted();
    const core = new HostCore(db);
    const before = commits();
    const seq = await core.serve(publish('g', 'alone', 'alone-id'), true, 'tabA');
    expect([commits() - before, savepoints()]).toEqual([1, 0]);
    // Its journal row was written in that transaction: the retry is answered, not applied.
    expect(await core.serve(publish('g', 'alone', 'alone-id'), true, 'tabA')).toBe(seq);
    // A lone call that fails halfway leaves nothing behind.
    db.exec("CREATE TEMP TRIGGER refuse BEFORE INSERT ON lh_outbox WHEN NEW.target_id = 'refused' BEGIN SELECT RAISE(ABORT, 'outbox refused'); END");
    await expect(core.serve(call('store', 'commit', [{ id: 'exe', version: 0 }, { emits: [{ targetId: 'refused', event: 1 }] }]))).rejects.toThrow(/outbox refused/);
    expect(await core.serve(call('store', 'load', ['exe']))).toBeUndefined();
    expect(savepoints()).toBe(0);
    const snapshot = (await core.serve(call('transport', 'inspect', []))) as { groups: { messages: unknown[] }[] };
    expect(snapshot.groups[0]!.messages).toHaveLength(1);
  });

  it('rolls a failing call back alone: it gets its own error, the others commit', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    // A commit that writes the execution, then fails writing its outbox entry.
    db.exec("CREATE TEMP TRIGGER refuse BEFORE INSERT ON lh_outbox WHEN NEW.target_id = 'refused' BEGIN SELECT RAISE(ABORT, 'outbox refused'); END");
    const exe = { id: 'exe', version: 0 };
    const outcomes = await Promise.allSettled([
      core.serve(publish('g', 1)),
      core.serve(call('store', 'commit', [exe, { emits: [{ targetId: 'refused', event: 1 }] }])),
      core.serve(call('transport', 'ack', [{ seq: 99, groupId: 'g', attempt: 1, workerId: 'w', event: null, expiresAt: 0 }])),
      core.serve(publish('g', 2)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/outbox refused/);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(await core.serve(call('store', 'load', ['exe']))).toBeUndefined();
    const snapshot = (await core.serve(call('transport', 'inspect', []))) as { groups: { messages: { event: unknown }[] }[] };
    expect(snapshot.groups[0]!.messages.map((m) => m.event)).toEqual([1, 2]);
  });

  it('undoes an ackAndClaimMany whose claims fail after its acks, in a batch or alone: its leases still hold, and no answer is journaled', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    for (const g of ['a', 'b', 'c']) await core.serve(publish(g, g));
    const leases = (await core.serve(call('transport', 'claimMany', ['w', 5_000, { max: 2 }]))) as Lease[];
    const fences = leaseFences(leases);
    // The claims' UPDATE of a group row fails, after the acks' DELETEs ran in the same call.
    db.exec("CREATE TEMP TRIGGER refuse BEFORE UPDATE OF holder ON lh_groups WHEN NEW.holder = 'refused' BEGIN SELECT RAISE(ABORT, 'claim refused'); END");
    const acm = (id: string) => call('transport', 'ackAndClaimMany', [fences, 'refused', 1_000, { max: 3 }], id);
    const outcomes = await Promise.allSettled([core.serve(publish('d', 'd')), core.serve(acm('acm-1'), true, 'tabB'), core.serve(publish('e', 'e'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/claim refused/);
    await expect(core.serve(acm('acm-2'), true, 'tabB')).rejects.toThrow(/claim refused/);
    const held = (await core.serve(call('transport', 'inspect', []))) as { groups: { groupId: string; messages: { state: string }[] }[] };
    expect(held.groups.map((g) => [g.groupId, g.messages[0]!.state]).sort()).toEqual([
      ['a', 'leased'],
      ['b', 'leased'],
      ['c', 'ready'],
      ['d', 'ready'],
      ['e', 'ready'],
    ]);
    expect(db.prepare("SELECT count(*) AS n FROM lh_calls WHERE id LIKE 'acm-%'").get()).toEqual({ n: 0 });
    // The retry of the same call, once claims can land, is applied (not answered as done) ...
    db.exec('DROP TRIGGER refuse');
    const done = (await core.serve(acm('acm-1'), true, 'tabB')) as AckAndClaimManyResult;
    expect([done.acked.length, done.lost.length, done.claimed.map((l) => l.groupId)]).toEqual([2, 0, ['c', 'd', 'e']]);
    // ... and a retry after that is answered from the journal, claiming nothing more.
    expect(await core.serve(acm('acm-1'), true, 'tabB')).toEqual(done);
    expect(((await core.serve(call('transport', 'stats', []))) as { leased: number }).leased).toBe(3);
  });

  it('answers no call of a batch whose COMMIT fails as applied, and keeps none of it', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    // A deferred foreign key is checked at COMMIT: publishing an 'orphan' makes the COMMIT fail.
    db.exec(
      'PRAGMA foreign_keys = ON; CREATE TABLE parent (id TEXT PRIMARY KEY); ' +
        'CREATE TABLE child (p TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED); ' +
        "CREATE TEMP TRIGGER orphan AFTER INSERT ON lh_messages WHEN NEW.event = '\"orphan\"' BEGIN INSERT INTO child VALUES ('none'); END",
    );
    const outcomes = await Promise.allSettled([core.serve(publish('g', 'fine')), core.serve(publish('g', 'orphan')), core.serve(publish('h', 'also fine'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(((await core.serve(call('transport', 'inspect', []))) as { groups: unknown[] }).groups).toEqual([]);
    // The next batch commits as usual.
    expect(await core.serve(publish('g', 'later'))).toBeTypeOf('number');
  });

  it('journals forwarded calls inside the batch: a retry in the same batch is answered, not applied twice', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    const original = publish('g', 'once', 'retried-id');
    const [first, retry] = await Promise.all([core.serve(original, true, 'tabA'), core.serve({ ...original }, true, 'tabA')]);
    expect(retry).toBe(first);
    const snapshot = (await core.serve(call('transport', 'inspect', []))) as { groups: { messages: unknown[] }[] };
    expect(snapshot.groups[0]!.messages).toHaveLength(1);
    expect(db.prepare('SELECT count(*) AS n FROM lh_calls').get()).toEqual({ n: 1 });
  });

  it('serves callers in turn: a caller with hundreds queued does not hold back another caller', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    const busy = Array.from({ length: 300 }, (_, i) => core.serve(publish('busy', i), true, 'busy-tab'));
    const own = core.serve(publish('own', 'mine'), false, 'owner-page');
    const ownSeq = (await own) as number;
    // One call from each caller in turn: the owner's page went second, not 301st.
    expect(ownSeq).toBe(2);
    const busySeqs = (await Promise.all(busy)) as number[];
    // Within one caller, calls are applied in the order they came.
    expect(busySeqs).toEqual([...busySeqs].sort((a, b) => a - b));
  });

  it('rejects calls still queued when it closes, and closes', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    const queued = core.serve(publish('g', 1));
    await core.close();
    await expect(queued).rejects.toBeInstanceOf(ClosedError);
    await expect(core.serve(publish('g', 2))).rejects.toBeInstanceOf(ClosedError);
    expect(db.closed).toBe(true);
  });

  it('prunes journal entries older than ten minutes every thousand journaled calls, and a prune that fails fails no call', async () => {
    for (const failing of [false, true]) {
      const real = await openWasmDatabase();
      // The prune's DELETE throws in the second run, as a storage failure would.
      const db: SqlDatabase = Object.assign(Object.create(real) as SqlDatabase, {
        prepare: (sql: string) =>
          failing && sql.startsWith('DELETE FROM lh_calls')
            ? { run: () => { throw new Error('disk I/O error'); }, get: () => undefined, all: () => [] }
            : real.prepare(sql),
      });
      const core = new HostCore(db);
      real.prepare('INSERT INTO lh_calls (id, result, at) VALUES (?, ?, ?)').run('ancient', null, Date.now() - 11 * 60_000);
      // 1,000 journaled calls, from two tabs, in batches and alone.
      const seqs = await Promise.all(Array.from({ length: 1000 }, (_, i) => core.serve(publish(`g${i % 7}`, i), true, `tab${i % 2}`)));
      expect(seqs).toHaveLength(1000);
      const ids = (real.prepare('SELECT id FROM lh_calls').all() as { id: string }[]).map((row) => row.id);
      expect(ids.includes('ancient')).toBe(failing);
      expect(ids.length).toBe(failing ? 1001 : 1000);
      expect(await core.serve(publish('after', 'prune'), true)).toBeTypeOf('number');
      await core.close();
    }
  });

  it('still serves, one transaction per call, over a driver without savepoints', async () => {
    const real = await openWasmDatabase();
    const { savepoint: _unused, ...rest } = real;
    const plain: SqlDatabase = Object.defineProperty(rest, 'closed', { get: () => real.closed }) as SqlDatabase;
    const core = new HostCore(plain);
    const outcomes = await Promise.allSettled([core.serve(publish('g', 1)), core.serve(publish('', 2)), core.serve(publish('g', 3))]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(RangeError);
  });
});
