/**
 * Bad input, one catalogue, every backend: each call gets a clear error (TypeError, RangeError
 * or a LeaseholdError) or a documented, safe result, and afterwards the data is exactly as it
 * was (the queue's inspect() and a dump of the store through its public API are compared).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { ClosedError, LeaseLostError, StorageError } from '../src/errors.js';
import { Runtime } from '../src/runtime/runtime.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { ExecutionStore } from '../src/store/contract.js';
import { InMemoryStore } from '../src/store/memory.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { Lease, Transport } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { dumpStore } from './conformance/store-harness.js';
import { scratchDir } from './support/backends.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { PgDatabase } from '../src/postgres/driver.js';
import { PG_MAX_ID_BYTES } from '../src/postgres/ids.js';
import { PostgresStore } from '../src/postgres/store.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { pgliteDatabase, releaseSchema, serverDatabase, takeSchema } from './support/postgres.js';
import { unlessFast } from './support/servers.js';

type Expect = typeof TypeError | typeof RangeError | typeof LeaseLostError | typeof ClosedError;
interface World {
  transport: Transport<any>;
  store: ExecutionStore;
  other: Transport<any>;
  lease: Lease;
  json: boolean;
  /** The longest indexed id the backend takes, in UTF-8 bytes (PostgreSQL), else none. */
  maxIdBytes?: number;
}

const MEGABYTE = 'x'.repeat(1 << 20);
const cycle = () => {
  const a: Record<string, unknown> = {};
  a.self = a;
  return a;
};

/** `[item]` with length 2: index 1 is a hole. */
const holed = <T>(item: T): T[] => Object.assign([item], { length: 2 });

/** [label, call, the error it must get (or null: a documented safe result, checked by `then`)]. */
const catalogue: [string, (w: World) => Promise<unknown>, Expect | null, ((result: unknown, w: World) => unknown)?][] = [
  ['publish: group id a number', (w) => w.transport.publish(7 as never, 1), TypeError],
  ['publish: group id empty', (w) => w.transport.publish('', 1), RangeError],
  ['publish: group id null', (w) => w.transport.publish(null as never, 1), TypeError],
  // UTF-8 storage would turn both lone surrogates into U+FFFD: two groups would become one.
  ['publish: group id with a lone high surrogate', (w) => w.transport.publish('g\uD800', 1), RangeError],
  ['publish: group id with a lone low surrogate', (w) => w.transport.publish('\uDC00g', 1), RangeError],
  ['publish: key with a lone surrogate', (w) => w.transport.publish('g', 1, { key: 'k\uDBFF' }), RangeError],
  ['claim: worker id with a lone surrogate', (w) => w.transport.claim('w\uDFFF', 10), RangeError],
  ['store.commit: execution id with a lone surrogate', (w) => w.store.commit({ id: 'e\uD83D', version: 0 }), RangeError],
  ['publish: priority NaN', (w) => w.transport.publish('g', 1, { priority: NaN }), RangeError],
  ['publish: priority Infinity', (w) => w.transport.publish('g', 1, { priority: Infinity }), RangeError],
  ['publish: key an object', (w) => w.transport.publish('g', 1, { key: {} as never }), TypeError],
  ['claim: worker id undefined', (w) => w.transport.claim(undefined as never, 10), TypeError],
  ['claim: visibility negative', (w) => w.transport.claim('w', -5), RangeError],
  ['claim: visibility a BigInt', (w) => w.transport.claim('w', 10n as never), TypeError],
  ['claim: minPriority -1', (w) => w.transport.claim('w', 10, { minPriority: -1 }), RangeError],
  ['nack: delay Infinity', (w) => w.transport.nack(w.lease, Infinity), RangeError],
  ['extend: visibility NaN', (w) => w.transport.extend(w.lease, NaN), RangeError],
  ['ack: a lease with a forged attempt', (w) => w.transport.ack({ ...w.lease, attempt: w.lease.attempt + 1 }), LeaseLostError],
  ['ack: a lease with a forged seq', (w) => w.transport.ack({ ...w.lease, seq: w.lease.seq + 1000 }), LeaseLostError],
  ['ack: a lease from another database', async (w) => w.transport.ack((await w.other.claim('w', 10))!), LeaseLostError],
  ['ack: a lease-shaped string', (w) => w.transport.ack('lease' as never), TypeError],
  ['ackAndClaimMany: max 0, with a lease that holds', (w) => w.transport.ackAndClaimMany([w.lease], 'w', 10, { max: 0 }), RangeError],
  ['ackAndClaimMany: a lease-shaped string among the leases', (w) => w.transport.ackAndClaimMany([w.lease, 'lease' as never], 'w', 10, { max: 1 }), TypeError],
  ['ackAndClaimMany: worker id with a lone surrogate', (w) => w.transport.ackAndClaimMany([w.lease], 'w\uD800', 10, { max: 1 }), RangeError],
  ['ackAndClaimMany: no options', (w) => w.transport.ackAndClaimMany([w.lease], 'w', 10, undefined as never), TypeError],
  // A hole (an index never set) is no lease: Array.prototype.forEach and map pass over it.
  ['ackMany: a hole after a lease that holds', (w) => w.transport.ackMany(holed(w.lease)), TypeError],
  ['ackAndClaimMany: a hole after a lease that holds', (w) => w.transport.ackAndClaimMany(holed(w.lease), 'w', 10, { max: 1 }), TypeError],
  ['publishMany: a hole after an item', (w) => w.transport.publishMany(holed({ groupId: 'g', event: 1 })), TypeError],
  ['redrive: a negative seq', (w) => w.transport.redrive(-1), RangeError],
  ['store.load: id empty', (w) => w.store.load(''), RangeError],
  ['store.save: no version', (w) => w.store.save({ id: 'exe' } as never), TypeError],
  ['store.save: version -1', (w) => w.store.save({ id: 'exe', version: -1 }), RangeError],
  ['store.save: version NaN', (w) => w.store.save({ id: 'exe', version: NaN }), RangeError],
  ['store.commit: timer fireAt NaN', (w) => w.store.commit({ id: 'new', version: 0 }, { timers: [{ action: 'schedule', path: 'p', fireAt: NaN }] }), RangeError],
  ['store.commit: timer action unknown', (w) => w.store.commit({ id: 'new', version: 0 }, { timers: [{ action: 'explode', path: 'p' } as never] }), RangeError],
  ['store.commit: emit target empty', (w) => w.store.commit({ id: 'new', version: 0 }, { emits: [{ targetId: '', event: 1 }] }), RangeError],
  ['store.commit: a hole after an emit', (w) => w.store.commit({ id: 'new', version: 0 }, { emits: holed({ targetId: 'x', event: 1 }) }), TypeError],
  ['store.commit: a hole after a timer', (w) => w.store.commit({ id: 'new', version: 0 }, { timers: holed({ action: 'schedule' as const, path: 'p', fireAt: 5 }) }), TypeError],
  ['store.commit: a hole after a spawn', (w) => w.store.commit({ id: 'new', version: 0 }, { spawns: holed({ childId: 'c', rootPath: 'r', context: {} }) }), TypeError],
  ['store.dueTimers: now -Infinity', (w) => w.store.dueTimers(-Infinity), RangeError],
  ['store.deleteTimer: path a number', (w) => w.store.deleteTimer('exe', 5 as never, 1), TypeError],
  ['store.pendingOutbox: limit 0', (w) => w.store.pendingOutbox(0), RangeError],
  // Values only JSON-backed stores refuse; the in-memory ones keep objects by identity.
  ['publish: an event with a cycle', (w) => w.transport.publish('g', cycle()), TypeError, (_, w) => expect(w.json).toBe(false)],
  ['store.commit: a spawn context with a BigInt', (w) => w.store.commit({ id: 'new', version: 0 }, { spawns: [{ childId: 'c', rootPath: 'r', context: { n: 1n } }] }), TypeError, (_, w) => expect(w.json).toBe(false)],
];

/** Documented, safe results: accepted, stored as given, and harmless. */
const safe: [string, (w: World) => Promise<void>][] = [
  ['a 1 MB group id is stored and delivered like any other (PostgreSQL: refused, one at its limit delivered)', async (w) => {
    if (w.maxIdBytes !== undefined) {
      const before = await w.transport.inspect();
      await expect(w.transport.publish(MEGABYTE, { big: true })).rejects.toThrow(/groupId must be at most 1024 bytes/);
      expect(await w.transport.inspect()).toEqual(before);
      // At the limit (multi-byte characters count as their UTF-8 bytes): taken and delivered.
      const atLimit = 'é'.repeat(w.maxIdBytes / 2);
      await w.transport.publish(atLimit, { big: true });
      await w.transport.nack(w.lease);
      const leases = [await w.transport.claim('w2', 10), await w.transport.claim('w3', 10)];
      expect(leases.map((l) => l?.groupId)).toContain(atLimit);
      return;
    }
    await w.transport.publish(MEGABYTE, { big: true });
    await w.transport.nack(w.lease); // let the big group's turn come
    const leases = [await w.transport.claim('w2', 10), await w.transport.claim('w3', 10)];
    expect(leases.map((l) => l?.groupId.length).sort()).toContain(1 << 20);
  }],
  ['SQL and HTML in ids and events are data, not code', async (w) => {
    const evil = "'); DROP TABLE lh_messages; --<script>alert(1)</script>";
    await w.transport.publish(evil, { evil });
    await w.store.save({ id: evil, version: 0, evil });
    expect((await w.store.load(evil))?.evil).toBe(evil);
    expect((await w.transport.inspect()).groups.some((g) => g.groupId === evil)).toBe(true);
  }],
  ['__proto__ and constructor keys are kept as plain data and pollute nothing', async (w) => {
    const event = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"n":1}');
    await w.transport.publish('proto', event);
    await w.store.save({ id: 'proto', version: 0, context: JSON.parse('{"__proto__":{"polluted":true}}') });
    const snapshot = await w.transport.inspect();
    const stored = snapshot.groups.find((g) => g.groupId === 'proto')!.messages[0]!.event as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(stored, '__proto__')).toBe(true);
    const loaded = (await w.store.load('proto'))!;
    expect(Object.prototype.hasOwnProperty.call(loaded.context, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((loaded.context as Record<string, unknown>).polluted).toBeUndefined();
  }],
];

/** PostgreSQL only: ids it indexes are limited (PG_MAX_ID_BYTES); longer ones are refused before anything is written. */
const TOO_LONG = 'é'.repeat(513); // 1026 bytes of UTF-8 in 513 characters
const indexedIds: [string, (w: World) => Promise<unknown>, RegExp][] = [
  ['publish: a group id over 1024 bytes', (w) => w.transport.publish(TOO_LONG, 1), /groupId must be at most 1024 bytes/],
  ['publish: a key over 1024 bytes', (w) => w.transport.publish('g', 1, { key: TOO_LONG }), /options\.key must be at most 1024 bytes/],
  ['publishMany: a group id over 1024 bytes in the second item', (w) => w.transport.publishMany([{ groupId: 'g', event: 1 }, { groupId: TOO_LONG, event: 2 }]), /items\[1\]\.groupId must be/],
  ['store.commit: an execution id over 1024 bytes', (w) => w.store.commit({ id: TOO_LONG, version: 0 }), /exe\.id must be at most/],
  ['store.commit: a processed event id over 1024 bytes', (w) => w.store.commit({ id: 'new', version: 0 }, { processedEventId: TOO_LONG }), /processedEventId must be/],
  ['store.commit: a timer path over 1024 bytes', (w) => w.store.commit({ id: 'new', version: 0 }, { timers: [{ action: 'schedule', path: TOO_LONG, fireAt: 5 }] }), /timers\[0\]\.path must be/],
  ['store.appendTrace: an execution id over 1024 bytes', (w) => w.store.appendTrace(TOO_LONG, { s: 1 }), /executionId must be at most/],
];

type Opened = { transport: Transport<any>; store: ExecutionStore; other: Transport<any>; close(): void | Promise<void>; maxIdBytes?: number };
type Backend = [string, boolean, () => Promise<Opened>];

/** PostgreSQL (server or PGlite): a reused schema for the queue and store, another for `other`. */
const postgres = (database: () => PgDatabase | Promise<PgDatabase>) => async (): Promise<Opened> => {
  const clock = new ManualClock(1_000);
  const db = await database();
  const [mine, theirs] = [await takeSchema(db), await takeSchema(db)];
  return {
    transport: new PostgresTransport(db, { clock: clock.now, schema: mine }),
    store: new PostgresStore(db, { schema: mine }),
    other: new PostgresTransport(db, { clock: clock.now, schema: theirs }),
    close: async () => {
      await releaseSchema(db, mine);
      await releaseSchema(db, theirs);
    },
    maxIdBytes: PG_MAX_ID_BYTES,
  };
};
const backends: Backend[] = [
  ['memory', false, async () => {
    const clock = new ManualClock(1_000);
    return { transport: new InMemoryTransport({ clock: clock.now }), store: new InMemoryStore(), other: new InMemoryTransport({ clock: clock.now }), close: () => {} };
  }],
  ['sqlite-wasm', true, async () => {
    const clock = new ManualClock(1_000);
    const [a, b] = [await openWasmDatabase(), await openWasmDatabase()];
    return { transport: new SqliteTransport(a, { clock: clock.now }), store: new SqliteStore(a), other: new SqliteTransport(b, { clock: clock.now }), close: () => (a.close(), b.close()) };
  }],
  ['better-sqlite3 file', true, async () => {
    const clock = new ManualClock(1_000);
    const scratch = scratchDir();
    const [a, b] = [await openBetterSqliteDatabase(join(scratch.dir, 'a.db')), await openBetterSqliteDatabase(join(scratch.dir, 'b.db'))];
    return {
      transport: new SqliteTransport(a, { clock: clock.now }),
      store: new SqliteStore(a),
      other: new SqliteTransport(b, { clock: clock.now }),
      close: () => (a.close(), b.close(), scratch.remove()),
    };
  }],
  ...unlessFast<Backend>([
    ['PostgreSQL server', true, postgres(serverDatabase)],
    ['PGlite', true, postgres(pgliteDatabase)],
  ]),
];

describe.each(backends)('bad input on %s', (_name, json, open) => {
  const world = async (): Promise<World & { close(): void }> => {
    const b = await open();
    // A queue and a store with something in them, so "unchanged" means something.
    await b.transport.publish('g', { n: 1 });
    await b.transport.publish('g', { n: 2 });
    await b.transport.publish('h', { n: 3 }, { key: 'k' });
    const lease = (await b.transport.claim('w', 1_000))!;
    await b.other.publish('elsewhere', 1);
    await b.store.commit({ id: 'exe', version: 0, step: 1 }, { emits: [{ targetId: 'x', event: 1 }], timers: [{ action: 'schedule', path: 'p', fireAt: 5 }], trace: { s: 1 } });
    return { ...b, lease, json, maxIdBytes: b.maxIdBytes };
  };
  const state = async (w: World) => ({ queue: await w.transport.inspect(), store: await dumpStore(w.store, { ids: ['exe', 'new'], events: [['exe', 'e1']] }) });

  for (const [label, call, error, then] of catalogue) {
    it(`${label}: ${error ? error.name : 'accepted'}${then ? ' (or kept by identity in memory)' : ''}, data unchanged`, async () => {
      const w = await world();
      try {
        const before = await state(w);
        const outcome = await call(w).then((value) => ({ value }), (e: unknown) => ({ error: e }));
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(error!);
          expect(await state(w)).toEqual(before);
        } else {
          expect(then, `${label} was accepted`).toBeDefined();
          then!(outcome.value, w);
        }
      } finally {
        await w.close();
      }
    });
  }

  for (const [label, call, message] of indexedIds) {
    it(`${label}: RangeError on PostgreSQL (accepted elsewhere), data unchanged there`, async () => {
      const w = await world();
      try {
        if (w.maxIdBytes === undefined) return void (await call(w));
        const before = await state(w);
        await expect(call(w)).rejects.toThrow(RangeError);
        await expect(call(w)).rejects.toThrow(message);
        expect(await state(w)).toEqual(before);
      } finally {
        await w.close();
      }
    });
  }

  for (const [label, check] of safe) {
    it(label, async () => {
      const w = await world();
      try {
        await check(w);
      } finally {
        await w.close();
      }
    });
  }

  it('rejects every call after close() with ClosedError, and close() twice is fine', async () => {
    const w = await world();
    try {
      await w.transport.close();
      await w.store.close();
      await w.transport.close();
      for (const call of [() => w.transport.publish('g', 1), () => w.transport.claim('w', 1), () => w.transport.ack(w.lease), () => w.store.load('exe'), () => w.store.save({ id: 'exe', version: 1 })]) {
        await expect(call()).rejects.toBeInstanceOf(ClosedError);
      }
    } finally {
      await w.close();
    }
  });
});

describe('bad options to the constructors and openers', () => {
  const clock = new ManualClock();
  it.each([
    ['InMemoryTransport maxAttempts 0', () => new InMemoryTransport({ maxAttempts: 0 }), RangeError],
    ['InMemoryTransport clock a number', () => new InMemoryTransport({ clock: 5 as never }), TypeError],
    ['InMemoryStore traceMax -1', () => new InMemoryStore({ traceMax: -1 }), RangeError],
    ['SqliteTransport without a database', () => new SqliteTransport(undefined as never), TypeError],
    ['Runtime without a handler', () => new Runtime({ store: new InMemoryStore(), transport: new InMemoryTransport(), workerId: 'w', visibilityMs: 10, clock: clock.now } as never), TypeError],
  ])('%s', (_label, make, error) => {
    expect(make).toThrow(error);
  });

  it('refuses bad database openers before touching any file', async () => {
    await expect(openWasmDatabase({ filename: '' })).rejects.toThrow(TypeError);
    await expect(openBetterSqliteDatabase(42 as never)).rejects.toThrow(TypeError);
    await expect(openBetterSqliteDatabase('x.db', { busyTimeoutMs: -1 })).rejects.toThrow(RangeError);
    // A misspelt option is refused, never run with its default.
    await expect(openBetterSqliteDatabase('x.db', { durabilty: 'full' } as never)).rejects.toThrow('options has no option "durabilty"; did you mean "durability"?');
    await expect(openWasmDatabase({ fileName: ':memory:' } as never)).rejects.toThrow('did you mean "filename"?');
  });

  it('says a missing directory is a StorageError, as the types say', async () => {
    const error = await openBetterSqliteDatabase(join(tmpdir(), `lh-no-such-dir-${process.pid}-${Date.now()}`, 'x.db')).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringContaining('its directory does not exist') });
  });
});
