/**
 * Large batches against the reference model: claimMany must be exactly k successive claims,
 * ackMany exactly the acks in turn, and ackAndClaimMany the acks then the claims, at sizes the model-based test never reaches (up to 40 of
 * 60 groups, so ackMany spans more than one of SQLite's per-statement chunks), with stale and
 * repeated and forged leases, parks, delays, priority floors and dead-lettering on the way. SqliteTransport
 * answers batches with set-based statements when it can and falls back to the per-claim loop
 * when it cannot; both paths are driven here and must agree with the model step by step.
 * And, on the in-process backends, ackAndClaimMany's one clock reading, taken before its acks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AckAndClaimManyResult, Lease } from '../src/transport/contract.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import type { Transport, TransportOptions } from '../src/transport/contract.js';
import { scratchDir, transportBackends } from './support/backends.js';
import { type ModelLease, TransportModel } from './support/model.js';

/** The claims of a claimMany, or of an ackAndClaimMany after its acks. */
interface Claim {
  worker: number;
  max: number;
  visibility: number;
  minPriority: number;
}

type Step =
  | { kind: 'publish'; count: number; spread: number; priority: number; delay: number }
  | ({ kind: 'claimMany' } & Claim)
  | { kind: 'ackMany'; picks: number[]; repeat: boolean; forge: boolean; claim: Claim | null }
  | { kind: 'nack'; pick: number; delay: number }
  | { kind: 'advance'; ms: number };

const GROUPS = 60;

const claim = { worker: fc.nat(2), max: fc.integer({ min: 1, max: 40 }), visibility: fc.constantFrom(5, 10, 30), minPriority: fc.constantFrom(0, 0, 1, 2) };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('publish' as const), count: fc.integer({ min: 1, max: 40 }), spread: fc.integer({ min: 1, max: GROUPS }), priority: fc.nat(3), delay: fc.constantFrom(0, 0, 0, 5, 20) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claimMany' as const), ...claim }) },
  // `claim`: the acks and then these claims in one ackAndClaimMany.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ackMany' as const), picks: fc.array(fc.nat(200), { maxLength: 40 }), repeat: fc.boolean(), forge: fc.boolean(), claim: fc.option(fc.record(claim)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nack' as const), pick: fc.nat(200), delay: fc.constantFrom(0, 10) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(0, 5, 6, 10, 11, 31) }) },
);

const seed = Number(process.env.FC_SEED ?? 20261130);
const sqliteBackends = transportBackends.filter((b) => b.name.startsWith('SqliteTransport'));

/** The in-process backends, on a clock of the test's own (the others carry the caller's one reading per call). */
const clocked: [string, (options: TransportOptions) => Promise<{ t: Transport<string>; dispose: () => void }>][] = [
  ['InMemoryTransport', async (options) => ({ t: new InMemoryTransport<string>(options), dispose: () => {} })],
  [
    'SqliteTransport on sqlite-wasm',
    async (options) => {
      const db = await openWasmDatabase();
      return { t: new SqliteTransport<string>(db, options), dispose: () => db.close() };
    },
  ],
  [
    'SqliteTransport on better-sqlite3',
    async (options) => {
      const scratch = scratchDir();
      const db = await openBetterSqliteDatabase(`${scratch.dir}/q.db`);
      return { t: new SqliteTransport<string>(db, options), dispose: () => (db.close(), scratch.remove()) };
    },
  ],
];

describe.each(clocked)('ackAndClaimMany and the clock: %s', (_name, open) => {
  it('reads the clock once, before its acks: all its leases share that reading, and a clock that throws changes nothing', async () => {
    let reads = 0;
    let broken = false;
    // Each reading is 1 ms later than the last: a second reading would show in the leases.
    const { t, dispose } = await open({
      clock: () => {
        if (broken) throw new Error('the clock broke');
        return 1_000 + ++reads;
      },
    });
    try {
      await t.publishMany(['a1', 'b1', 'a2', 'c1'].map((event) => ({ groupId: event[0]!, event })));
      const leases = await t.claimMany('w', 100, { max: 2 });
      const before = (await t.inspect()).groups;
      broken = true;
      await expect(t.ackAndClaimMany(leases, 'w2', 100, { max: 3 })).rejects.toThrow('the clock broke');
      broken = false;
      expect((await t.inspect()).groups).toEqual(before);
      const from = reads;
      const result = await t.ackAndClaimMany(leases, 'w2', 100, { max: 3 });
      expect(reads - from).toBe(1);
      expect(result.acked).toEqual(leases);
      expect(result.claimed.map((l) => [l.event, l.expiresAt])).toEqual([
        ['c1', 1_000 + reads + 100],
        ['a2', 1_000 + reads + 100],
      ]);
    } finally {
      await t.close();
      dispose();
    }
  });
});

describe.each(sqliteBackends)('large batches against the model: $name', (backend) => {
  it('ackMany never acks a lease naming a message behind its group head, even with the holder and attempt right', async () => {
    const h = await backend.make({});
    try {
      const t = h.transport;
      const [, behind] = await t.publishMany([{ groupId: 'a', event: 1 }, { groupId: 'a', event: 2 }, { groupId: 'b', event: 3 }]);
      const [a, b] = await t.claimMany('w', 1000, { max: 2 });
      const forged = { ...a!, seq: behind! };
      expect(await t.ackMany([forged, b!])).toEqual({ acked: [b], lost: [forged] });
      expect((await t.inspect()).groups.map((g) => g.messages.map((m) => [m.seq, m.state]))).toEqual([[[1, 'leased'], [2, 'ready']]]);
      expect(await t.ackMany([a!])).toEqual({ acked: [a], lost: [] });
    } finally {
      await h.dispose();
    }
  });

  for (const maxAttempts of [undefined, 2]) {
    it(`claimMany, ackMany and ackAndClaimMany of up to 40 agree with successive claims and acks (maxAttempts ${maxAttempts ?? 'unlimited'})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
          const h = await backend.make(maxAttempts === undefined ? {} : { maxAttempts });
          const t = h.transport;
          const model = new TransportModel(maxAttempts);
          const leases: { real: Lease; model: ModelLease }[] = [];
          let published = 0;
          /** Checks `got` against what successive claims of the model give at `now`, and keeps the leases. */
          const claimed = (got: Lease[], c: Claim, now: number) => {
            const expected = model.claimMany(`w${c.worker}`, c.visibility, c.minPriority, c.max, now);
            expect(got.map((l) => ({ seq: l.seq, groupId: l.groupId, workerId: l.workerId, attempt: l.attempt, expiresAt: l.expiresAt, revision: l.revision }))).toEqual(expected);
            got.forEach((lease, i) => {
              expect(lease.event).toEqual({ n: lease.seq });
              leases.push({ real: lease, model: expected[i]! });
            });
          };
          try {
            for (const s of steps) {
              const now = h.clock.now();
              switch (s.kind) {
                case 'publish': {
                  const items = Array.from({ length: s.count }, () => {
                    const groupId = `g${(published++ * 7) % s.spread}`;
                    return { groupId, event: { n: published }, options: { priority: s.priority, ...(s.delay ? { delayMs: s.delay } : {}) } };
                  });
                  const seqs = await t.publishMany(items);
                  expect(seqs).toEqual(items.map((item) => model.publish(item.groupId, item.event, s.priority, null, s.delay ? now + s.delay : null)));
                  break;
                }
                case 'claimMany':
                  claimed(await t.claimMany(`w${s.worker}`, s.visibility, { max: s.max, minPriority: s.minPriority }), s, now);
                  break;
                case 'ackMany': {
                  // Recent leases mostly (live ones), some stale; `repeat` names one lease twice.
                  const pairs = s.picks.map((i) => leases[leases.length - 1 - (i % Math.max(leases.length, 1))]).filter((p) => p !== undefined);
                  if (s.repeat && pairs.length > 0) pairs.push(pairs[0]!);
                  // `forge` adds a live lease of a group not in the batch, naming a later message of
                  // that group: holder and attempt match, yet it must never be acked.
                  for (const pair of s.forge ? [...leases].reverse() : []) {
                    const later = model.messages.find((m) => m.groupId === pair.real.groupId && m.seq > pair.real.seq);
                    if (!later || !model.held(pair.model) || pairs.some((p) => p.real.groupId === pair.real.groupId)) continue;
                    pairs.push({ real: { ...pair.real, seq: later.seq }, model: { ...pair.model, seq: later.seq } });
                    break;
                  }
                  const c = s.claim;
                  const result = c
                    ? await t.ackAndClaimMany(pairs.map((p) => p.real), `w${c.worker}`, c.visibility, { max: c.max, minPriority: c.minPriority })
                    : await t.ackMany(pairs.map((p) => p.real));
                  const accepted = pairs.map((p) => model.ack(p.model));
                  expect(result.acked).toEqual(pairs.filter((_, i) => accepted[i]).map((p) => p.real));
                  expect(result.lost).toEqual(pairs.filter((_, i) => !accepted[i]).map((p) => p.real));
                  if (c) claimed((result as AckAndClaimManyResult).claimed, c, now);
                  break;
                }
                case 'nack': {
                  const pair = leases[leases.length - 1 - (s.pick % Math.max(leases.length, 1))];
                  if (!pair) break;
                  const ok = await t.nack(pair.real, s.delay).then(() => true, () => false);
                  expect(ok).toBe(model.nack(pair.model, s.delay, now));
                  break;
                }
                case 'advance':
                  await h.clock.advance(s.ms);
                  break;
              }
              const snapshot = await t.inspect();
              expect(snapshot.groups.map(({ messages, ...g }) => ({ ...g, messages: messages.map(({ groupId: _g, ...m }) => m) }))).toEqual(model.view(snapshot.now));
              expect(snapshot.deadLetters.map((d) => d.seq)).toEqual(model.dead.map((d) => d.seq));
              expect((await t.stats()).queued).toBe(model.messages.length);
            }
          } finally {
            await h.dispose();
          }
        }),
        { seed, numRuns: 60 },
      );
    }, 300_000);
  }
});
