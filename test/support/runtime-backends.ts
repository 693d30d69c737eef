/**
 * Store + transport pairs the runtime tests run against. A pair is a factory taking the clock,
 * so another pair (the browser host) plugs in by adding one entry.
 */
import type { Clock } from '../../src/clock.js';
import { openWasmDatabase } from '../../src/sqlite/wasm.js';
import type { ExecutionStore } from '../../src/store/contract.js';
import { InMemoryStore } from '../../src/store/memory.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { Transport } from '../../src/transport/contract.js';
import { InMemoryTransport } from '../../src/transport/memory.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';
import { ROUTES, workerdRuntime } from './workerd-backends.js';

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

/** `runs`: random runs the model check can afford on a pair (default: its own table). */
export const runtimeBackendPairs: { name: string; make: MakeRuntimeBackends; caps?: RuntimeSuiteCaps; runs?: number }[] = [
  {
    name: 'InMemoryStore + InMemoryTransport',
    async make({ clock, maxAttempts }) {
      return { store: new InMemoryStore(), transport: new InMemoryTransport({ clock, maxAttempts }), dispose: async () => {} };
    },
  },
  {
    name: 'SqliteStore + SqliteTransport on one sqlite-wasm database',
    async make({ clock, maxAttempts }) {
      const db = await openWasmDatabase();
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
    },
  },
  ...ROUTES.map(({ route, label }) => ({ name: `a LeaseholdObject in workerd (${label})`, make: workerdRuntime(route), caps: { settlesInProcess: false }, runs: 8 })),
];
