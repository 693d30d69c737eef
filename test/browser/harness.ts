/**
 * Factories that put the conformance suites through `openBrowserDatabase`: real host workers,
 * sqlite-wasm over opfs-sahpool (or in memory), driven by a manual clock on the page.
 */
import { openBrowserDatabase, type BrowserDatabase } from 'leasehold/browser';
import { inject } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { ExecutionStoreOptions } from '../../src/store/contract.js';
import type { TransportOptions } from '../../src/transport/contract.js';
import type { StoreHarness } from '../conformance/store-harness.js';
import type { TransportHarness } from '../conformance/transport.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** The engine of the Vitest project running the file (vitest.config.ts): 'chromium' or 'firefox'. */
    engine: 'chromium' | 'firefox';
  }
}

/**
 * Whether the in-memory variants of the conformance suites run in this engine: in Chromium
 * only. They cross the same host worker and messages as the OPFS variants, which every engine
 * runs; a second engine adds nothing there but minutes (see vitest.config.ts).
 */
export const runsMemoryVariants = inject('engine') === 'chromium';

let databases = 0;

/**
 * A database name no earlier test used, so every test starts empty. Test files run side by side
 * in one origin, each with its own count: a random part keeps two files that ask in the same
 * millisecond from sharing a database (its Web Lock, channel and OPFS pool).
 */
export function freshName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${++databases}`;
}

/** Removes what the sahpool VFS of `name` left in OPFS. */
export async function removeOpfsPool(name: string): Promise<void> {
  const root = await navigator.storage.getDirectory();
  for await (const entryName of (root as unknown as { keys(): AsyncIterable<string> }).keys()) {
    if (entryName.includes(`leasehold-${name}`)) await root.removeEntry(entryName, { recursive: true }).catch(() => undefined);
  }
}

type Storage = 'opfs' | 'memory';

export function browserTransportFactory(storage: Storage) {
  return async (options: Omit<TransportOptions, 'clock'>): Promise<TransportHarness> => {
    const clock = new ManualClock(1_000_000);
    const name = freshName('transport');
    const open = () => openBrowserDatabase({ name, storage, clock: clock.now, ...options });
    let db: BrowserDatabase = await open();
    const harness: TransportHarness = {
      transport: db.transport,
      clock,
      queue: async (queue) => db.queue(queue),
      async dispose() {
        await db.close();
        if (storage === 'opfs') await removeOpfsPool(name);
      },
    };
    if (storage === 'opfs') {
      harness.reopen = async () => {
        await db.close();
        db = await open();
        harness.transport = db.transport;
        return db.transport;
      };
    }
    return harness;
  };
}

export function browserStoreFactory(storage: Storage) {
  return async (options?: ExecutionStoreOptions): Promise<StoreHarness> => {
    const name = freshName('store');
    const open = () => openBrowserDatabase({ name, storage, ...(options ?? {}) });
    let db: BrowserDatabase = await open();
    const harness: StoreHarness = {
      store: db.store,
      clock: new ManualClock(1_000),
      caps: { identity: false, persistent: storage === 'opfs' },
      async dispose() {
        await db.close();
        if (storage === 'opfs') await removeOpfsPool(name);
      },
    };
    if (storage === 'opfs') {
      harness.caps.reopen = async () => {
        await db.close();
        db = await open();
        harness.store = db.store;
        return db.store;
      };
    }
    return harness;
  };
}
