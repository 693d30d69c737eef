/**
 * The runtime's public types: what a handler receives and returns, the options of a `Runtime`,
 * and what one `step()` reports.
 *
 * Terminology
 * - **event**: a plain object with a non-empty string `id`. The id is what makes redelivery
 *   safe: the commit that handles an event records `(executionId, event.id)` as processed, and a
 *   redelivered copy is recognised and skipped.
 * - **group**: an execution's events travel in the transport group whose id is the execution id,
 *   so at most one of them is in flight and they are handled oldest first.
 * - **effects**: what a handler returns; they land atomically with the execution's new state.
 * - **control state**: the runtime's own bookkeeping inside each execution, under the reserved
 *   field `$runtime` (suspension, the lease held while suspended, the armed timers).
 */
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import type { WorkerLoopOptions } from '../worker/types.js';

/** An event: any object with a non-empty string `id`. Other fields are the caller's. */
export interface RuntimeEvent {
  id: string;
  [field: string]: unknown;
}

/**
 * What an app's own event type must be: an object with a string `id`. Declare it as a type
 * without an index signature (`{ id: string; type: 'pay'; amount: number }`) and a misspelt
 * field is a type error wherever the event is written or read.
 */
export interface EventBase {
  id: string;
}

/** What reaches a handler: the app's events `E`, and the timeouts and spawned events the runtime makes. */
export type DeliveredEvent<E extends EventBase = RuntimeEvent> = E | TimeoutEvent | SpawnedEvent;

/**
 * An event as {@link Runtime.send} takes it: an `E` whose `id` may be left out (a fresh one is
 * given). Distributes over a union, so each member keeps its own fields.
 */
export type SendEvent<E extends EventBase = RuntimeEvent> = E extends EventBase ? Omit<E, 'id'> & { id?: string } : never;

/** The event a due timer delivers to its execution. Its `id` is {@link timeoutEventId}. */
export interface TimeoutEvent extends RuntimeEvent {
  type: 'timeout';
  path: string;
  fireAt: number;
}

/** The first event a spawned child receives, once the runtime has created it. */
export interface SpawnedEvent extends RuntimeEvent {
  type: 'spawned';
  parentId: string;
  rootPath: string;
  context: Record<string, unknown>;
}

/** An event to send to another execution (`to`) or to nobody in particular (`null`), after the commit. */
export interface EmitEffect {
  to: string | null;
  /** Given a fresh id when it has none, before the commit, so every relay of it carries the same id. */
  event: Record<string, unknown>;
}

/**
 * Arm `path` at an absolute time (`at`) or after a delay from now (`afterMs`), or disarm it
 * (`cancel: true`). Arming a path again replaces its time.
 */
export type TimerEffect = { path: string; at: number } | { path: string; afterMs: number } | { path: string; cancel: true };

/** A child execution to create after the commit; it then receives a {@link SpawnedEvent}. */
export interface SpawnEffect {
  childId: string;
  /** Where the child starts, for the caller's own use; default `'/'`. */
  rootPath?: string;
  /** Copied into the child's `context` field and its spawned event; default `{}`. */
  context?: Record<string, unknown>;
}

/** What a handler returns. Every part is optional; `undefined` means "no effects". */
export interface Effects {
  emit?: EmitEffect[];
  timers?: TimerEffect[];
  spawn?: SpawnEffect[];
  /** Extra fields for this step's trace entry (the runtime always records one). */
  trace?: Record<string, unknown>;
}

/** What a handler learns about the delivery besides the event. */
export interface HandlerInfo {
  /** The runtime's clock when the event was claimed. */
  now: number;
  /** Which delivery of this message this is (1 for the first). */
  attempt: number;
  /**
   * The transport seq of the message being handled: the same on every delivery of it. A publish
   * with `after: seq` waits until this message is acked, that is until this event's commit landed.
   */
  seq: number;
  /** The worker running the handler. */
  workerId: string;
}

/**
 * Applies one event to one execution: mutates `execution` in place (a private copy, so a throw
 * leaves the stored state untouched) and returns the effects. May be async. Throwing means
 * "not handled": the event is retried with back-off.
 */
export type Handler<X extends Execution = Execution, E extends EventBase = RuntimeEvent> = (
  execution: X,
  event: DeliveredEvent<E>,
  info: HandlerInfo,
) => Effects | void | Promise<Effects | void>;

/**
 * Options of {@link Runtime}: those of both worker loops ({@link WorkerLoopOptions}: `workerId`
 * defaults to `runtime-` and a random id, `idleMaxMs` to 1000 since nothing announces a store
 * timer coming due), and a runtime's own. Durations are milliseconds, read with `clock` (use the
 * transport's). `X` is the execution type (from `store`), `E` the app's event type (from `transport`).
 */
export interface RuntimeOptions<X extends Execution = Execution, E extends EventBase = RuntimeEvent> extends WorkerLoopOptions {
  store: ExecutionStore<X>;
  /**
   * The transport the runtime claims from and publishes to. Besides the app's `E`, it carries
   * the runtime's own timeout and spawned events and the events handlers emit.
   */
  transport: Transport<DeliveredEvent<E>>;
  handler: Handler<X, E>;
  /** How long a suspended execution's event is held before it is checked again (> 0). Default 3 600 000. */
  suspendHoldMs?: number;
  /** Outbox entries, spawns or timers handled per relay step (positive integer). Default 100. */
  relayBatch?: number;
  /** After this many claiming steps in a row, the next step relays first (positive integer). Default 16. */
  relayEvery?: number;
  /** Makes event ids. Default `crypto.randomUUID()` where available. */
  newId?: () => string;
  /** Copies an execution before the handler mutates it. Default `structuredClone`. */
  clone?: (execution: X) => X;
  /** Receives emits addressed to nobody (`to: null`); without it they are dropped. */
  onUntargeted?: (event: unknown) => void | Promise<void>;
  /**
   * Receives what goes wrong while {@link Runtime.run} works, with where it happened:
   * `handler` — a delivery the handler failed (`result` is the `failed` step: retried in its
   * `retryInMs`, dead-lettered by the transport's `maxAttempts`), or one whose execution does not
   * exist (`missing`: a `LeaseholdError` of code `NOT_FOUND`); `step` — a step that threw (the
   * store or the transport failing: a database restarting, a connection dropped). Given it,
   * `run()` carries on after such a throw, waiting from `idleMinMs` doubling to `idleMaxMs`
   * between tries, and rejects only with a `ClosedError`. Without it, `run()` rejects with the
   * first throw and handler failures are not reported. Called synchronously; what it throws is
   * ignored.
   */
  onError?: (error: unknown, info: RuntimeErrorInfo) => void;
  /**
   * Receives each step that did something (every {@link StepResult} but `idle`), from `run()`
   * or your own `step()` calls, with when it started and how long it took by `clock`: enough to
   * feed metrics or tracing spans. Called synchronously; what it throws is ignored.
   */
  onEvent?: (event: RuntimeStepEvent) => void;
}

/** A step as {@link RuntimeOptions.onEvent} receives it. */
export interface RuntimeStepEvent {
  result: StepResult;
  /** The runtime's clock when the step began. */
  startedAt: number;
  /** Its duration by the same clock. */
  durationMs: number;
}

/** Fields every step result about one claimed event carries. */
interface Delivery {
  executionId: string;
  eventId: string;
  seq: number;
  attempt: number;
}

/** Where an error {@link RuntimeOptions.onError} receives happened. */
export interface RuntimeErrorInfo {
  phase: 'handler' | 'step';
  /** `handler`: the step that failed (`failed` or `missing`), with the execution, event and next try. */
  result?: StepResult;
}

/**
 * What one {@link Runtime.step} did:
 * - `handled`: the handler ran and its commit landed. `acked` is false when the lease was lost
 *   before the ack (another worker took the event over): the redelivery will be a `duplicate`.
 * - `duplicate`: the event had been handled before; acked without running the handler.
 * - `stale`: a timeout for a timer since re-armed or cancelled; acked without running the handler.
 * - `conflict`: another writer committed the execution first; the event was released for an immediate retry.
 * - `failed`: the handler (or its commit) threw; the event is parked for `retryInMs`.
 * - `missing`: no execution has the event's group id (yet); parked for `retryInMs`.
 * - `foreign`: the execution belongs to a handler wrapper (`owner`: `'leasehold/schedule'` for
 *   the schedules' own) that this runtime's handler is not wrapped with; given back without
 *   spending an attempt, for `retryInMs`, to be taken by a runtime whose handler is.
 * - `suspended`: the execution is suspended; the event is held until `resume()` (or `holdMs`).
 * - `lost`: the lease was lost while the handler ran; nothing was committed.
 * - `spawned` / `relayed` / `timers`: nothing was claimable, so `count` children were created,
 *   outbox entries delivered, or due timers fired.
 * - `idle`: there was nothing to do.
 */
export type StepResult =
  | (Delivery & { kind: 'handled'; acked: boolean })
  | (Delivery & { kind: 'duplicate' | 'stale' | 'conflict' | 'lost' })
  | (Delivery & { kind: 'failed'; error: unknown; retryInMs: number })
  | (Delivery & { kind: 'missing'; retryInMs: number })
  | (Delivery & { kind: 'foreign'; owner: string; retryInMs: number })
  | (Delivery & { kind: 'suspended'; holdMs: number })
  | { kind: 'spawned' | 'relayed' | 'timers'; count: number }
  | { kind: 'idle' };

/** The kinds of {@link StepResult}. */
export type StepKind = StepResult['kind'];
