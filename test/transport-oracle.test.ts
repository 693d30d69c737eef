/**
 * The oracle: the seed's claim SQL (shared/seeds/001), verbatim, on the seed's own schema.
 * Random workloads run in lock-step against it and against every backend, with a clock that
 * advances between claims (the condition under which the seed's time-based round-robin is
 * well defined); every claim must pick the message the seed's SQL picks. A second property adds
 * what the seed has no word for — pause and resume, dead letters that hold their group (reject,
 * redrive, discard), release, and `after` — against the seed's SQL extended by one condition
 * (support/seed-stops.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { SeedSqlTransport } from './support/seed.js';
import { SeedWithStops } from './support/seed-stops.js';
import type { Lease } from '../src/transport/contract.js';
import { transportBackends } from './support/backends.js';

type Op =
  | { kind: 'publish'; group: number; priority: number }
  | { kind: 'claim'; visibility: number; minPriority: number }
  | { kind: 'claimMany'; visibility: number; minPriority: number; max: number }
  | { kind: 'ack'; pick: number }
  | { kind: 'nack'; pick: number; delay: number }
  | { kind: 'advance'; ms: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('publish' as const), group: fc.nat(7), priority: fc.nat(4) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), visibility: fc.constantFrom(5, 10, 30), minPriority: fc.oneof(fc.constant(0), fc.nat(4)) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('claimMany' as const), visibility: fc.constantFrom(5, 10, 30), minPriority: fc.oneof(fc.constant(0), fc.nat(4)), max: fc.integer({ min: 1, max: 5 }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), pick: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('nack' as const), pick: fc.nat(20), delay: fc.constantFrom(0, 0, 5, 15) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1, 5, 10, 30) }) },
);

/** Runs for `npm test`; `npm run soak` (SOAK=1) runs five times as many. */
const soakRuns = (runs: number) => (process.env.SOAK === '1' ? runs * 5 : runs);

describe.each(transportBackends)('the seed SQL oracle: $name', (backend) => {
  it('claims exactly what the seed claim SQL claims, every time, one claim or a batch (claimMany)', async () => {
    const numRuns = backend.runs ?? soakRuns(200);
    let claims = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 80, size: 'max' }), async (ops) => {
        const h = await backend.make({});
        const seedDb = await openWasmDatabase();
        const seed = new SeedSqlTransport(seedDb);
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
            } else if (o.kind === 'claimMany') {
              // claimMany(k) is k claims at one instant: the seed makes them one after another.
              await h.clock.advance(1);
              const at = h.clock.now();
              const leases = await h.transport.claimMany('w', o.visibility, { minPriority: o.minPriority, max: o.max });
              const expected: number[] = [];
              for (let i = 0; i < o.max; i++) {
                const seq = seed.claim('w', o.visibility, o.minPriority, at, at + i / o.max);
                if (seq === null) break;
                expected.push(seq);
              }
              expect(leases.map((l) => l.seq)).toEqual(expected);
              claims += expected.length;
              held.push(...leases);
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
      { seed: Number(process.env.FC_SEED ?? 1130), numRuns },
    );
    // The runs must have claimed plenty (~4 per run), or the comparison proved little.
    expect(claims).toBeGreaterThan(numRuns * 3);
    // A deadline, not a speed claim: a loaded machine or a backend over a socket takes a while.
  }, 300_000);

  it('claims what the seed claims with pauses, held dead letters, releases and after', async () => {
    const numRuns = Math.min(backend.runs ?? soakRuns(60), soakRuns(60));
    let claims = 0;
    let stops = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('hold' as const, 'continue' as const), fc.array(stopOp, { minLength: 20, maxLength: 80, size: 'max' }), async (policy, ops) => {
        const h = await backend.make({ onDeadLetter: policy });
        const seedDb = await openWasmDatabase();
        const seed = new SeedWithStops(seedDb, policy);
        const held: Lease[] = [];
        const dead: number[] = [];
        let lastSeq = 0;
        try {
          for (const o of ops) {
            const now = h.clock.now();
            const live = held.filter((l) => l.expiresAt >= now);
            const lease = live[('pick' in o ? o.pick : 0) % Math.max(live.length, 1)];
            switch (o.kind) {
              case 'publish': {
                const after = lastSeq === 0 ? [] : o.after.map((n) => 1 + (n % lastSeq));
                const event = { n: claims };
                const seq = await h.transport.publish(`g${o.group}`, event, after.length > 0 ? { priority: o.priority, after } : { priority: o.priority });
                expect(seq).toBe(seed.publish(`g${o.group}`, event, o.priority, after));
                lastSeq = seq;
                break;
              }
              case 'claim': {
                await h.clock.advance(1);
                const got = await h.transport.claim('w', o.visibility);
                expect(got?.seq ?? null).toBe(seed.claim('w', o.visibility, 0, h.clock.now()));
                if (got) (claims++, held.push(got));
                break;
              }
              case 'ack':
              case 'nack':
              case 'release':
              case 'reject':
                if (!lease) break;
                held.splice(held.indexOf(lease), 1);
                if (o.kind === 'ack') {
                  await h.transport.ack(lease);
                  seed.ack(lease.seq, lease.groupId);
                } else if (o.kind === 'reject') {
                  await h.transport.reject(lease);
                  seed.reject(lease.seq, lease.groupId);
                  dead.push(lease.seq);
                  stops++;
                } else if (o.kind === 'nack' || o.kind === 'release') {
                  await (o.kind === 'nack' ? h.transport.nack(lease, o.delay) : h.transport.release(lease, o.delay));
                  seed.nack(lease.seq, o.delay, now);
                }
                break;
              case 'redrive':
              case 'discard': {
                const seq = dead[o.pick % Math.max(dead.length, 1)];
                if (seq === undefined) break;
                dead.splice(dead.indexOf(seq), 1);
                if (o.kind === 'redrive') {
                  const again = await h.transport.redrive(seq);
                  expect(again).toBe(seed.redrive(seq));
                  lastSeq = Math.max(lastSeq, again);
                } else {
                  await h.transport.discard(seq);
                  expect(seed.discard(seq)).toBe(true);
                }
                break;
              }
              case 'pause':
              case 'resume': {
                const group = o.group === null ? undefined : `g${o.group}`;
                await (o.kind === 'pause' ? h.transport.pause(group) : h.transport.resume(group));
                if (o.kind === 'pause') (seed.pause(group), stops++);
                else seed.resume(group);
                break;
              }
              case 'advance':
                await h.clock.advance(o.ms);
                break;
            }
          }
        } finally {
          seedDb.close();
          await h.dispose();
        }
      }),
      { seed: Number(process.env.FC_SEED ?? 2611), numRuns },
    );
    expect(claims).toBeGreaterThan(numRuns * 3);
    expect(stops).toBeGreaterThan(numRuns);
  }, 300_000);
});

type StopOp =
  | { kind: 'publish'; group: number; priority: number; after: number[] }
  | { kind: 'claim'; visibility: number }
  | { kind: 'ack' | 'reject'; pick: number }
  | { kind: 'nack' | 'release'; pick: number; delay: number }
  | { kind: 'redrive' | 'discard'; pick: number }
  | { kind: 'pause' | 'resume'; group: number | null }
  | { kind: 'advance'; ms: number };

const stopOp: fc.Arbitrary<StopOp> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('publish' as const), group: fc.nat(5), priority: fc.nat(2), after: fc.oneof({ weight: 3, arbitrary: fc.constant<number[]>([]) }, { weight: 1, arbitrary: fc.array(fc.nat(40), { minLength: 1, maxLength: 2 }) }) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), visibility: fc.constantFrom(5, 10, 30) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reject' as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('nack' as const, 'release' as const), pick: fc.nat(20), delay: fc.constantFrom(0, 5, 15) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('redrive' as const, 'discard' as const), pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const), group: fc.option(fc.nat(5), { freq: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1, 5, 10, 30) }) },
);
