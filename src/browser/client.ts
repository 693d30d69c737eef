/**
 * The page side of the browser host: `openBrowserDatabase()` starts this tab's host worker and
 * returns a transport and a store that implement the contracts by sending each call to it.
 *
 * This file checks the options, opens the database and watches the page's lifecycle; the link
 * to the worker is in `connection.ts`, the public shapes in `types.ts`.
 */
import { StorageError } from '../errors.js';
import type { Execution } from '../store/contract.js';
import { DEFAULT_QUEUE } from '../transport/contract.js';
import { checkTransportOptions } from '../transport/shared.js';
import { checkId, checkInteger, checkOptions } from '../validate.js';
import type { HostOptions, OwnerInfo } from './protocol.js';
import type { SqlTraceEntry } from './trace.js';
import { findDatabase, LOST_EVENT, type LostDatabaseDetail, markDatabase, requestPersist, storageFacts } from './storage.js';
import { remoteStore } from '../remote/client.js';
import { Connection } from './connection.js';
import type { BrowserDatabase, BrowserDatabaseOptions, OutdatedDetail, WorkerStarters } from './types.js';

export type { OwnerInfo } from './protocol.js';
export type { SqlGroupRow, SqlTraceEntry, SqlTraceStatement } from './trace.js';
export type { LostDatabaseDetail, OpenedAs, StorageFacts } from './storage.js';
export type { BrowserDatabase, BrowserDatabaseOptions, OutdatedDetail, WorkerStarters } from './types.js';
export type { HostVersion } from './protocol.js';

/** The name of the event `openBrowserDatabase` dispatches on `globalThis` when a tab of a newer build owns the database. */
const OUTDATED_EVENT = 'leasehold:outdated';

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Opens (creating if needed) the database `name` in this tab. The type arguments are the app's
 * own: `openBrowserDatabase<OrderEvent, Order>({ name })` gives a `Transport<OrderEvent>` and an
 * `ExecutionStore<Order>` (nothing checks stored data against them at run time).
 *
 * @throws TypeError / RangeError for bad options (a `build` that is not a string: TypeError);
 *   RangeError when the tab that owns the database announces this `build` with other schema versions.
 * @throws SchemaTooNewError when a newer leasehold wrote the database and no tab of a build that
 *   can open it is open; the data is untouched.
 * @throws StorageError when the database cannot be opened: OPFS unavailable (not a secure
 *   context), quota exceeded, a file that is not a database, or a tab that holds it and does
 *   not answer. The message says what to do.
 */
export function openBrowserDatabase<E = unknown, X extends Execution = Execution>(options: BrowserDatabaseOptions): Promise<BrowserDatabase<E, X>> {
  return openBrowserDatabaseWith<E, X>(options, {});
}

/**
 * {@link openBrowserDatabase}, with the page's workers started by `starters` where given: the
 * tests' and benchmarks' way in (leasehold/browser does not export it).
 * @internal
 */
export async function openBrowserDatabaseWith<E = unknown, X extends Execution = Execution>(options: BrowserDatabaseOptions, starters: WorkerStarters): Promise<BrowserDatabase<E, X>> {
  checkOptions('options', options, ['name', 'storage', 'durability', 'clock', 'maxAttempts', 'maxEventBytes', 'onDeadLetter', 'traceMax', 'traceSql', 'build']);
  if (typeof options.name !== 'string') throw new TypeError('options.name must be a string');
  if (!NAME.test(options.name)) throw new RangeError(`options.name must be 1–64 letters, digits, '-' or '_', got ${JSON.stringify(options.name)}`);
  const storage = options.storage ?? 'opfs';
  if (storage !== 'opfs' && storage !== 'memory') throw new RangeError(`options.storage must be 'opfs' or 'memory', got ${String(storage)}`);
  const durability = options.durability ?? 'normal';
  if (durability !== 'normal' && durability !== 'full') throw new RangeError(`options.durability must be 'normal' or 'full', got ${String(durability)}`);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new TypeError('options.clock must be a function returning milliseconds');
  if (options.maxAttempts !== undefined) checkInteger('options.maxAttempts', options.maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  if (options.maxEventBytes !== undefined) checkInteger('options.maxEventBytes', options.maxEventBytes, 1, Number.MAX_SAFE_INTEGER);
  if (options.traceMax !== undefined) checkInteger('options.traceMax', options.traceMax, 0, Number.MAX_SAFE_INTEGER);
  if (options.onDeadLetter !== undefined) checkTransportOptions({ onDeadLetter: options.onDeadLetter });
  if (options.traceSql !== undefined && typeof options.traceSql !== 'boolean') throw new TypeError('options.traceSql must be a boolean');
  if (options.build !== undefined && typeof options.build !== 'string') throw new TypeError(`options.build must be a string (the app's build id), got ${typeof options.build}`);
  if (options.build !== undefined && (options.build.length === 0 || options.build.length > 200)) throw new RangeError(`options.build must be 1–200 characters, got ${options.build.length}`);

  if (!starters.createWorker && typeof Worker === 'undefined') throw notInABrowser();
  const name = options.name;
  // Before the host starts: it creates the file, after which a lost one cannot be told from a new one.
  const { opened, lostOrigin } = await findDatabase(name, storage);
  const createWorker = () => starters.createWorker?.() ?? new Worker(new URL('./host.worker.js', import.meta.url), { type: 'module', name: `leasehold:${name}` });
  const connection = new Connection(createWorker, clock, storage === 'opfs' ? () => startBroker(starters) : undefined);
  const hostOptions: HostOptions = { name: options.name, storage, durability };
  if (options.maxAttempts !== undefined) hostOptions.maxAttempts = options.maxAttempts;
  if (options.maxEventBytes !== undefined) hostOptions.maxEventBytes = options.maxEventBytes;
  if (options.onDeadLetter !== undefined) hostOptions.onDeadLetter = options.onDeadLetter;
  if (options.traceMax !== undefined) hostOptions.traceMax = options.traceMax;
  if (options.traceSql) hostOptions.traceSql = true;
  if (options.build !== undefined) hostOptions.build = options.build;
  const outdated = new Set<(detail: OutdatedDetail) => void>();
  connection.outdatedListeners.add((newer) => {
    const detail: OutdatedDetail = { name, build: options.build, newer };
    for (const listener of [...outdated]) listener(detail);
    globalThis.dispatchEvent?.(new CustomEvent(OUTDATED_EVENT, { detail }));
  });
  try {
    await connection.open(hostOptions);
  } catch (error) {
    connection.terminate();
    throw error;
  }
  let origin: string | null = null;
  /** Asks the owner for the database's origin; the first time one comes, keeps it, marks the database and reports a loss. */
  const learnOrigin = async (): Promise<void> => {
    if (origin !== null) return;
    const found = await askOrigin(connection);
    if (found === null || origin !== null) return;
    origin = found;
    if (storage === 'opfs') await markDatabase(name, found);
    if (opened === 'lost') {
      const detail: LostDatabaseDetail = { name, lostOrigin, origin: found };
      globalThis.dispatchEvent?.(new CustomEvent(LOST_EVENT, { detail }));
    }
  };
  try {
    await learnOrigin();
  } catch (error) {
    connection.terminate();
    throw error;
  }
  // Not known yet (an older build owns the database): a later owner may be this tab or a newer one.
  const stopLearning = connection.ownerListeners.add(() => {
    if (origin === null) learnOrigin().catch(() => undefined);
    else stopLearning();
  });
  // A shared database only: an in-memory one lives in this tab's worker and would be lost.
  const lifecycle = storage === 'opfs' ? watchLifecycle(connection) : () => {};
  return {
    name: options.name,
    opened,
    get origin() {
      return origin;
    },
    lostOrigin,
    storage: () => storageFacts(storage, opened),
    persist: requestPersist,
    transport: connection.transport<E>(DEFAULT_QUEUE),
    queue: <Q>(name: string) => {
      checkId('name', name);
      return connection.transport<Q>(name);
    },
    store: remoteStore<X>((call) => connection.call(call.target, call.method, call.args)),
    get outdated() {
      return connection.outdated !== undefined;
    },
    onOutdated: (listener) => {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      outdated.add(listener);
      return () => void outdated.delete(listener);
    },
    owner: () => connection.call('host', 'owner', []) as Promise<OwnerInfo>,
    onOwnerChange: (listener) => connection.ownerListeners.add(listener),
    sqlTrace: () => connection.call('host', 'sqlTrace', []) as Promise<SqlTraceEntry[]>,
    close: () => (lifecycle(), connection.close()),
  };
}

/** An origin as the database makes them (16 random bytes, hex). */
const ORIGIN = /^[0-9a-f]{32}$/;

/**
 * The database's origin as the owner reads it, or null when the owner cannot say: a tab of an
 * older leasehold owns the database (one from before `host.origin` answered any host method with
 * its SQL trace; a newer one refuses an unknown method), or its schema has no origin yet.
 */
async function askOrigin(connection: Connection): Promise<string | null> {
  let answer: unknown;
  try {
    answer = await connection.call('host', 'origin', []);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'UNKNOWN_METHOD') return null;
    throw error;
  }
  return typeof answer === 'string' && ORIGIN.test(answer) ? answer : null;
}

/**
 * Lets this tab's host go while the page cannot run, and starts it again when it can: a page in
 * the back/forward cache (`pagehide` with `persisted`, WebKit and Firefox keep such pages; a
 * Web Lock held by one is held until it is evicted, minutes later) or frozen (`freeze`, Chromium's
 * page lifecycle: background tabs on mobile). Ending the host worker releases the database's Web
 * Lock and the OPFS pool at once, so another tab takes over; on `pageshow` / `resume` a new host
 * joins as any new tab does (a forwarder, or the owner if no other tab is open). Returns the
 * unsubscribe.
 */
function watchLifecycle(connection: Connection): () => void {
  const scope = globalThis as { addEventListener?: Window['addEventListener']; removeEventListener?: Window['removeEventListener'] };
  if (typeof scope.addEventListener !== 'function' || typeof scope.removeEventListener !== 'function' || !('onpagehide' in globalThis)) return () => {};
  const hide = (event: Event) => void ((event as PageTransitionEvent).persisted && connection.suspend());
  const show = (event: Event) => void ((event as PageTransitionEvent).persisted && connection.resume());
  const freeze = () => connection.suspend();
  const resume = () => connection.resume();
  scope.addEventListener('pagehide', hide);
  scope.addEventListener('pageshow', show);
  scope.addEventListener('freeze', freeze);
  scope.addEventListener('resume', resume);
  return () => {
    scope.removeEventListener!('pagehide', hide);
    scope.removeEventListener!('pageshow', show);
    scope.removeEventListener!('freeze', freeze);
    scope.removeEventListener!('resume', resume);
  };
}

/**
 * leasehold/browser imported where there are no web workers (Node, a test runner's Node
 * environment, a server render): say so and where to go, instead of `Worker is not defined`.
 */
function notInABrowser(): StorageError {
  const node = (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node;
  const where = typeof node === 'string' ? 'Node' : 'this runtime';
  return new StorageError(
    'STORAGE_UNAVAILABLE',
    `leasehold/browser runs in a browser page or worker, and ${where} has no Worker to host the database in. ` +
      "Outside a browser use leasehold's own backends: leasehold/better-sqlite3 or leasehold/sqlite-wasm in Node, InMemoryTransport and InMemoryStore in tests; " +
      "in a test runner, run the test in a browser (e.g. Vitest browser mode). During a server render, open the database only in the browser (in an effect or an onMount).",
  );
}

/** The page's port to the link broker (see broker.ts), or none: then calls take the BroadcastChannel. */
function startBroker(starters: WorkerStarters): MessagePort | undefined {
  try {
    if (starters.createBroker) return starters.createBroker()?.port;
    // SharedWorker is missing on Chrome for Android; some sandboxed frames refuse to start one.
    if (typeof SharedWorker === 'undefined') return undefined;
    return new SharedWorker(new URL('./broker.worker.js', import.meta.url), { type: 'module', name: 'leasehold:broker' }).port;
  } catch {
    return undefined;
  }
}
