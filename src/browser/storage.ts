/**
 * What the page can learn and ask about the storage a browser database lives in, where the APIs
 * are (`navigator.storage.persist()` is not callable in a worker), and whether the database is
 * new, was here before, or was here before and is gone (`lost`). The last needs a fact kept
 * outside OPFS: a marker per database in IndexedDB, written once the database has opened.
 */
/** How a database was found when it was opened; see {@link BrowserDatabase.opened}. */
export type OpenedAs = 'new' | 'existing' | 'lost';

/** What {@link BrowserDatabase.storage} reports. */
export interface StorageFacts {
  /** Whether the browser promised not to evict this origin's storage (`navigator.storage.persisted()`); null where it cannot say. */
  persisted: boolean | null;
  /** `navigator.storage.estimate()`: bytes used by the whole origin and its quota; null where the browser has no estimate. */
  estimate: { usage: number; quota: number } | null;
  /** Where the database is kept: `'opfs'` (the origin private file system, opfs-sahpool) or `'memory'`. */
  engine: 'opfs' | 'memory';
  /** As {@link BrowserDatabase.opened}. */
  opened: OpenedAs;
}

type StorageManagerLike = Partial<Pick<StorageManager, 'persist' | 'persisted' | 'estimate' | 'getDirectory'>>;
const manager = (): StorageManagerLike | undefined => (typeof navigator === 'undefined' ? undefined : navigator.storage);

/** The storage facts of a database opened as `opened` on `engine`. Never rejects: what the browser cannot say is null. */
export async function storageFacts(engine: 'opfs' | 'memory', opened: OpenedAs): Promise<StorageFacts> {
  const storage = manager();
  const [persisted, estimate] = await Promise.all([storage?.persisted?.(), storage?.estimate?.()].map((p) => p?.catch(() => null)));
  const { usage = 0, quota = 0 } = (estimate ?? {}) as StorageEstimate;
  return { persisted: (persisted as boolean | undefined) ?? null, estimate: estimate ? { usage, quota } : null, engine, opened };
}

/**
 * Asks the browser to keep this origin's storage (`navigator.storage.persist()`): true if it
 * will. Chrome and Edge decide without asking (engagement, an installed app, a bookmark);
 * Firefox asks the user; Safari grants it to installed web apps. Resolves false where the
 * browser refuses or has no storage manager; never rejects.
 */
export async function requestPersist(): Promise<boolean> {
  return (await manager()?.persist?.().catch(() => false)) ?? false;
}

const MARKERS = { db: 'leasehold-markers', store: 'databases' } as const;

/** Runs `body` on the marker store; resolves undefined where IndexedDB is missing or fails (a private window, say). */
function markers<T>(mode: IDBTransactionMode, body: (store: IDBObjectStore) => IDBRequest<T>): Promise<T | undefined> {
  return new Promise((resolve) => {
    const run = (step: () => void) => () => {
      try {
        step();
      } catch {
        resolve(undefined);
      }
    };
    run(() => {
      const open = indexedDB.open(MARKERS.db, 1);
      open.onupgradeneeded = run(() => open.result.createObjectStore(MARKERS.store));
      open.onerror = () => resolve(undefined);
      open.onsuccess = run(() => {
        const idb = open.result;
        const request = body(idb.transaction(MARKERS.store, mode).objectStore(MARKERS.store));
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => resolve(undefined);
        idb.close(); // takes effect once the transaction is done
      });
    })();
  });
}

/** What {@link findDatabase} found: how the database opens, and the origin of the one that was lost. */
export interface FoundDatabase {
  opened: OpenedAs;
  /** With `'lost'`: the lost database's origin, as its marker kept it (null for a marker written before leasehold kept origins). */
  lostOrigin: string | null;
}

/** The event {@link LOST_EVENT} carries in its `detail`. */
export interface LostDatabaseDetail {
  /** The database's name. */
  name: string;
  /** The origin of the database that was lost (null when its marker did not keep one). */
  lostOrigin: string | null;
  /** The origin of the new, empty database made in its place. */
  origin: string;
}

/** The name of the event `openBrowserDatabase` dispatches on `globalThis` when it finds a database lost. */
export const LOST_EVENT = 'leasehold:lost';

/**
 * Before the database `name` opens: is its OPFS pool there, and did this origin have it before?
 * Pool there: `'existing'`. Not there, but a marker says it was: `'lost'`. Neither: `'new'`.
 */
export async function findDatabase(name: string, engine: 'opfs' | 'memory'): Promise<FoundDatabase> {
  if (engine === 'memory') return { opened: 'new', lostOrigin: null };
  // opfs-sahpool keeps the pool `leasehold-<name>` in the directory `.leasehold-<name>` (opfs.ts).
  const present = await manager()?.getDirectory?.()
    .then((root) => root.getDirectoryHandle(`.leasehold-${name}`))
    .then(() => true, () => false);
  if (present) return { opened: 'existing', lostOrigin: null };
  const marker = (await markers('readonly', (store) => store.get(name))) as { origin?: unknown } | undefined;
  if (marker === undefined) return { opened: 'new', lostOrigin: null };
  return { opened: 'lost', lostOrigin: typeof marker?.origin === 'string' ? marker.origin : null };
}

/** After the database `name` opened: remember that this origin has it, and the database's origin. */
export async function markDatabase(name: string, origin: string): Promise<void> {
  await markers('readwrite', (store) => store.put({ since: Date.now(), origin }, name));
}
