/**
 * ackAndClaimMany on PostgreSQL (a server through pg, and PGlite): one call of the SQL function
 * lh_ack_claim_many. Checked here beyond the conformance suite: against InMemoryTransport over
 * a long seeded run (stale leases, expiries, dead letters, priorities, groups acked and claimed
 * again in one call); one statement per call, notices only when something was acked; every bad
 * argument refused before anything changes (a bad lease behind good ones acks none of them); a
 * throwing clock changes nothing (a released schema's lease acked after the upgrade is in
 * postgres-schema-source.test.ts); and, on the server's
 * clock, claims are dated by a reading taken after acks that waited for a row lock (dated
 * before, a batch contention run found leases that seemed to overlap their predecessors).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { PgDatabase } from '../src/postgres/driver.js';
import { fromPg } from '../src/postgres/pg.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import type { Lease, Transport } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { newServerPool, pgliteDatabase, releaseSchema, serverDatabase, takeSchema, until } from './support/postgres.js';
import { seeded } from './support/torture.js';
import { pgUrl } from './support/servers.js';

// This file needs the run's PostgreSQL server: started here, before any test (pools and sockets take its URL at once).
await pgUrl();

const databases: [string, () => Promise<PgDatabase>][] = [
  ['a PostgreSQL server (pg)', async () => serverDatabase()],
  ['PGlite', () => pgliteDatabase()],
];

type Ev = { n: number };
const brief = (l: Lease<Ev>) => [l.seq, l.groupId, l.event.n, l.workerId, l.attempt, l.expiresAt];

describe.each(databases)('PostgresTransport.ackAndClaimMany on %s', (_name, database) => {
  const used: [PgDatabase, string][] = [];
  const open = async (options: { clock?: () => number; maxAttempts?: number } = {}) => {
    const db = await database();
    const schema = await takeSchema(db);
    used.push([db, schema]);
    return { db, schema, transport: new PostgresTransport<Ev>(db, { ...options, schema }) };
  };
  afterAll(async () => {
    for (const [db, schema] of used) await releaseSchema(db, schema);
  });

  it('returns what InMemoryTransport returns, call for call, over a seeded run', async () => {
    const clock = new ManualClock(1_000_000);
    const { transport: pg } = await open({ clock: clock.now, maxAttempts: 3 });
    const memory = new InMemoryTransport<Ev>({ clock: clock.now, maxAttempts: 3 });
    const random = seeded(41);
    const both = async <R>(call: (t: Transport<Ev>) => Promise<R>): Promise<R> => {
      const [a, b] = [await call(memory), await call(pg)];
      // Each database has its own origin (and so delivery ids); everything else must match.
      const sameOrigin = (value: unknown) => JSON.parse(JSON.stringify(value ?? null, (key, v: unknown) => (key === 'origin' || key === 'deliveryId' ? undefined : v))) as unknown;
      expect(sameOrigin(b)).toEqual(sameOrigin(a));
      return a;
    };
    // Leases each worker holds, and leases it once held (acking those again must report them lost).
    const held = new Map<string, Lease<Ev>[]>([['w1', []], ['w2', []], ['w3', []]]);
    const stale: Lease<Ev>[] = [];
    let acked = 0;
    let reclaimed = 0;
    let n = 0;
    for (let step = 0; step < 300; step++) {
      if (random() < 0.3) {
        const items = Array.from({ length: 1 + Math.floor(random() * 6) }, () => ({
          groupId: `g${Math.floor(random() * 7)}`, event: { n: n++ }, options: { priority: random() < 0.2 ? 1 : 0 },
        }));
        await both((t) => t.publishMany(items));
      }
      const worker = `w${1 + Math.floor(random() * 3)}`;
      const mine = held.get(worker)!;
      // Ack a random part of what this worker holds (in a shuffled order), with now and then a stale lease among them.
      const acking = mine.filter(() => random() < 0.7).sort(() => random() - 0.5);
      if (stale.length > 0 && random() < 0.3) acking.splice(Math.floor(random() * (acking.length + 1)), 0, stale[Math.floor(random() * stale.length)]!);
      const options = { max: 1 + Math.floor(random() * 5), ...(random() < 0.2 ? { minPriority: 1 } : {}) };
      const visibilityMs = 100 + Math.floor(random() * 400);
      const result = await both((t) => t.ackAndClaimMany(acking, worker, visibilityMs, options));
      expect(result.acked.concat(result.lost).length).toBe(acking.length);
      acked += result.acked.length;
      const ackedGroups = new Set(result.acked.map((l) => l.groupId));
      reclaimed += result.claimed.filter((l) => ackedGroups.has(l.groupId)).length;
      stale.push(...acking);
      held.set(worker, mine.filter((l) => !acking.includes(l)).concat(result.claimed));
      // Time passes: now and then past the shorter leases, which others then take over (or dead-letter).
      clock.advance(random() < 0.15 ? 300 : Math.floor(random() * 40));
      if (step % 50 === 49) {
        await both(async (t) => (await t.stats()));
        await both(async (t) => (await t.deadLetters()).map((d) => [d.seq, d.groupId, d.attempt, d.deadAt]));
      }
    }
    // The run did what it is meant to exercise.
    expect(acked).toBeGreaterThan(100);
    expect(reclaimed).toBeGreaterThan(0);
    expect((await pg.deadLetters()).length).toBeGreaterThan(0);
    await pg.close();
  });

  it('is one statement; acks and claims by one clock reading; leases may be [] (then it is claimMany)', async () => {
    const { db, transport } = await open();
    await transport.publishMany(['a', 'a', 'b', 'c'].map((groupId, n) => ({ groupId, event: { n } })));
    await transport.stats(); // opens the queue
    const statements: string[] = [];
    const counted = new PostgresTransport<Ev>({ ...db, query: (text, params) => (statements.push(text), db.query(text, params)) }, { schema: used.at(-1)![1] });
    await counted.stats();
    statements.length = 0;
    const first = await counted.ackAndClaimMany([], 'w', 60_000, { max: 2 });
    expect(first).toMatchObject({ acked: [], lost: [] });
    expect(first.claimed.map((l) => [l.groupId, l.event.n])).toEqual([['a', 0], ['b', 2]]);
    const next = await counted.ackAndClaimMany(first.claimed, 'w', 60_000, { max: 10 });
    expect(next.acked).toEqual(first.claimed);
    expect(next.acked[0]).toBe(first.claimed[0]); // the caller's own objects
    // The group acked in this call is claimed again at once, for its next message.
    expect(next.claimed.map((l) => [l.groupId, l.event.n])).toEqual([['c', 3], ['a', 1]]);
    expect(new Set(next.claimed.map((l) => l.expiresAt)).size).toBe(1);
    expect(statements).toHaveLength(2);
    expect(statements.every((s) => s.includes('lh_ack_claim_many'))).toBe(true);
    // Nothing left to claim, a lease already acked: lost, and an empty claim.
    const last = await counted.ackAndClaimMany([first.claimed[0]!, ...next.claimed], 'w', 60_000, { max: 3 });
    expect(last).toEqual({ acked: next.claimed, lost: [first.claimed[0]], claimed: [] });
    expect(await transport.stats()).toMatchObject({ queued: 0, groups: 0 });
    await counted.close();
    await transport.close();
  });

  it('sends a change notice when it acked something, and only then', async () => {
    const { db, schema } = await open();
    const sent: string[] = [];
    // On a server the driver sends an ack's notice after the commit (db.notify); PGlite NOTIFYs in
    // the function: count those through a listener of the channel the transport uses.
    const transport = new PostgresTransport<Ev>(db.notify ? { ...db, notify: (channel) => (sent.push(channel), db.notify!(channel)) } : db, { schema });
    await transport.publishMany([{ groupId: 'a', event: { n: 0 } }, { groupId: 'b', event: { n: 1 } }]);
    let heard = 0;
    const stop = transport.onChange(() => heard++);
    const { claimed } = await transport.ackAndClaimMany([], 'w', 60_000, { max: 1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = { heard, sent: sent.length };
    await transport.ackAndClaimMany([{ ...claimed[0]!, attempt: 9 }], 'w', 60_000, { max: 1 }); // lost; claims b
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ heard, sent: sent.length }).toEqual(before);
    await transport.ackAndClaimMany(claimed, 'w', 60_000, { max: 1 });
    await until(() => heard > before.heard);
    expect(heard).toBeGreaterThan(before.heard);
    if (db.notify) expect(sent).toHaveLength(before.sent + 1);
    stop();
    await transport.close();
  });

  it('refuses every bad argument before anything changes', async () => {
    const clock = new ManualClock(5_000);
    const { transport } = await open({ clock: clock.now });
    await transport.publishMany(['a', 'b', 'c'].map((groupId, n) => ({ groupId, event: { n } })));
    const leases = await transport.claimMany('w', 1_000, { max: 2 });
    const before = await transport.inspect();
    const bad: [string, () => Promise<unknown>, typeof TypeError | typeof RangeError][] = [
      ['leases not an array', () => transport.ackAndClaimMany(leases[0] as never, 'w', 1_000, { max: 1 }), TypeError],
      ['a bad lease behind good ones', () => transport.ackAndClaimMany([...leases, { ...leases[0]!, seq: 0 }], 'w', 1_000, { max: 1 }), RangeError],
      ['a lease without a group', () => transport.ackAndClaimMany([leases[0]!, { ...leases[1]!, groupId: undefined } as never], 'w', 1_000, { max: 1 }), TypeError],
      ['worker id empty', () => transport.ackAndClaimMany(leases, '', 1_000, { max: 1 }), RangeError],
      ['worker id a number', () => transport.ackAndClaimMany(leases, 7 as never, 1_000, { max: 1 }), TypeError],
      ['visibility negative', () => transport.ackAndClaimMany(leases, 'w', -1, { max: 1 }), RangeError],
      ['visibility NaN', () => transport.ackAndClaimMany(leases, 'w', NaN, { max: 1 }), RangeError],
      ['options missing', () => transport.ackAndClaimMany(leases, 'w', 1_000, undefined as never), TypeError],
      ['max 0', () => transport.ackAndClaimMany(leases, 'w', 1_000, { max: 0 }), RangeError],
      ['max over the batch limit', () => transport.ackAndClaimMany(leases, 'w', 1_000, { max: 1_001 }), RangeError],
      ['max a string', () => transport.ackAndClaimMany(leases, 'w', 1_000, { max: '2' as never }), TypeError],
      ['minPriority -1', () => transport.ackAndClaimMany(leases, 'w', 1_000, { max: 1, minPriority: -1 }), RangeError],
    ];
    for (const [label, call, error] of bad) {
      await expect(call(), label).rejects.toBeInstanceOf(error);
      expect(await transport.inspect(), label).toEqual(before);
    }
    // And the same call with good arguments does change it.
    expect(await transport.ackAndClaimMany(leases, 'w', 1_000, { max: 1 })).toMatchObject({ acked: leases, lost: [] });
    expect(await transport.inspect()).not.toEqual(before);
    await transport.close();
  });

  it('a clock that throws changes nothing', async () => {
    let broken = false;
    const clock = new ManualClock(5_000);
    const { transport } = await open({
      clock: () => {
        if (broken) throw new Error('the clock broke');
        return clock.now();
      },
    });
    await transport.publishMany(['a', 'a', 'b'].map((groupId, n) => ({ groupId, event: { n } })));
    const leases = await transport.claimMany('w', 1_000, { max: 2 });
    const before = await transport.inspect();
    broken = true;
    await expect(transport.ackAndClaimMany(leases, 'w', 1_000, { max: 2 })).rejects.toThrow('the clock broke');
    broken = false;
    expect(await transport.inspect()).toEqual(before);
    await transport.close();
  });

  it('a claim that fails after the acks undoes them: the call changes nothing and sends no notice', async () => {
    const { db, schema, transport } = await open();
    await transport.publishMany(['a', 'b', 'c'].map((groupId, n) => ({ groupId, event: { n } })));
    const leases = await transport.claimMany('w', 60_000, { max: 2 });
    // The claims' UPDATE of a group row fails, after lh_ack_many ran in the same statement.
    await db.query(
      `CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
        `IF NEW.holder LIKE '%refused%' THEN RAISE EXCEPTION 'claim refused'; END IF; RETURN NEW; END $$`,
    );
    await db.query(`CREATE TRIGGER refuse BEFORE UPDATE ON "${schema}".lh_groups FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse()`);
    const before = await transport.inspect();
    let notices = 0;
    transport.onChange(() => notices++);
    await expect(transport.ackAndClaimMany(leases, 'refused', 1_000, { max: 3 })).rejects.toThrow(/claim refused/);
    expect(await transport.inspect()).toEqual({ ...before, now: expect.any(Number) });
    expect(notices).toBe(0);
    await db.query(`DROP TRIGGER refuse ON "${schema}".lh_groups`);
    const result = await transport.ackAndClaimMany(leases, 'w2', 1_000, { max: 3 });
    expect([result.acked, result.claimed.map((l) => l.groupId)]).toEqual([leases, ['c']]);
    await transport.close();
  });
});

describe('PostgresTransport.ackAndClaimMany on a PostgreSQL server, by its clock', () => {
  it('dates the claims by a clock reading taken after its acks, which may have waited for a row lock', async () => {
    const pool = newServerPool(3);
    const schema = `lh_acm_clock_${process.pid}`;
    const transport = new PostgresTransport<Ev>(fromPg(pool), { schema });
    const other = await pool.connect();
    try {
      await transport.publishMany(['a', 'a', 'b'].map((groupId, n) => ({ groupId, event: { n } })));
      const [lease] = await transport.claimMany('w', 60_000, { max: 1 });
      const serverNow = async () => Number((await other.query('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) AS t')).rows[0].t);
      // Another transaction holds the acked group's row: the ack waits for it.
      await other.query('BEGIN');
      await other.query(`SELECT 1 FROM "${schema}".lh_groups WHERE group_id = 'a' FOR UPDATE`);
      const call = transport.ackAndClaimMany([lease!], 'w', 10_000, { max: 2 });
      // (pg_stat_activity's query text lags behind prepared statements: ask who waits for this transaction.)
      const waiting = async () => Number((await other.query('SELECT count(*) AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))')).rows[0].n) > 0;
      await until(waiting);
      expect(await waiting()).toBe(true);
      // The call began by now; let the server's clock move past that before the lock is let go.
      const blocked = await serverNow();
      let released = blocked;
      while (released <= blocked) released = await serverNow();
      await other.query('COMMIT');
      const { acked, claimed } = await call;
      expect(acked).toEqual([lease]);
      expect(claimed.map((l) => [l.groupId, l.event.n])).toEqual([['b', 2], ['a', 1]]);
      for (const l of claimed) expect(l.expiresAt - 10_000).toBeGreaterThanOrEqual(released);
    } finally {
      other.release(true);
      await transport.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});
