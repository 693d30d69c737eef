/**
 * Store + transport pairs the runtime tests run against. A pair is a factory taking the clock,
 * so another pair (the browser host) plugs in by adding one entry.
 */
import type { Clock } from '../../src/clock.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { openWasmDatabase } from '../../src/sqlite/wasm.js';
import type { ExecutionStore } from '../../src/store/contract.js';
import { InMemoryStore } from '../../src/store/memory.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Transport } from '../../src/transport/contract.js';
import { InMemoryTransport } from '../../src/transport/memory.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';
import { ROUTES, workerdRuntime } from './workerd-backends.js';
import type { PgDatabase } from '../../src/postgres/driver.js';
import { PostgresStore } from '../../src/postgres/store.js';
import { PostgresTransport } from '../../src/postgres/transport.js';
import { pgliteDatabase, releaseSchema, serverDatabase, takeSchema } from './postgres.js';
import { unlessFast } from './servers.js';

export interface RuntimeBackends {
  store: ExecutionStore;
  transport: Transport;
  dispose(): Promise<void>;
}

/**
 * What a pair can promise the suites. `settlesInProcess`: every call settles within a macrotask
 * turn, so a test can drive run() and lease renewal with a manual scheduler and `flush()`. The
 * browser host answers from a worker, on its own time: those tests are skipped there.
 */
export interface RuntimeSuiteCaps {
  settlesInProcess: boolean;
}

/** Fresh, empty backends on `clock`; `maxAttempts` goes to the transport. */
export type MakeRuntimeBackends = (options: { clock: Clock; maxAttempts?: number }) => Promise<RuntimeBackends>;

/** A SqliteStore and a SqliteTransport on one database, as an app opens them; dispose closes the database. */
export function sqlitePair(db: SqlDatabase, { clock, maxAttempts }: { clock: Clock; maxAttempts?: number }): RuntimeBackends {
  const store = new SqliteStore(db);
  const transport = new SqliteTransport(db, { clock, maxAttempts });
  return {
    store,
    transport,
    async dispose() {
      await transport.close();
      await store.close();
      db.close();
    },
  };
}

/** A PostgresStore and a PostgresTransport in one schema of their own. */
async function pgPair(db: PgDatabase, { clock, maxAttempts }: { clock: Clock; maxAttempts?: number }): Promise<RuntimeBackends> {
  const schema = await takeSchema(db);
  const store = new PostgresStore(db, { schema });
  const transport = new PostgresTransport(db, { clock, maxAttempts, schema });
  return {
    store,
    transport,
    async dispose() {
      await transport.close();
      await store.close();
      await releaseSchema(db, schema);
    },
  };
}

/** Calls answered over a connection (or PGlite's queue) do not settle within one macrotask turn. */
const overConnection: RuntimeSuiteCaps = { settlesInProcess: false };

/** `runs`: random runs the model check can afford on a pair (default: its own table); `timeout`: its time limit. */
type RuntimeBackendPair = { name: string; make: MakeRuntimeBackends; caps?: RuntimeSuiteCaps; runs?: number; timeout?: number };

export const runtimeBackendPairs: RuntimeBackendPair[] = [
  {
    name: 'InMemoryStore + InMemoryTransport',
    async make({ clock, maxAttempts }) {
      return { store: new InMemoryStore(), transport: new InMemoryTransport({ clock, maxAttempts }), dispose: async () => {} };
    },
  },
  {
    name: 'SqliteStore + SqliteTransport on one sqlite-wasm database',
    make: async (options) => sqlitePair(await openWasmDatabase(), options),
  },
  ...unlessFast<RuntimeBackendPair>([...ROUTES.map(({ route, label }) => ({ name: `a LeaseholdObject in workerd (${label})`, make: workerdRuntime(route), caps: { settlesInProcess: false }, runs: 8 })),
  {
    name: 'PostgresStore + PostgresTransport on a PostgreSQL server (pg)',
    make: (options) => pgPair(serverDatabase(), options),
    caps: overConnection,
    runs: 20,
    timeout: 300_000,
  },
  {
    name: 'PostgresStore + PostgresTransport on PGlite',
    make: async (options) => pgPair(await pgliteDatabase(), options),
    caps: overConnection,
    runs: 20,
    timeout: 300_000,
  }]),
];
