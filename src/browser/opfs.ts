/**
 * Opening the database in the owner's worker: sqlite-wasm over the `opfs-sahpool` VFS (no
 * COOP/COEP headers needed, 20–100× faster per transaction than the `opfs` VFS), or in memory.
 * @internal
 */
import { StorageError } from '../errors.js';
import type { SqlDatabase } from '../sqlite/driver.js';
import { fromWasmDatabase, loadSqliteWasm } from '../sqlite/wasm.js';
import { coalesceWalWrites, type WalCoalescing } from './coalesce.js';
import type { HostOptions } from './protocol.js';

/** The sahpool handle, kept so the owner can hand the files over on close. */
export interface OpenedDatabase {
  db: SqlDatabase;
  release(): void;
}

const OPEN_ATTEMPTS = 12;

export async function openHostDatabase(options: HostOptions): Promise<OpenedDatabase> {
  const sqlite3 = await loadSqliteWasm();
  if (options.storage === 'memory') {
    const db = fromWasmDatabase(sqlite3, new sqlite3.oo1.DB(':memory:', 'c'));
    return { db, release: () => {} };
  }
  if (typeof navigator === 'undefined' || typeof navigator.storage?.getDirectory !== 'function') {
    throw new StorageError(
      'STORAGE_UNAVAILABLE',
      // The host checks this before the election (election.ts, unavailableError); this is for a
      // worker that lost it since. Not a secure-context hint: WebKit lacks it on secure pages too.
      `this browser offers no OPFS (navigator.storage.getDirectory) to its workers, so database ${JSON.stringify(options.name)} cannot be kept. ` +
        "Use a browser that has it, or open the database with storage: 'memory'.",
    );
  }
  if (!hasSyncAccessHandles()) throw noSyncAccessHandles(options.name);
  const pool = await installPool(sqlite3, `leasehold-${options.name}`, options.name);
  // Installed once per worker: a host that handed the database over and opens it again finds the pool it paused.
  if (pool.isPaused()) await pool.unpauseVfs();
  let raw;
  try {
    raw = new pool.OpfsSAHPoolDb('/leasehold.db');
  } catch (error) {
    pool.pauseVfs();
    throw new StorageError('STORAGE_FAILED', `could not open database ${JSON.stringify(options.name)} in OPFS: ${String(error)}`, { cause: error });
  }
  const db = fromWasmDatabase(sqlite3, raw);
  let wal: WalCoalescing | null;
  try {
    // WAL on sahpool needs exclusive locking set before the first read of the file.
    db.exec(`PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
    // A first read opens the WAL file; from then on each commit reaches it in one file call.
    db.prepare('PRAGMA schema_version').get();
    wal = coalesceWalWrites(sqlite3, raw);
  } catch (error) {
    db.close();
    pool.pauseVfs();
    throw error;
  }
  return {
    db,
    release: () => {
      // Only once the database is closed (its WAL file closed through the wrapper): an open one
      // would still call into it.
      if (db.closed) {
        wal?.release();
        wal = null;
      }
      // Closes the pool's file handles so the next owner (another tab) can open them at once.
      if (!pool.isPaused()) pool.pauseVfs();
    },
  };
}

type Sqlite3 = Awaited<ReturnType<typeof loadSqliteWasm>>;

/** `FileSystemFileHandle.createSyncAccessHandle` exists in this worker (it may still refuse: see installPool). */
function hasSyncAccessHandles(): boolean {
  const handle = (globalThis as { FileSystemFileHandle?: unknown }).FileSystemFileHandle as { prototype?: { createSyncAccessHandle?: unknown } } | undefined;
  return typeof handle?.prototype?.createSyncAccessHandle === 'function';
}

const MEMORY_ADVICE = "or open the database with storage: 'memory' (this tab only, gone on reload).";

/**
 * OPFS without synchronous access handles: the sahpool VFS cannot keep a file there. WebKit on
 * Linux (WebKitGTK, WPE) has the method and refuses every call (NotSupportedError): its worker
 * file handle exists on Apple platforms only.
 */
function noSyncAccessHandles(name: string, cause?: unknown): StorageError {
  return new StorageError(
    'STORAGE_UNAVAILABLE',
    `this browser's OPFS offers no synchronous access handles (FileSystemFileHandle.createSyncAccessHandle) to its workers, so database ${JSON.stringify(name)} cannot be kept. ` +
      `Chrome/Edge 108+, Firefox 111+ and Safari 16.4+ have them; WebKit on Linux (WebKitGTK, WPE) does not. Use one of those, ${MEMORY_ADVICE}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Installs the pool, retrying while the previous owner's handles are still being released
 * (a closing tab lets go of them a little after its lock: NoModificationAllowedError).
 * Exported for the benchmark, which opens its databases as the host does.
 * @internal
 */
export async function installPool(sqlite3: Sqlite3, name: string, database: string) {
  let lastError: unknown;
  for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
    try {
      // preserveOnInitFailure: without it a failed install deletes the pool directory — data.
      // forceReinitIfPreviouslyFailed: a failed install is cached; retrying needs it (missing from the .d.ts).
      return await sqlite3.installOpfsSAHPoolVfs({ name, preserveOnInitFailure: true, forceReinitIfPreviouslyFailed: attempt > 0 } as Parameters<Sqlite3['installOpfsSAHPoolVfs']>[0]);
    } catch (error) {
      lastError = error;
      if ((error as { name?: string }).name !== 'NoModificationAllowedError') break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
    }
  }
  const name_ = (lastError as { name?: string }).name;
  if (name_ === 'NoModificationAllowedError') {
    throw new StorageError('STORAGE_BUSY', `database ${JSON.stringify(name)} is held open by another page or worker that does not let go. Close other tabs of this site and retry.`, { cause: lastError });
  }
  if (name_ === 'NotSupportedError') throw noSyncAccessHandles(database, lastError);
  if (name_ === 'SecurityError') {
    // Firefox refuses OPFS in a private window this way; so do browsers where the user blocked site data.
    throw new StorageError(
      'STORAGE_UNAVAILABLE',
      `the browser refuses OPFS to this page (SecurityError), so database ${JSON.stringify(database)} cannot be kept: a private window (Firefox, Safari) has no OPFS, nor has a site whose data the user blocked. ` +
        `Open the page in a normal window, allow this site to store data, ${MEMORY_ADVICE}`,
      { cause: lastError },
    );
  }
  if (name_ === 'QuotaExceededError') {
    throw new StorageError('STORAGE_FULL', `the browser refused storage for ${JSON.stringify(name)} (quota exceeded). Free space or clear site data, then retry.`, { cause: lastError });
  }
  // Something else: find which OPFS call this browser refuses, and name it.
  const refused = await refusedOpfsCall();
  if (refused?.call === 'createSyncAccessHandle' && refused.error === 'NotSupportedError') throw noSyncAccessHandles(database, lastError);
  const which = refused ? ` (${refused.call}() fails here with ${refused.error})` : '';
  throw new StorageError(
    'STORAGE_UNAVAILABLE',
    `OPFS could not be opened for database ${JSON.stringify(database)}${which}: ${String(lastError).replace(/\.+$/, '')}. The browser keeps no usable origin private file system for this page (storage switched off or ephemeral, as under WebKit's automation). Use a normal browser window, ${MEMORY_ADVICE}`,
    { cause: lastError },
  );
}

/** The first OPFS call a sahpool needs that fails here, and its error's name; undefined if all work. */
async function refusedOpfsCall(): Promise<{ call: string; error: string } | undefined> {
  const name = (error: unknown) => String((error as { name?: unknown }).name ?? error);
  let root: FileSystemDirectoryHandle;
  try {
    root = await navigator.storage.getDirectory();
  } catch (error) {
    return { call: 'navigator.storage.getDirectory', error: name(error) };
  }
  const probe = '.leasehold-opfs-probe';
  try {
    const file = await root.getFileHandle(probe, { create: true });
    try {
      const handle = await (file as unknown as { createSyncAccessHandle(): Promise<{ close(): void }> }).createSyncAccessHandle();
      handle.close();
    } catch (error) {
      return { call: 'createSyncAccessHandle', error: name(error) };
    }
  } catch (error) {
    return { call: 'getFileHandle', error: name(error) };
  } finally {
    await root.removeEntry(probe).catch(() => undefined);
  }
  return undefined;
}

/**
 * sqlite-wasm reports every failed OPFS write as SQLITE_IOERR, a quota error included (it sees a
 * short write). After such a failure, find out whether the origin is out of space by trying to
 * write a little to a scratch file (estimate() is no help: it may not reflect the quota that is
 * enforced), and if so say so, and what to do. Any other error passes through unchanged.
 */
export async function explainStorageFailure(error: unknown, name: string): Promise<unknown> {
  if (!(error instanceof StorageError) || error.code !== 'STORAGE_FAILED' || !(await outOfSpace())) return error;
  return new StorageError(
    'STORAGE_FULL',
    `database ${JSON.stringify(name)} could not write: this site's browser storage quota is used up. ` +
      'The transaction was rolled back. Free space (delete data you no longer need, or ask the user to clear other site data) and retry.',
    { cause: error },
  );
}

const PROBE = '.leasehold-space-probe';

async function outOfSpace(): Promise<boolean> {
  let root: FileSystemDirectoryHandle;
  try {
    root = await navigator.storage.getDirectory();
  } catch {
    return false;
  }
  let handle: { write(data: Uint8Array, options: { at: number }): number; close(): void } | undefined;
  try {
    const file = await root.getFileHandle(PROBE, { create: true });
    handle = await (file as unknown as { createSyncAccessHandle(): Promise<NonNullable<typeof handle>> }).createSyncAccessHandle();
    const bytes = new Uint8Array(256 * 1024);
    return handle.write(bytes, { at: 0 }) < bytes.length;
  } catch (error) {
    return (error as { name?: string }).name === 'QuotaExceededError';
  } finally {
    handle?.close();
    await root.removeEntry(PROBE).catch(() => undefined);
  }
}
