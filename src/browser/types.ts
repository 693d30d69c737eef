/**
 * The shapes of the browser host's page side: the options of `openBrowserDatabase()`, the
 * database it returns, and the tests' way to start its workers. Apart from the code that opens
 * one because they are most of what a reader of leasehold/browser needs: its API, in one page.
 */
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { ChangeNotifier, DeadLetterPolicy, Transport } from '../transport/contract.js';
import type { HostVersion, OwnerInfo } from './protocol.js';
import type { SqlTraceEntry } from './trace.js';
import type { OpenedAs, StorageFacts } from './storage.js';

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
  /** The transports' `maxEventBytes`: the largest event, in bytes of its JSON (default 1 MiB). Applies when this tab opens the file as owner. */
  maxEventBytes?: number;
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
  /**
   * The app's build id (a release tag, a commit, a bundle hash): announced to the other tabs of
   * the database with this leasehold's schema versions, and reported with {@link
   * BrowserDatabase.onOutdated} to the tabs of older builds. Never ordered: the newest leasehold
   * schema owns the database, whatever the ids. 1–200 characters. One id must name one build:
   * opening while a tab that announces the same id with other schema versions owns the
   * database fails with a RangeError.
   */
  build?: string;
}

/** What {@link BrowserDatabase.onOutdated} and the `'leasehold:outdated'` event report. */
export interface OutdatedDetail {
  /** The database's name. */
  name: string;
  /** This tab's build, as given to {@link openBrowserDatabase} (undefined when none was). */
  build: string | undefined;
  /** The build that owns the database now: its schema versions, and its app build id if its tab gave one. */
  newer: HostVersion;
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
   * loss has a new one. Read from the database, never from whichever tab answered: while a tab
   * of an older leasehold owns the database (one that cannot say, or whose schema has no origin
   * yet) it is null, and it is set once this tab learns it (when a tab of this build or a newer
   * one owns the database). The IndexedDB marker that names a loss is written then too.
   */
  readonly origin: string | null;
  /**
   * With {@link opened} `'lost'`: the origin of the database that was lost, as the marker kept
   * it (null otherwise, and for a marker written before leasehold kept origins). Tell the server:
   * the numbers of that origin it has not received by now will never come. The open that finds
   * the loss also dispatches the event `'leasehold:lost'` on `globalThis`, its `detail`
   * `{ name, lostOrigin, origin }`, for code that is not handed the database (once the new
   * database's origin is known: see {@link origin}).
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
  /**
   * True once a tab of a newer leasehold (a newer schema) owns the database: this tab runs an
   * older build. Its calls are forwarded to that tab while it is open and fail with
   * `SchemaTooNewError` while no tab of a new enough build is; this tab never opens the database
   * again (it would have to migrate it backwards). Prompt the user to reload. Never goes back to
   * false.
   */
  readonly outdated: boolean;
  /**
   * Calls `listener` once, when this tab learns it is {@link outdated}. The same open also
   * dispatches the event `'leasehold:outdated'` on `globalThis` (`detail`: {@link OutdatedDetail})
   * for code the database is not handed to. Returns unsubscribe.
   * @throws TypeError if `listener` is not a function.
   */
  onOutdated(listener: (detail: OutdatedDetail) => void): () => void;
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
