/**
 * leasehold: durable, lease-based work queues and execution state for the browser (WASM SQLite
 * on OPFS), edge runtimes, Node, and memory. This entry holds the contracts, the errors, the
 * clock, the in-memory and SQL backends and the runtime; it loads no SQLite package itself
 * (the drivers live in `leasehold/sqlite-wasm` and `leasehold/better-sqlite3`).
 */
export { ClosedError, LeaseholdError, LeaseLostError, SchemaTooNewError, StorageError, StoreConflictError } from './errors.js';
export type { LeaseholdErrorCode } from './errors.js';
export { ManualClock, systemClock } from './clock.js';
export type { Clock } from './clock.js';
export type { SqlDatabase, SqlRow, SqlStatement, SqlValue } from './sqlite/driver.js';

// The transport: a durable queue of events in groups, delivered under leases.
export { InMemoryTransport, type InMemoryTransportOptions } from './transport/memory.js';
export { SqliteTransport } from './transport/sqlite.js';
export { DEFAULT_QUEUE, isChangeNotifier, MAX_BATCH, MESSAGE_STATES } from './transport/contract.js';
// One queue over N transports (N Durable Objects, N named queues): a group lives in the part its
// id hashes to. Exported here only: it works over any transports, remote or local.
export { groupHash, spreadTransport } from './transport/spread.js';
export type {
  AckAndClaimManyResult,
  AfterGroup,
  AckManyResult,
  ChangeNotifier,
  ClaimManyOptions,
  ClaimOptions,
  DeadLetter,
  DeadLetterPolicy,
  DuplicatePolicy,
  GroupInspection,
  GroupSnapshot,
  Lease,
  MessageSnapshot,
  MessageState,
  MessageWindow,
  PublishItem,
  PublishOptions,
  Removed,
  RemoveOptions,
  Transport,
  TransportOptions,
  TransportSnapshot,
  TransportStats,
} from './transport/contract.js';

// What both worker loops (consume() and the Runtime) take: timers, a stop signal, a back-off.
export type { AbortSignalLike, BackoffOptions, Scheduler, WorkerLoopOptions } from './worker/types.js';

// consume(): the worker loop for the plain queue, on any transport.
export { consume } from './consume/consume.js';
export { RejectError, RetryLaterError } from './consume/outcomes.js';
export type { ConsumeEvent } from './consume/events.js';
export type { ConsumeErrorInfo, ConsumeHandler, ConsumeOptions, ConsumePhase, ConsumeSignal, Consumer, ConsumerState, ConsumerStatus, HandlerContext } from './consume/types.js';

// The execution store: per-entity workflow state with a transactional outbox, timers, spawns and a trace.
export { InMemoryStore } from './store/memory.js';
export { SqliteStore } from './store/sqlite.js';
export { DEFAULT_TRACE_MAX } from './store/contract.js';
export type {
  CommitChanges,
  DueTimer,
  EmitChange,
  Execution,
  ExecutionStore,
  ExecutionStoreOptions,
  OutboxEntry,
  SpawnChange,
  SpawnEntry,
  TimerChange,
  TraceStep,
} from './store/contract.js';

// The runtime: claims events, runs the handler, commits state and effects, acks; relays the outbox, timers and spawns.
export { Runtime } from './runtime/runtime.js';
export { CONTROL_FIELD, timeoutEventId } from './runtime/control.js';
export type {
  DeliveredEvent,
  EmitEffect,
  EventBase,
  Effects,
  Handler,
  HandlerInfo,
  RuntimeErrorInfo,
  RuntimeEvent,
  RuntimeOptions,
  RuntimeStepEvent,
  SendEvent,
  SpawnedEvent,
  SpawnEffect,
  StepKind,
  StepResult,
  TimeoutEvent,
  TimerEffect,
} from './runtime/types.js';
