/**
 * The page side of the browser host: `openBrowserDatabase()` starts this tab's host worker and
 * returns a transport and a store that implement the contracts by sending each call to it.
 */
import { ClosedError, StorageError } from '../errors.js';
import type { Execution, ExecutionStore } from '../store/contract.js';
import { type AckAndClaimManyResult, type AckManyResult, type ChangeNotifier, type DeadLetterPolicy, DEFAULT_QUEUE, type Lease, type PublishOptions, type Transport } from '../transport/contract.js';
import { checkChanges, checkExecution } from '../store/checks.js';
import { encodeCommit, encodeStep } from '../store/encode.js';
import { checkPublish, checkPublishItems, checkTransportOptions } from '../transport/shared.js';
import { checkId, checkInteger, checkObject, checkOptions, toJson } from '../validate.js';
import type { CallMessage, HostOptions, HostToPage, OwnerInfo, PageToHost } from './protocol.js';
import type { SqlTraceEntry } from './trace.js';
import { findDatabase, LOST_EVENT, type LostDatabaseDetail, markDatabase, type OpenedAs, requestPersist, type StorageFacts, storageFacts } from './storage.js';
import { remoteStore, remoteTransport } from '../remote/client.js';
import type { Target } from '../remote/methods.js';
import { errorFromWire, type RemoteCall } from '../remote/wire.js';

export type { OwnerInfo } from './protocol.js';
export type { SqlGroupRow, SqlTraceEntry, SqlTraceStatement } from './trace.js';
export type { LostDatabaseDetail, OpenedAs, StorageFacts } from './storage.js';

/** Options of {@link openBrowserDatabase}. */
export interface BrowserDatabaseOptions {
  /**
   * The database's name. Tabs of one origin that open the same name share one database (one of
   * them owns the file; the others forward to it). Letters, digits, `-` and `_`, up to 64.
   */
  name: string;
  /** `'opfs'` (default): kept in the origin private file system. `'memory'`: this tab only, gone on reload. */
  storage?: 'opfs' | 'memory';
  /**
   * `'normal'` (default): a commit survives a crash of the tab or the browser; the last commits
   * may be lost on power failure. `'full'`: every commit survives power loss (about 4× slower).
   */
  durability?: 'normal' | 'full';
  /**
   * The clock every lease and park is measured with, read on this page at each call and sent
   * along. Default `Date.now`. The demo passes a slow-motion clock here.
   */
  clock?: () => number;
  /** The transport's `maxAttempts` (dead letters). Applies when this tab opens the file as owner. */
  maxAttempts?: number;
  /**
   * The queues' `onDeadLetter` (see `TransportOptions.onDeadLetter`), for every queue this
   * database opens; left out, each queue keeps its own (`'continue'` for a new one). Applies
   * when this tab opens the file as owner; a queue kept with another policy then refuses its
   * calls with `QUEUE_MISMATCH`.
   */
  onDeadLetter?: DeadLetterPolicy;
  /** The store's `traceMax`. Applies when this tab opens the file as owner. */
  traceMax?: number;
  /**
   * Record the SQL of the latest claims, acks and nacks — statements, parameters, results, and
   * the queue's `lh_groups` rows before and after — for {@link BrowserDatabase.sqlTrace}. For
   * teaching and debugging; default `false`, and then nothing is recorded and nothing is slower.
   * Applies when this tab opens the file as owner.
   */
  traceSql?: boolean;
}

/**
 * How a page starts its workers, for tests and benchmarks only: not part of
 * {@link BrowserDatabaseOptions}, and not exported by leasehold/browser.
 * @internal
 */
export interface WorkerStarters {
  /** Starts the host worker. */
  createWorker?: () => Worker;
  /**
   * Starts the link broker (a SharedWorker that gives this tab's host a port straight to the
   * owner's); called at open and again each time the broker died (its tab crashed). Returning
   * `null` forwards over the BroadcastChannel only, as where the browser has no SharedWorker.
   * Tests use it to run that path, and to start a broker they can end.
   */
  createBroker?: () => SharedWorker | null;
}

/**
 * An open browser database. `E` is the default queue's event type and `X` the store's execution
 * type, as given to {@link openBrowserDatabase}: leases and loads carry them with no cast.
 */
export interface BrowserDatabase<E = unknown, X extends Execution = Execution> {
  readonly name: string;
  /**
   * How this tab found the database when it opened it: `'new'` (this origin never had it, as far
   * as it knows), `'existing'`, or `'lost'`: this origin had it (a marker in IndexedDB says so)
   * and its file is gone — cleared or evicted — so an empty queue here means lost work, not
   * none. Reported by the open that finds it gone; the next open finds it `'existing'`. Storage
   * `'memory'` is always `'new'`. Clearing all site data removes the marker too (then `'new'`):
   * the server's own checks cover that case.
   */
  readonly opened: OpenedAs;
  /**
   * The database's origin: a random id made with its tables, which every lease of its queues
   * carries (`lease.origin`, with `lease.counter` and `lease.lowWater`), so a server can check
   * that it received each publish. Kept for the database's life; a database made again after a
   * loss has a new one.
   */
  readonly origin: string;
  /**
   * With {@link opened} `'lost'`: the origin of the database that was lost, as the marker kept
   * it (null otherwise, and for a marker written before leasehold kept origins). Tell the server:
   * the numbers of that origin it has not received by now will never come. The open that finds
   * the loss also dispatches the event `'leasehold:lost'` on `globalThis`, its `detail`
   * `{ name, lostOrigin, origin }`, for code that is not handed the database.
   */
  readonly lostOrigin: string | null;
  /** Storage facts from the page: persisted, the origin's usage and quota, the engine, {@link opened}. Never rejects. */
  storage(): Promise<StorageFacts>;
  /**
   * Asks the browser not to evict this origin's storage (`navigator.storage.persist()`, which
   * works from the page only, not in the database's worker): resolves whether it will (false
   * where the browser has no storage manager). Never rejects. Firefox asks the user and resolves
   * only on their answer: do not hold the page up awaiting it.
   */
  persist(): Promise<boolean>;
  /** The default queue, over the shared database. Also a {@link ChangeNotifier}: notices come from every tab. */
  readonly transport: Transport<E> & ChangeNotifier;
  /**
   * Another named queue in the same database: independent of the others (own groups, seqs,
   * round-robin order, keys, dead letters, stats and change notices). `queue('default')` is
   * {@link transport}'s queue. Created on its first call. `Q` is its event type (its own, not `E`).
   * @throws TypeError / RangeError if `name` is not a non-empty string.
   */
  queue<Q = unknown>(name: string): Transport<Q> & ChangeNotifier;
  /** The execution store, over the same database. */
  readonly store: ExecutionStore<X>;
  /** Which tab owns the database file right now. */
  owner(): Promise<OwnerInfo>;
  /** Calls `listener` whenever ownership moves (a tab took over after the owner closed). Returns unsubscribe. */
  onOwnerChange(listener: (owner: OwnerInfo) => void): () => void;
  /**
   * The owner's record of the latest claims, acks and nacks (up to 24, oldest first), when the
   * owner was opened with `traceSql: true`; otherwise an empty array. Reads nothing from the file.
   */
  sqlTrace(): Promise<SqlTraceEntry[]>;
  /** Closes this tab's host. If it owned the file, another open tab takes over. Idempotent. */
  close(): Promise<void>;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Opens (creating if needed) the database `name` in this tab. The type arguments are the app's
 * own: `openBrowserDatabase<OrderEvent, Order>({ name })` gives a `Transport<OrderEvent>` and an
 * `ExecutionStore<Order>` (nothing checks stored data against them at run time).
 *
 * @throws TypeError / RangeError for bad options.
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
  checkOptions('options', options, ['name', 'storage', 'durability', 'clock', 'maxAttempts', 'onDeadLetter', 'traceMax', 'traceSql']);
  if (typeof options.name !== 'string') throw new TypeError('options.name must be a string');
  if (!NAME.test(options.name)) throw new RangeError(`options.name must be 1–64 letters, digits, '-' or '_', got ${JSON.stringify(options.name)}`);
  const storage = options.storage ?? 'opfs';
  if (storage !== 'opfs' && storage !== 'memory') throw new RangeError(`options.storage must be 'opfs' or 'memory', got ${String(storage)}`);
  const durability = options.durability ?? 'normal';
  if (durability !== 'normal' && durability !== 'full') throw new RangeError(`options.durability must be 'normal' or 'full', got ${String(durability)}`);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new TypeError('options.clock must be a function returning milliseconds');
  if (options.maxAttempts !== undefined) checkInteger('options.maxAttempts', options.maxAttempts, 1, Number.MAX_SAFE_INTEGER);
  if (options.traceMax !== undefined) checkInteger('options.traceMax', options.traceMax, 0, Number.MAX_SAFE_INTEGER);
  if (options.onDeadLetter !== undefined) checkTransportOptions({ onDeadLetter: options.onDeadLetter });
  if (options.traceSql !== undefined && typeof options.traceSql !== 'boolean') throw new TypeError('options.traceSql must be a boolean');

  if (!starters.createWorker && typeof Worker === 'undefined') throw notInABrowser();
  const name = options.name;
  // Before the host starts: it creates the file, after which a lost one cannot be told from a new one.
  const { opened, lostOrigin } = await findDatabase(name, storage);
  const createWorker = () => starters.createWorker?.() ?? new Worker(new URL('./host.worker.js', import.meta.url), { type: 'module', name: `leasehold:${name}` });
  const connection = new Connection(createWorker, clock, storage === 'opfs' ? () => startBroker(starters) : undefined);
  const hostOptions: HostOptions = { name: options.name, storage, durability };
  if (options.maxAttempts !== undefined) hostOptions.maxAttempts = options.maxAttempts;
  if (options.onDeadLetter !== undefined) hostOptions.onDeadLetter = options.onDeadLetter;
  if (options.traceMax !== undefined) hostOptions.traceMax = options.traceMax;
  if (options.traceSql) hostOptions.traceSql = true;
  try {
    await connection.open(hostOptions);
  } catch (error) {
    connection.terminate();
    throw error;
  }
  let origin: string;
  try {
    origin = (await connection.call('host', 'origin', [])) as string;
  } catch (error) {
    connection.terminate();
    throw error;
  }
  if (storage === 'opfs') await markDatabase(name, origin);
  if (opened === 'lost') {
    const detail: LostDatabaseDetail = { name, lostOrigin, origin };
    globalThis.dispatchEvent?.(new CustomEvent(LOST_EVENT, { detail }));
  }
  // A shared database only: an in-memory one lives in this tab's worker and would be lost.
  const lifecycle = storage === 'opfs' ? watchLifecycle(connection) : () => {};
  return {
    name: options.name,
    opened,
    origin,
    lostOrigin,
    storage: () => storageFacts(storage, opened),
    persist: requestPersist,
    transport: connection.transport<E>(DEFAULT_QUEUE),
    queue: <Q>(name: string) => {
      checkId('name', name);
      return connection.transport<Q>(name);
    },
    store: remoteStore<X>((call) => connection.call(call.target, call.method, call.args)),
    owner: () => connection.call('host', 'owner', []) as Promise<OwnerInfo>,
    onOwnerChange: (listener) => connection.ownerListeners.add(listener),
    sqlTrace: () => connection.call('host', 'sqlTrace', []) as Promise<SqlTraceEntry[]>,
    close: () => (lifecycle(), connection.close()),
  };
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

/** One page's link to its host worker: numbered calls, answers, notices. */
class Connection {
  readonly #createWorker: () => Worker;
  #worker: Worker;
  /** What the page asked to open, sent again to a new host after {@link resume}. */
  #options?: HostOptions;
  /** The host was ended while the page could not run ({@link suspend}); the next call or resume starts one. */
  #suspended = false;
  readonly #clock: () => number;
  /** Starts (or joins) the link broker: at open, and again whenever the host says it went away. */
  readonly #broker?: () => MessagePort | undefined;
  readonly #prefix = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
  #next = 0;
  readonly #pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  #opened?: { resolve: () => void; reject: (error: unknown) => void };
  #closing?: () => void;
  #closed = false;
  /** Change notice listeners, by queue. */
  readonly changeListeners = new Map<string, ListenerSet<[]>>();
  readonly ownerListeners = new ListenerSet<[OwnerInfo]>();

  constructor(createWorker: () => Worker, clock: () => number, broker?: () => MessagePort | undefined) {
    this.#createWorker = createWorker;
    this.#clock = clock;
    this.#broker = broker;
    this.#worker = this.#start();
  }

  #start(): Worker {
    const worker = this.#createWorker();
    worker.onmessage = (event: MessageEvent<HostToPage>) => this.#receive(event.data);
    worker.onerror = (event) => this.#fail(new StorageError('STORAGE_FAILED', `the leasehold host worker failed: ${event.message || 'it could not start'}`));
    return worker;
  }

  open(options: HostOptions): Promise<void> {
    this.#options = options;
    return new Promise((resolve, reject) => {
      this.#opened = { resolve, reject };
      this.#sendOpen(options);
    });
  }

  #sendOpen(options: HostOptions): void {
    const broker = this.#broker?.();
    this.#worker.postMessage({ kind: 'open', options, broker } satisfies PageToHost, broker ? [broker] : []);
  }

  /** Ends the host worker at once (its lock, pool and ports go with it). */
  terminate(): void {
    this.#worker.terminate();
  }

  /**
   * The page is going into the back/forward cache or being frozen: end the host now, so its Web
   * Lock and OPFS pool go to another tab. A call still waiting may or may not have been applied
   * (as when a tab crashes): it fails saying so.
   */
  suspend(): void {
    if (this.#closed || this.#suspended || !this.#options) return;
    this.#suspended = true;
    this.#worker.terminate();
    this.#fail(
      new StorageError(
        'STORAGE_BUSY',
        'the page went into the back/forward cache or was frozen while this call was in flight; it may or may not have been applied. Check, or retry if it is safe to.',
      ),
    );
  }

  /** The page runs again: a new host opens the database, as a new tab's would (usually as a forwarder now). */
  resume(): void {
    if (this.#closed || !this.#suspended || !this.#options) return;
    this.#suspended = false;
    this.#opened = undefined;
    this.#worker = this.#start();
    this.#sendOpen(this.#options);
  }

  onChange(queue: string, listener: () => void): () => void {
    let listeners = this.changeListeners.get(queue);
    if (!listeners) this.changeListeners.set(queue, (listeners = new ListenerSet<[]>()));
    return listeners.add(listener);
  }

  /** A transport of queue `name` whose calls go to the host worker as messages (each batch is one message, applied there as one transaction). */
  transport<Q>(name: string): Transport<Q> & ChangeNotifier {
    const send = (call: RemoteCall) => this.call(call.target, call.method, call.args, name);
    return remoteTransport<Q>(send, { subscribe: (listener) => this.onChange(name, listener) });
  }

  call(target: Target | 'host', method: string, args: unknown[], queue?: string): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ClosedError(target === 'store' ? 'store' : 'transport'));
    // A page that was hidden and runs on without a pageshow (no event is promised): start again.
    this.resume();
    const id = `${this.#prefix}-${++this.#next}`;
    let now: number;
    try {
      now = this.#clock();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const message: CallMessage = { kind: 'call', id, target, method, args, now };
      if (queue !== undefined && queue !== DEFAULT_QUEUE) message.queue = queue;
      try {
        this.#worker.postMessage(message);
      } catch (error) {
        // Structured clone refuses functions, symbols, DOM nodes…: values the SQL backend would
        // refuse too. Name the offending value the way the backend would have.
        reject(
          explainUnsendable(target, method, args) ??
            new TypeError(`${target}.${method}: an argument cannot be sent to the database worker (${(error as Error).message})`),
        );
        return;
      }
      this.#pending.set(id, { resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#suspended) {
      // No host runs: nothing to close but this side.
      this.#fail(new ClosedError('database'));
      return;
    }
    await new Promise<void>((resolve) => {
      this.#closing = resolve;
      this.#post({ kind: 'close' });
    });
    this.#worker.terminate();
    this.#fail(new ClosedError('database'));
  }

  #post(message: PageToHost): void {
    this.#worker.postMessage(message);
  }

  #receive(message: HostToPage): void {
    switch (message.kind) {
      case 'opened':
        this.#opened?.resolve();
        break;
      case 'open-failed':
        this.#opened?.reject(errorFromWire(message.error));
        break;
      case 'answer': {
        const waiting = this.#pending.get(message.id);
        if (!waiting) break;
        this.#pending.delete(message.id);
        if (message.ok) waiting.resolve(message.value);
        else waiting.reject(errorFromWire(message.error));
        break;
      }
      case 'changed':
        this.changeListeners.get(message.queue)?.emit();
        break;
      case 'owner':
        this.ownerListeners.emit(message.owner);
        break;
      case 'broker': {
        const port = this.#closed ? undefined : this.#broker?.();
        if (port) this.#worker.postMessage({ kind: 'broker', port } satisfies PageToHost, [port]);
        break;
      }
      case 'closed':
        this.#closing?.();
        break;
    }
  }

  #fail(error: unknown): void {
    this.#opened?.reject(error);
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
  }
}

class ListenerSet<A extends unknown[]> {
  readonly #listeners = new Set<(...args: A) => void>();
  add(listener: (...args: A) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const entry = (...args: A) => listener(...args);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }
  emit(...args: A): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(...args);
      } catch (error) {
        void Promise.reject(error);
      }
    }
  }
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

/** The error the SQL backend gives for arguments that cannot even be cloned to reach it. */
function explainUnsendable(target: Target | 'host', method: string, args: unknown[]): Error | undefined {
  try {
    if (target === 'transport' && method === 'publish') {
      checkPublish(args[0], args[2] as PublishOptions | undefined);
      toJson('event', args[1]);
    }
    if (target === 'transport' && method === 'publishMany') {
      checkPublishItems(args[0]).forEach((item, i) => toJson(`items[${i}].event`, item.event));
    }
    if (target === 'store' && (method === 'commit' || method === 'save')) {
      checkExecution(args[0]);
      encodeCommit(args[0], checkChanges(args[1]));
    }
    if (target === 'store' && method === 'appendTrace') {
      checkId('executionId', args[0]);
      checkObject('entry', args[1]);
      encodeStep('entry', args[1]);
    }
  } catch (error) {
    return error as Error;
  }
  return undefined;
}
