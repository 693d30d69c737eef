/**
 * Model-based tests: random command sequences run against the reference model and a real
 * backend in lock-step. After every command the results must agree and the invariants hold:
 * at most one message in flight per group, FIFO per group, nothing lost, nothing delivered
 * twice except after its lease ran out or a nack. Seeded and reproducible (FC_SEED overrides).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../src/errors.js';
import type { Lease } from '../src/transport/contract.js';
import { transportBackends } from './support/backends.js';
import { type ModelLease, TransportModel } from './support/model.js';

type Command =
  | { kind: 'publish'; group: number; priority: number; key: number | null }
  | { kind: 'claim'; worker: number; visibility: number; minPriority: number }
  | { kind: 'ack'; lease: number }
  | { kind: 'nack'; lease: number; delay: number }
  | { kind: 'extend'; lease: number; visibility: number }
  | { kind: 'redrive'; letter: number }
  | { kind: 'advance'; ms: number };

// Few distinct durations, so clock jumps often land exactly on an expiry: the boundary
// (in flight while expiry >= now) is where off-by-one bugs live.
const durations = fc.constantFrom(1, 5, 10, 20);

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('publish' as const), group: fc.nat(4), priority: fc.nat(4), key: fc.option(fc.nat(2), { freq: 3 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('claim' as const), worker: fc.nat(3), visibility: durations, minPriority: fc.oneof(fc.constant(0), fc.nat(4)) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), lease: fc.nat(30) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('nack' as const), lease: fc.nat(30), delay: fc.oneof(fc.constant(0), durations) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('extend' as const), lease: fc.nat(30), visibility: durations }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('redrive' as const), letter: fc.nat(5) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.constant(0), durations, fc.integer({ min: 1, max: 60 })) }) },
);

const seed = Number(process.env.FC_SEED ?? 20261130);
const runsFor: Record<string, number> = { InMemoryTransport: 2000 };
const defaultRuns = 600;

describe.each(transportBackends)('model-based: $name', (backend) => {
  for (const maxAttempts of [undefined, 3]) {
    it(`agrees with the reference model on random command sequences (maxAttempts ${maxAttempts ?? 'unlimited'})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60, size: 'max' }), async (commands) => {
          const h = await backend.make(maxAttempts === undefined ? {} : { maxAttempts });
          const t = h.transport;
          const model = new TransportModel(maxAttempts);
          const leases: { real: Lease; model: ModelLease }[] = [];
          /** seq → the highest attempt delivered, to check nothing is delivered twice. */
          const delivered = new Map<number, number>();
          try {
            for (const c of commands) {
              const now = h.clock.now();
              switch (c.kind) {
                case 'publish': {
                  const group = `g${c.group}`;
                  const key = c.key === null ? null : `k${c.key}`;
                  const event = { group, n: model.lastSeq + 1 };
                  const seq = await t.publish(group, event, key === null ? { priority: c.priority } : { priority: c.priority, key });
                  expect(seq).toBe(model.publish(group, event, c.priority, key));
                  break;
                }
                case 'claim': {
                  const lease = await t.claim(`w${c.worker}`, c.visibility, { minPriority: c.minPriority });
                  const expected = model.claim(`w${c.worker}`, c.visibility, c.minPriority, now);
                  expect(lease && { seq: lease.seq, groupId: lease.groupId, workerId: lease.workerId, attempt: lease.attempt, expiresAt: lease.expiresAt }).toEqual(expected);
                  if (lease && expected) {
                    // A new delivery of a message is always a new attempt: never the same one twice.
                    expect(lease.attempt).toBeGreaterThan(delivered.get(lease.seq) ?? 0);
                    delivered.set(lease.seq, lease.attempt);
                    leases.push({ real: lease, model: expected });
                  }
                  break;
                }
                case 'ack':
                case 'nack':
                case 'extend': {
                  const pair = leases[c.lease % Math.max(leases.length, 1)];
                  if (!pair) break;
                  const call =
                    c.kind === 'ack' ? t.ack(pair.real) : c.kind === 'nack' ? t.nack(pair.real, c.delay) : t.extend(pair.real, c.visibility);
                  const outcome = await call.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));
                  const accepted =
                    c.kind === 'ack' ? model.ack(pair.model) : c.kind === 'nack' ? model.nack(pair.model, c.delay, now) : model.extend(pair.model, c.visibility, now) !== null;
                  expect(outcome.ok).toBe(accepted);
                  if (!outcome.ok) expect(outcome.error).toBeInstanceOf(LeaseLostError);
                  if (outcome.ok && c.kind === 'extend') expect((outcome.value as Lease).expiresAt).toBe(now + c.visibility);
                  break;
                }
                case 'redrive': {
                  const letter = model.dead[c.letter % Math.max(model.dead.length, 1)];
                  if (!letter) break;
                  expect(await t.redrive(letter.seq)).toBe(model.redrive(letter.seq));
                  break;
                }
                case 'advance':
                  await h.clock.advance(c.ms);
                  break;
              }
              const snapshot = await t.inspect();
              expect(snapshot.groups.map(({ messages, ...g }) => ({ ...g, messages: messages.map(({ event: _e, groupId: _g, ...m }) => m) }))).toEqual(
                model.view(snapshot.now),
              );
              expect(snapshot.deadLetters.map((d) => d.seq)).toEqual(model.dead.map((d) => d.seq));
              for (const group of snapshot.groups) {
                // One in flight per group, only ever its head; FIFO: seqs ascend within a group.
                const locked = group.messages.filter((m) => m.state === 'leased' || m.state === 'parked');
                expect(locked.length).toBeLessThanOrEqual(1);
                if (locked.length === 1) expect(locked[0]).toBe(group.messages[0]);
                const seqs = group.messages.map((m) => m.seq);
                expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
              }
            }
            // Nothing lost: every published message is queued, dead, or was acked by a valid lease.
            const queued = (await t.inspect()).groups.flatMap((g) => g.messages.map((m) => m.seq));
            expect(queued.sort((a, b) => a - b)).toEqual(model.messages.map((m) => m.seq).sort((a, b) => a - b));
          } finally {
            await h.dispose();
          }
        }),
        { seed, numRuns: runsFor[backend.name] ?? defaultRuns },
      );
    });
  }
});
