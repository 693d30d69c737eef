/**
 * Every journaled method of the method table, replayed after the owner died: a page's call is
 * applied by one owner, its answer is lost with that owner, and the caller's host sends the same
 * call (same id) to the next owner, which opens the same file. The caller must get exactly the
 * first answer, and the data must be as the first call left it. Generated from the table: a
 * write method without a scenario here fails to compile and fails the coverage check.
 * Runs on better-sqlite3 files, so the second owner is a second connection to what the first
 * committed, as after a tab's death.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { remoteStore, remoteTransport } from '../src/remote/client.js';
import { STORE_METHODS, TRANSPORT_METHODS } from '../src/remote/methods.js';
import type { RemoteCall } from '../src/remote/wire.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { Execution, ExecutionStore } from '../src/store/contract.js';
import type { Lease, Transport } from '../src/transport/contract.js';

type WriteMethods<T> = { [K in keyof T]: T[K] extends { kind: 'write' } ? K : never }[keyof T];

/** The caller's side of a call: made through `c`, the same arguments each time it is made. */
type Act = (c: { t: Transport; s: ExecutionStore }) => Promise<unknown>;

/** Prepares the database through `t` and `s` (the owner's own page), and says which call is under test. */
interface Scenario {
  name: string;
  prepare(t: Transport, s: ExecutionStore): Promise<Act>;
}

const NOW = 1_000;
const exe = (version = 0): Execution => ({ id: 'exe', version, n: version });

const claimOne = async (t: Transport) => (await t.claim('w', 5_000))!;
const published = async (t: Transport, ...groups: string[]) => {
  for (const g of groups) await t.publish(g, { g });
};
const scenario = (name: string, prepare: Scenario['prepare']): Scenario => ({ name, prepare });
const only = (name: string, act: Act): Scenario => ({ name, prepare: async () => act });

const transportScenarios: Record<WriteMethods<typeof TRANSPORT_METHODS>, Scenario[]> = {
  publish: [
    only('a new message', (c) => c.t.publish('g', { n: 1 })),
    scenario('an idempotent key already queued', async (t) => (await t.publish('g', 1, { key: 'k' }), (c) => c.t.publish('g', 2, { key: 'k' }))),
  ],
  publishMany: [only('a batch', (c) => c.t.publishMany([{ groupId: 'a', event: 1 }, { groupId: 'b', event: 2, options: { delayMs: 50 } }]))],
  claim: [
    scenario('a lease', async (t) => (await published(t, 'a', 'b'), (c) => c.t.claim('w', 5_000))),
    only('nothing ready', (c) => c.t.claim('w', 5_000)),
  ],
  claimMany: [scenario('several leases', async (t) => (await published(t, 'a', 'b', 'c'), (c) => c.t.claimMany('w', 5_000, { max: 2 })))],
  ack: [
    scenario('a held lease', async (t) => {
      await published(t, 'a');
      const lease = await claimOne(t);
      return (c) => c.t.ack(lease);
    }),
    scenario('a lost lease', async (t) => {
      await published(t, 'a');
      const lease = { ...(await claimOne(t)), attempt: 9 };
      return (c) => c.t.ack(lease);
    }),
  ],
  ackMany: [
    scenario('one held, one lost', async (t) => {
      await published(t, 'a', 'b');
      const [a, b] = await t.claimMany('w', 5_000, { max: 2 });
      const leases: Lease[] = [a!, { ...b!, attempt: 7 }];
      return (c) => c.t.ackMany(leases);
    }),
  ],
  ackAndClaim: [
    scenario('ack, then the next group', async (t) => {
      await published(t, 'a', 'b');
      const lease = await claimOne(t);
      return (c) => c.t.ackAndClaim(lease, 'w2', 5_000);
    }),
  ],
  ackAndClaimMany: [
    scenario('acks and claims', async (t) => {
      await published(t, 'a', 'b', 'c', 'd');
      const leases = await t.claimMany('w', 5_000, { max: 2 });
      return (c) => c.t.ackAndClaimMany(leases, 'w2', 5_000, { max: 3 });
    }),
  ],
  nack: [
    scenario('a park', async (t) => {
      await published(t, 'a');
      const lease = await claimOne(t);
      return (c) => c.t.nack(lease, 500);
    }),
    scenario('a lost lease', async (t) => {
      await published(t, 'a');
      const lease = { ...(await claimOne(t)), workerId: 'other' };
      return (c) => c.t.nack(lease);
    }),
  ],
  release: [
    scenario('a held lease, its attempt kept', async (t) => {
      await published(t, 'a');
      const lease = await claimOne(t);
      return (c) => c.t.release(lease, 500);
    }),
    scenario('a held lease, with a reason', async (t) => {
      await published(t, 'a');
      const lease = await claimOne(t);
      return (c) => c.t.release(lease, 500, 'server unreachable');
    }),
    scenario('a lost lease', async (t) => {
      await published(t, 'a');
      const lease = { ...(await claimOne(t)), workerId: 'other' };
      return (c) => c.t.release(lease);
    }),
  ],
  reject: [
    scenario('a held lease, with a reason', async (t) => {
      await published(t, 'a');
      await t.publish('a', { next: true });
      const lease = await claimOne(t);
      return (c) => c.t.reject(lease, 'HTTP 422');
    }),
    scenario('a lost lease', async (t) => {
      await published(t, 'a');
      const lease = { ...(await claimOne(t)), workerId: 'other' };
      return (c) => c.t.reject(lease);
    }),
  ],
  discard: [
    scenario('a dead letter', async (t) => {
      await published(t, 'a');
      await t.reject(await claimOne(t), 'refused');
      const [dead] = await t.deadLetters();
      return (c) => c.t.discard(dead!.seq);
    }),
    only('an unknown seq', (c) => c.t.discard(42)),
    scenario('a dead letter with the message that waits on it', async (t) => {
      await published(t, 'a');
      await t.reject(await claimOne(t), 'refused');
      const [dead] = await t.deadLetters();
      await t.publish('b', { g: 'b' }, { after: dead!.seq });
      return (c) => c.t.discard(dead!.seq, { dependents: true });
    }),
  ],
  cancelGroup: [
    scenario('a group of two messages', async (t) => {
      await published(t, 'a', 'a', 'b');
      return (c) => c.t.cancelGroup('a', { dependents: true });
    }),
    scenario('a group with a lease in flight', async (t) => {
      await published(t, 'a', 'a');
      await claimOne(t);
      return (c) => c.t.cancelGroup('a');
    }),
  ],
  pause: [
    only('the queue', (c) => c.t.pause()),
    scenario('a group with a lease in flight', async (t) => {
      await published(t, 'a');
      await claimOne(t);
      return (c) => c.t.pause('a');
    }),
  ],
  resume: [
    scenario('a paused group', async (t) => (await published(t, 'a'), await t.pause('a'), (c) => c.t.resume('a'))),
    scenario('the paused queue', async (t) => (await published(t, 'a'), await t.pause(), (c) => c.t.resume())),
  ],
  extend: [
    scenario('a held lease', async (t) => {
      await published(t, 'a');
      const lease = await claimOne(t);
      return (c) => c.t.extend(lease, 9_000);
    }),
  ],
  expireLeases: [
    // Answered 2, then 0 if made again after the owner died: the journal keeps the 2.
    scenario("a worker's two leases", async (t) => {
      await published(t, 'a', 'b');
      await t.claimMany('w', 5_000, { max: 2 });
      return (c) => c.t.expireLeases('w');
    }),
  ],
  cancel: [
    // Once answered true, then false when re-sent after the owner died.
    scenario('a queued message behind its head', async (t) => {
      await t.publish('g', 1);
      const seq = await t.publish('g', 2);
      return (c) => c.t.cancel(seq);
    }),
    scenario('a free head', async (t) => {
      const seq = await t.publish('g', 1);
      return (c) => c.t.cancel(seq);
    }),
    // Once false, then null.
    only('an unknown seq', (c) => c.t.cancel(42)),
    scenario('a leased head', async (t) => {
      await published(t, 'a');
      const { seq } = await claimOne(t);
      return (c) => c.t.cancel(seq);
    }),
  ],
  redrive: [
    scenario('a dead letter', async (t) => {
      await published(t, 'a', 'b');
      for (let i = 0; i < 6; i++) {
        const lease = await t.claim('w', 5_000);
        if (lease) await t.nack(lease);
      }
      const [dead] = await t.deadLetters();
      expect(dead).toBeDefined();
      return (c) => c.t.redrive(dead!.seq);
    }),
    only('an unknown seq', (c) => c.t.redrive(42)),
  ],
};

const storeScenarios: Record<WriteMethods<typeof STORE_METHODS>, Scenario[]> = {
  save: [
    only('a first write', (c) => caller(exe(), (x) => c.s.save(x))),
    scenario('a stale version', async (_t, s) => (await s.save(exe()), (c) => caller(exe(), (x) => c.s.save(x)))),
  ],
  commit: [
    scenario('with every kind of change', async (_t, s) => {
      const first = exe();
      await s.save(first);
      const changes = {
        emits: [{ targetId: 'x', event: 1 }],
        processedEventId: 'e1',
        timers: [{ action: 'schedule' as const, path: 'p', fireAt: 5_000 }],
        spawns: [{ childId: 'kid', rootPath: 'r', context: { a: 1 } }],
        trace: { step: 'one' },
      };
      // The caller's own object, as it was when the call went out the first time.
      return (c) => caller({ ...first, n: 2 }, (x) => c.s.commit(x, changes));
    }),
  ],
  ackOutbox: [scenario('an entry', async (_t, s) => (await s.commit(exe(), { emits: [{ targetId: null, event: 1 }] }), (c) => c.s.ackOutbox(1)))],
  ackSpawn: [scenario('an entry', async (_t, s) => (await s.commit(exe(), { spawns: [{ childId: 'k', rootPath: 'r', context: {} }] }), (c) => c.s.ackSpawn(1)))],
  deleteTimer: [
    scenario('a matching timer', async (_t, s) => (await s.commit(exe(), { timers: [{ action: 'schedule', path: 'p', fireAt: 10 }] }), (c) => c.s.deleteTimer('exe', 'p', 10))),
    scenario('a timer since moved', async (_t, s) => (await s.commit(exe(), { timers: [{ action: 'schedule', path: 'p', fireAt: 20 }] }), (c) => c.s.deleteTimer('exe', 'p', 10))),
  ],
  appendTrace: [only('a step', (c) => c.s.appendTrace('exe', { step: 'x' }))],
  delete: [scenario('an execution', async (_t, s) => (await s.commit(exe(), { trace: { a: 1 }, processedEventId: 'e' }), (c) => c.s.delete('exe')))],
};

/** A save/commit's answer as the caller sees it: the version written back into its own object. */
async function caller(x: Execution, write: (x: Execution) => Promise<void>): Promise<unknown> {
  await write(x);
  return { version: x.version };
}

const dir = mkdtempSync(join(tmpdir(), 'leasehold-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A page's transport and store through `host`, every call journaled under the id the counter gives. */
function through(host: HostCore, ids: { next: number; prefix: string }, journal: boolean) {
  const send = (call: RemoteCall) => host.serve({ kind: 'call', id: `${ids.prefix}-${++ids.next}`, now: NOW, ...call }, journal, 'tab');
  return { t: remoteTransport(send), s: remoteStore(send) };
}

/** What the data looks like, read through `t` and `s`. */
async function state(t: Transport, s: ExecutionStore): Promise<unknown> {
  return {
    queue: await t.inspect(),
    stats: await t.stats(),
    exe: await s.load('exe'),
    outbox: await s.pendingOutbox(),
    spawns: await s.pendingSpawns(),
    timers: await s.dueTimers(Number.MAX_SAFE_INTEGER),
    trace: await s.readTrace('exe'),
    processed: await s.isProcessed('exe', 'e1'),
  };
}

const settle = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ value }),
    (error: Error) => ({ error: { ...error, name: error.name, message: error.message } }),
  );

async function replay(target: 'transport' | 'store', method: string, scenario: Scenario) {
  const file = join(dir, `replay-${++files}.db`);
  // The first owner: set up by its own page (unjournaled), then the call under test, forwarded from another tab.
  const firstDb = await openBetterSqliteDatabase(file);
  const first = new HostCore(firstDb, { maxAttempts: 2 });
  const page = through(first, { next: 0, prefix: 'setup' }, false);
  const act = await scenario.prepare(page.t, page.s);
  const sent = { next: 0, prefix: 'forwarded' };
  const firstAnswer = await settle(act(through(first, sent, true)));
  expect(sent.next, `${target}.${method}: one call under test`).toBe(1);
  const firstState = await state(page.t, page.s);
  // The owner dies with the answer: nothing of it reached the caller.
  firstDb.close();

  // The next owner opens the same file; the caller's host sends the same call (same id) again.
  const secondDb = await openBetterSqliteDatabase(file);
  const second = new HostCore(secondDb, { maxAttempts: 2 });
  const resent = { next: 0, prefix: 'forwarded' };
  const secondAnswer = await settle(act(through(second, resent, true)));
  expect(secondAnswer).toEqual(firstAnswer);
  const now = through(second, { next: 0, prefix: 'read' }, false);
  expect(await state(now.t, now.s)).toEqual(firstState);
  await second.close();
}

describe('a journaled call replayed on the next owner', () => {
  it('has a scenario for every write method of the table', () => {
    const writes = (table: Record<string, { kind: string }>) => Object.keys(table).filter((m) => table[m]!.kind === 'write').sort();
    expect(Object.keys(transportScenarios).sort()).toEqual(writes(TRANSPORT_METHODS));
    expect(Object.keys(storeScenarios).sort()).toEqual(writes(STORE_METHODS));
  });

  for (const [target, scenarios] of [['transport', transportScenarios], ['store', storeScenarios]] as const) {
    for (const [method, list] of Object.entries(scenarios) as [string, Scenario[]][]) {
      for (const scenario of list) {
        it(`${target}.${method}: ${scenario.name} — answered exactly as the first time, applied once`, () => replay(target, method, scenario));
      }
    }
  }
});

