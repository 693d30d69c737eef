/**
 * Factories that put the conformance suites through `openBrowserDatabase`: real host workers,
 * sqlite-wasm over opfs-sahpool (or in memory), driven by a manual clock on the page.
 */
import { openBrowserDatabase, type BrowserDatabase } from 'leasehold/browser';
import { describe, inject } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import type { ExecutionStoreOptions } from '../../src/store/contract.js';
import type { TransportOptions } from '../../src/transport/contract.js';
import type { StoreHarness } from '../conformance/store-harness.js';
import type { TransportHarness } from '../conformance/transport.js';
import type { MakeRuntimeBackends } from '../support/runtime-backends.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** The engine of the Vitest project running the file (vitest.config.ts). */
    engine: 'chromium' | 'firefox' | 'webkit';
  }
}

const engine = inject('engine');

/**
 * Whether the in-memory variants of the conformance suites run in this engine: in WebKit, where
 * they are all that can run (below). They cross the same host worker and messages as the OPFS
 * variants, which Chromium and Firefox run; there they would add nothing but minutes (about
 * 4 of Chromium's 10 on 2 cores, measured in a whole `npm test` at 6cbc67b).
 */
export const runsMemoryVariants = engine === 'webkit';

/**
 * The OPFS call this engine refuses, probed in a worker as the host uses it (the directory, a
 * file, a synchronous access handle); null when all work. Probed in WebKit only: WebKitGTK has
 * no sync access handles (its worker file handle is Apple-only) and under automation its
 * getDirectory() already rejects. Chromium and Firefox have them all, and there a missing one
 * must fail the suites, not skip them.
 */
const opfsMissing: string | null = engine === 'webkit' ? await probeOpfs() : null;

function probeOpfs(): Promise<string | null> {
  const source = `(async () => {
    const name = 'leasehold-probe-' + Math.random().toString(36).slice(2);
    let root, file, handle;
    try { root = await navigator.storage.getDirectory(); } catch (e) { return 'navigator.storage.getDirectory() (' + e.name + ')'; }
    try { file = await root.getFileHandle(name, { create: true }); } catch (e) { return 'FileSystemDirectoryHandle.getFileHandle() (' + e.name + ')'; }
    try { handle = await file.createSyncAccessHandle(); handle.close(); return null; } catch (e) { return 'FileSystemFileHandle.createSyncAccessHandle() (' + e.name + ')'; }
    finally { await root.removeEntry(name).catch(() => {}); }
  })().then((missing) => postMessage(missing));`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
  return new Promise<string | null>((resolve) => (worker.onmessage = (event: MessageEvent<string | null>) => resolve(event.data))).finally(() => worker.terminate());
}

/** Defines the OPFS variant of a suite where the engine has what opfs-sahpool needs; elsewhere the same suite, skipped, naming what is missing. */
export function whereOpfs(define: () => void): void {
  if (opfsMissing === null) define();
  else describe.skip(`skipped in ${engine}: opfs-sahpool needs ${opfsMissing}, which fails here`, define);
}

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

/** Runtime (and workflow) backends through the browser host over OPFS: a fresh database named after `prefix`, removed on dispose. */
export function opfsRuntimeBackends(prefix: string): MakeRuntimeBackends {
  return async ({ clock, maxAttempts }) => {
    const name = freshName(prefix);
    const db = await openBrowserDatabase({ name, clock, ...(maxAttempts === undefined ? {} : { maxAttempts }) });
    return {
      store: db.store,
      transport: db.transport,
      async dispose() {
        await db.close();
        await removeOpfsPool(name);
      },
    };
  };
}
