import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { ExecutionStore, ExecutionStoreOptions } from '../src/store/contract.js';
import { InMemoryStore } from '../src/store/memory.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { describeStore, type StoreHarness } from './conformance/store.js';
import { ROUTES, workerdStore } from './support/workerd-backends.js';
import type { PgDatabase } from '../src/postgres/driver.js';
import { PostgresStore, type PostgresStoreOptions } from '../src/postgres/store.js';
import { pgliteDatabase, releaseSchema, serverDatabase, takeSchema } from './support/postgres.js';
import { fastOnly } from './support/servers.js';

const dir = mkdtempSync(join(tmpdir(), 'leasehold-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A SqliteStore over `open()`; closes the database if the store's constructor throws. */
async function sqlHarness(
  open: () => Promise<SqlDatabase>,
  options: ExecutionStoreOptions | undefined,
  reopenable: boolean,
): Promise<StoreHarness> {
  let db = await open();
  const build = (): SqliteStore => {
    try {
      return new SqliteStore(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
  };
  const harness: StoreHarness = {
    store: build(),
    clock: new ManualClock(1_000),
    caps: { identity: false, persistent: reopenable },
    async dispose() {
      await harness.store.close();
      db.close();
    },
  };
  if (reopenable) {
    harness.caps.reopen = async (): Promise<ExecutionStore> => {
      await harness.store.close();
      db.close();
      db = await open();
      harness.store = build();
      return harness.store;
    };
  }
  return harness;
}

describeStore('InMemoryStore', async (options) => {
  const store = new InMemoryStore(options);
  return { store, clock: new ManualClock(1_000), caps: { identity: true, persistent: false }, dispose: () => store.close() };
});

describeStore('SqliteStore on sqlite-wasm', (options) => sqlHarness(() => openWasmDatabase(), options, false));

describeStore('SqliteStore on better-sqlite3', (options) => {
  const file = join(dir, `store-${++files}.db`);
  return sqlHarness(() => openBetterSqliteDatabase(file), options, true);
});

// Every call crosses to workerd: the model run's limit is 3 minutes (9 s at a load of 8).
if (!fastOnly) for (const { route, label } of ROUTES) describeStore(`LeaseholdObject in workerd (${label})`, workerdStore(route), { modelRuns: 20, modelTimeout: 180_000 });

/** A PostgresStore in a schema of its own; reopening makes a new store over the same schema. */
async function pgHarness(db: PgDatabase, options: ExecutionStoreOptions | undefined): Promise<StoreHarness> {
  const schema = await takeSchema(db);
  const build = () => new PostgresStore(db, { ...options, schema } as PostgresStoreOptions);
  const harness: StoreHarness = {
    store: build(),
    clock: new ManualClock(1_000),
    caps: {
      identity: false,
      persistent: true,
      async reopen() {
        await harness.store.close();
        harness.store = build();
        return harness.store;
      },
    },
    async dispose() {
      await harness.store.close();
      await releaseSchema(db, schema);
    },
  };
  return harness;
}

// Every call is a round trip: fewer model runs, more time.
const roundTrips = { modelRuns: 50, modelTimeout: 300_000 };

if (!fastOnly) {
  describeStore('PostgresStore on a PostgreSQL server (pg)', (options) => pgHarness(serverDatabase(), options), roundTrips);
  describeStore('PostgresStore on PGlite', async (options) => pgHarness(await pgliteDatabase(), options), roundTrips);
}
