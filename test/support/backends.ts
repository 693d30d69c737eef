/** Factories for every Node backend, shared by the conformance, model and oracle tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { openWasmDatabase } from '../../src/sqlite/wasm.js';
import type { TransportOptions } from '../../src/transport/contract.js';
import type { PgDatabase } from '../../src/postgres/driver.js';
import { PostgresTransport } from '../../src/postgres/transport.js';
import { InMemoryTransport } from '../../src/transport/memory.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';
import type { TransportCaps, TransportHarness } from '../conformance/transport.js';
import { ROUTES, workerdTransport } from './workerd-backends.js';
import { pgliteDatabase, releaseSchema, serverDatabase, takeSchema } from './postgres.js';
import { unlessFast } from './servers.js';

/** A scratch directory for database files, removed by the returned function. */
export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TransportBackend {
  name: string;
  caps: TransportCaps;
  /** Random runs a model-based test can afford here, when fewer than its default (a remote backend: ms per call). */
  runs?: number;
  /**
   * false for a backend in another process (workerd): its calls settle on the network's time, so
   * suites that settle work with a manual scheduler and a few event-loop turns (consume) skip it.
   */
  settlesInProcess?: boolean;
  make(options: Omit<TransportOptions, 'clock'>): Promise<TransportHarness>;
}

const sqlHarness = async (
  openDb: () => Promise<SqlDatabase>,
  options: Omit<TransportOptions, 'clock'>,
  cleanup: () => void = () => {},
  reopenable = false,
): Promise<TransportHarness> => {
  const clock = new ManualClock(1_000_000);
  let db = await openDb();
  const harness: TransportHarness = {
    transport: new SqliteTransport(db, { ...options, clock: clock.now }),
    clock,
    queue: async (queue) => new SqliteTransport(db, { ...options, queue, clock: clock.now }),
    async dispose() {
      db.close();
      cleanup();
    },
  };
  if (reopenable) {
    harness.reopen = async () => {
      await harness.transport.close();
      db.close();
      db = await openDb();
      harness.transport = new SqliteTransport(db, { ...options, clock: clock.now });
      return harness.transport;
    };
  }
  return harness;
};

/** A PostgresTransport in a schema of its own, on a manual clock; reopening makes a new transport on the same schema. */
const pgHarness = async (db: PgDatabase, options: Omit<TransportOptions, 'clock'>): Promise<TransportHarness> => {
  const clock = new ManualClock(1_000_000);
  const schema = await takeSchema(db);
  const others: PostgresTransport[] = [];
  const open = () => new PostgresTransport(db, { ...options, clock: clock.now, schema });
  const harness: TransportHarness = {
    transport: open(),
    clock,
    async queue(queue) {
      const other = new PostgresTransport(db, { ...options, queue, clock: clock.now, schema });
      others.push(other);
      return other;
    },
    async reopen() {
      await harness.transport.close();
      harness.transport = open();
      return harness.transport;
    },
    async dispose() {
      for (const t of [harness.transport, ...others]) await t.close();
      await releaseSchema(db, schema);
    },
  };
  return harness;
};

export const transportBackends: TransportBackend[] = [
  {
    name: 'InMemoryTransport',
    caps: { json: false, persistent: false },
    async make(options) {
      const clock = new ManualClock(1_000_000);
      return { transport: new InMemoryTransport({ ...options, clock: clock.now }), clock, dispose: async () => {} };
    },
  },
  {
    // Keeps JSON copies as the SQL backends do: the suites' `json` rows hold for it too.
    name: "InMemoryTransport (events: 'json')",
    caps: { json: true, persistent: false },
    async make(options) {
      const clock = new ManualClock(1_000_000);
      return { transport: new InMemoryTransport({ ...options, clock: clock.now, events: 'json' }), clock, dispose: async () => {} };
    },
  },
  {
    name: 'SqliteTransport on sqlite-wasm (:memory:)',
    caps: { json: true, persistent: false, namedQueues: true },
    make: (options) => sqlHarness(() => openWasmDatabase(), options),
  },
  {
    name: 'SqliteTransport on better-sqlite3 (file, WAL)',
    caps: { json: true, persistent: true, namedQueues: true },
    make(options) {
      const scratch = scratchDir();
      const file = join(scratch.dir, 'queue.db');
      return sqlHarness(() => openBetterSqliteDatabase(file), options, scratch.remove, true);
    },
  },
  // A LeaseholdObject in the real workerd (SQLite storage on disk), over HTTP, WebSocket calls and Workers RPC.
  ...unlessFast<TransportBackend>([...ROUTES.map(({ route, label }): TransportBackend => ({
    name: `LeaseholdObject in workerd (${label})`,
    caps: { json: true, persistent: true, namedQueues: true },
    runs: 12,
    settlesInProcess: false,
    make: workerdTransport(route),
  })),
  {
    name: 'PostgresTransport on a PostgreSQL server (pg)',
    caps: { json: true, persistent: true, namedQueues: true },
    runs: 75,
    settlesInProcess: false,
    make: (options) => pgHarness(serverDatabase(), options),
  },
  {
    name: 'PostgresTransport on PGlite',
    caps: { json: true, persistent: true, namedQueues: true },
    runs: 75,
    make: async (options) => pgHarness(await pgliteDatabase(), options),
  }]),
];
