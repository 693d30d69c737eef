/**
 * `onDeadLetter` is the queue's, not a transport's: on one database every transport of a queue
 * works by the same policy, the first that names one sets it, and one that names another is
 * refused with QUEUE_MISMATCH. SQLite (both drivers) and PostgreSQL (a server and PGlite).
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { LeaseholdError } from '../src/errors.js';
import type { PgDatabase } from '../src/postgres/driver.js';
import { PostgresTransport } from '../src/postgres/transport.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { Transport, TransportOptions } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';
import { pgliteDatabase, serverDatabase } from './support/postgres.js';
import { unlessFast } from './support/servers.js';

/** Opens transports on one database; `first` is a transport's first call (PostgreSQL opens the queue there). */
interface Place {
  open(options: Omit<TransportOptions, 'clock'>): Transport;
  dispose(): Promise<void>;
}

let cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const sqlite = (openDb: () => Promise<SqlDatabase>) => async (): Promise<Place> => {
  const db = await openDb();
  const clock = new ManualClock(1_000);
  return { open: (options) => new SqliteTransport(db, { ...options, clock: clock.now }), dispose: async () => db.close() };
};

const pgSchemas: [PgDatabase, string][] = [];
afterAll(async () => {
  for (const [db, schema] of pgSchemas) await db.query(`DROP SCHEMA "${schema}" CASCADE`);
});
const postgres = (database: () => Promise<PgDatabase>) => async (): Promise<Place> => {
  const db = await database();
  const schema = `lh_policy_${process.pid}_${pgSchemas.length}`;
  pgSchemas.push([db, schema]);
  const clock = new ManualClock(1_000);
  return { open: (options) => new PostgresTransport(db, { ...options, schema, clock: clock.now }), dispose: async () => {} };
};

const places: [string, () => Promise<Place>][] = [
  ['sqlite-wasm', sqlite(() => openWasmDatabase())],
  [
    'better-sqlite3',
    sqlite(() => {
      const scratch = scratchDir();
      cleanups.push(scratch.remove);
      return openBetterSqliteDatabase(join(scratch.dir, 'q.db'));
    }),
  ],
  ...unlessFast<[string, () => Promise<Place>]>([
    ['PostgreSQL (pg)', postgres(async () => serverDatabase())],
    ['PGlite', postgres(() => pgliteDatabase())],
  ]),
];

/** A transport, opened and used once (on PostgreSQL a refusal comes at the first call). */
const opened = async (place: Place, options: Omit<TransportOptions, 'clock'>): Promise<Transport> => {
  const transport = place.open(options);
  await transport.stats();
  return transport;
};
const refusal = (place: Place, options: Omit<TransportOptions, 'clock'>) =>
  Promise.resolve()
    .then(() => opened(place, options))
    .then(() => undefined, (e: unknown) => e);

describe.each(places)('the dead-letter policy is the queue’s: %s', (_name, make) => {
  it('refuses a transport that names another policy than the queue keeps, naming both', async () => {
    const place = await make();
    cleanups.push(() => place.dispose());
    await opened(place, { onDeadLetter: 'hold', queue: 'outbox' });
    const error = await refusal(place, { onDeadLetter: 'continue', queue: 'outbox' });
    expect(error).toBeInstanceOf(LeaseholdError);
    expect(error).toMatchObject({ code: 'QUEUE_MISMATCH' });
    expect(String(error)).toMatch(/"outbox" keeps onDeadLetter "hold".*asked for "continue"/);
    // Another queue of the same database is independent.
    await opened(place, { onDeadLetter: 'continue', queue: 'jobs' });
  });

  it('lets a transport that names none work by the queue’s: its dead letters hold their group', async () => {
    const place = await make();
    cleanups.push(() => place.dispose());
    await opened(place, { onDeadLetter: 'hold' });
    const plain = await opened(place, {});
    await plain.publish('g', 'a');
    await plain.publish('g', 'b');
    await plain.reject((await plain.claim('w', 1000))!, 'refused');
    expect(await plain.claim('w', 1000)).toBeNull();
    expect(await plain.stats()).toMatchObject({ held: 1, queued: 1 });
  });

  it('works as continue until a transport names a policy, which then binds the transports already open', async () => {
    const place = await make();
    cleanups.push(() => place.dispose());
    const early = await opened(place, {});
    await early.publish('g', 'a');
    await early.publish('g', 'b');
    await early.reject((await early.claim('w', 1000))!);
    expect(await early.claim('w', 1000)).toMatchObject({ event: 'b' }); // continue: the group went on
    await opened(place, { onDeadLetter: 'hold' });
    await early.publish('h', 'c');
    await early.publish('h', 'd');
    const c = (await early.claim('w', 1000))!; // g's head is leased: h is next
    expect(c).toMatchObject({ groupId: 'h', event: 'c' });
    await early.reject(c);
    expect(await early.claim('w', 1000)).toBeNull(); // hold: d waits
    expect(await early.stats()).toMatchObject({ held: 1 });
    expect(await refusal(place, { onDeadLetter: 'continue' })).toMatchObject({ code: 'QUEUE_MISMATCH' });
  });
});

describe.each(places)('pauses are the queue’s: %s', (_name, make) => {
  it('a pause through one transport holds back every transport of the queue, and only that queue', async () => {
    const place = await make();
    cleanups.push(place.dispose);
    const [a, b] = [await opened(place, {}), await opened(place, {})];
    const other = await opened(place, { queue: 'other' });
    await a.publish('g', 'g1');
    await a.publish('h', 'h1');
    await other.publish('g', 'o1');
    await a.pause('g');
    expect(await b.claim('w', 1000)).toMatchObject({ groupId: 'h' });
    expect(await b.claim('w', 1000)).toBeNull();
    expect(await other.claim('w', 1000)).toMatchObject({ event: 'o1' });
    await b.pause();
    await a.resume('g');
    expect(await a.claim('w', 1000)).toBeNull();
    expect(await b.stats()).toMatchObject({ paused: true, pausedGroups: 0 });
    await a.resume();
    expect(await b.claim('w', 1000)).toMatchObject({ groupId: 'g', event: 'g1' });
  });
});
