/**
 * The runtime: the loop that turns a transport and an execution store into an engine. See
 * docs/GUARANTEES.md for what it promises at each point of a step and after a crash.
 */
import { ClosedError, LeaseholdError, LeaseLostError, StoreConflictError } from '../errors.js';
import type { Execution } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import { checkChoice, checkId, checkInteger, checkObject, checkOptions, readClock } from '../validate.js';
import { leaseOf, readControl, writeControl } from './control.js';
import type { Lease } from '../transport/contract.js';
import { IdleTimer, Notices, sleep } from '../worker/idle.js';
import type { AbortSignalLike } from '../worker/types.js';
import { handleLease, type NextClaim } from './handle.js';
import { resolveOptions, type Config } from './options.js';
import { fireTimers, relayOutbox, relaySpawns } from './relay.js';
import type { EventBase, RuntimeErrorInfo, RuntimeEvent, RuntimeOptions, SendEvent, StepResult } from './types.js';

/** What `send()` does for an execution that does not exist: refuse it, or queue the event for it. */
export const IF_MISSING = ['refuse', 'queue'] as const;

/** How often suspend/resume reload and retry when a handler commits under them. */
const CONTROL_RETRIES = 20;
/** `run()` lets the host's own tasks in after this many busy steps in a row. */
const YIELD_EVERY = 64;

/**
 * Drives executions: claims their events from the transport, applies them with the handler,
 * commits the new state with the dedupe mark and the effects in one store transaction, acks.
 * Many runtimes (workers, tabs) may share one store and transport: the transport's leases keep
 * one event per execution in flight, the store's CAS and dedupe marks make a state change land
 * once even when a lease runs out mid-handler and another worker takes over.
 *
 * Guarantees, in short: delivery is at least once; state changes are effectively once (the
 * dedupe mark commits with the state); an execution's events are handled one at a time, oldest
 * first. A handler's own side effects (a fetch) may repeat — give them idempotency keys.
 *
 * @throws TypeError / RangeError from the constructor, naming the first bad option.
 */
export class Runtime<X extends Execution = Execution, E extends EventBase = RuntimeEvent> {
  readonly #cfg: Config<X>;
  #claimStreak = 0;
  /** Inside `run()`: where an ack claims the next event, which the next step handles. */
  #next: NextClaim | undefined;

  /**
   * `X` and `E` are inferred from `store` and `transport`: with a `Transport<OrderEvent>` the
   * handler's event is an `OrderEvent` (or a timeout or spawned event) and `send` takes
   * `OrderEvent`s. An untyped transport (`Transport<unknown>`) gives `E` = {@link RuntimeEvent}.
   */
  constructor(options: RuntimeOptions<X, E>);
  constructor(options: Omit<RuntimeOptions<X>, 'transport'> & { transport: Transport<unknown> });
  constructor(options: RuntimeOptions<X, E>) {
    this.#cfg = resolveOptions(options);
  }

  /** This runtime's worker id. */
  get workerId(): string {
    return this.#cfg.workerId;
  }

  /**
   * Creates execution `id` with `fields` (their own `id`, `version` and `$runtime` are ignored)
   * and returns it as stored (version 1).
   * @throws StoreConflictError if an execution with this id exists.
   * @throws TypeError / RangeError for a bad id or fields.
   */
  async createExecution(id: string, fields: Record<string, unknown> = {}): Promise<X> {
    checkId('id', id);
    checkObject('fields', fields);
    const exe = { ...fields, id, version: 0 } as Execution;
    writeControl(exe, { timers: {} });
    await this.#cfg.store.save(exe as X);
    return exe as X;
  }

  /**
   * Publishes `event` to execution `executionId`'s group and resolves its id and seq. An event
   * without an `id` is sent as a copy with a fresh one. The id is also the publish key: sending
   * the same id again while the first is queued adds nothing, and once it was handled the
   * repeat is recognised as a duplicate. The execution must exist, so that a misspelt id fails
   * here rather than as an event no handler ever takes; `ifMissing: 'queue'` sends anyway, for an
   * execution created later (until then each delivery is a `missing` step, reported to `onError`).
   * @throws LeaseholdError NOT_FOUND if no execution has that id (and `ifMissing` is not `'queue'`).
   * @throws TypeError / RangeError for a bad id, event, priority (0–4) or `ifMissing`.
   */
  async send(executionId: string, event: SendEvent<E>, options?: { priority?: number; ifMissing?: 'refuse' | 'queue' }): Promise<{ id: string; seq: number }> {
    checkId('executionId', executionId);
    checkObject('event', event);
    if (event.id !== undefined) checkId('event.id', event.id);
    checkOptions('options', options, ['priority', 'ifMissing'], true);
    if (options?.priority !== undefined) checkInteger('options.priority', options.priority, 0, 4);
    const ifMissing = checkChoice('options.ifMissing', options?.ifMissing, IF_MISSING, 'refuse');
    if (ifMissing === 'refuse' && (await this.#cfg.store.load(executionId)) === undefined) {
      throw new LeaseholdError('NOT_FOUND', `execution ${JSON.stringify(executionId)} does not exist (send with ifMissing: 'queue' to wait for it)`);
    }
    const sent = (event.id === undefined ? { ...event, id: this.#cfg.newId() } : event) as RuntimeEvent;
    const seq = await this.#cfg.transport.publish(executionId, sent, { priority: options?.priority ?? 0, key: sent.id });
    return { id: sent.id, seq };
  }

  /**
   * Does one unit of work and says what (see {@link StepResult}). Claims an event and handles it;
   * when nothing is claimable (or after `relayEvery` claims in a row, so relays never starve),
   * creates spawned children, else relays the outbox, else fires due timers — one kind per step.
   * @throws whatever the store or transport throws outside the handler (a storage failure, a
   *   closed backend); the event claimed, if any, is redelivered when its lease runs out.
   */
  async step(): Promise<StepResult> {
    const onEvent = this.#cfg.onEvent;
    if (!onEvent) return this.#step();
    const startedAt = readClock(this.#cfg.clock);
    const result = await this.#step();
    if (result.kind !== 'idle') {
      try {
        onEvent({ result, startedAt, durationMs: readClock(this.#cfg.clock) - startedAt });
      } catch {
        // ignored, as documented: an observer must not break the step it observes
      }
    }
    return result;
  }

  async #step(): Promise<StepResult> {
    const cfg = this.#cfg;
    if (this.#claimStreak >= cfg.relayEvery) {
      this.#claimStreak = 0;
      const relayed = await this.#relay();
      if (relayed) return relayed;
    }
    let lease: Lease | null;
    const next = this.#next;
    if (next?.lease) [lease, next.lease] = [next.lease, null];
    else lease = await cfg.transport.claim(cfg.workerId, cfg.visibilityMs);
    if (lease) {
      this.#claimStreak += 1;
      // The ack claims the next event too, unless the next step must relay first.
      return handleLease(cfg, lease, this.#claimStreak < cfg.relayEvery ? next : undefined);
    }
    this.#claimStreak = 0;
    return (await this.#relay()) ?? { kind: 'idle' };
  }

  async #relay(): Promise<StepResult | undefined> {
    const cfg = this.#cfg;
    let count = await relaySpawns(cfg);
    if (count > 0) return { kind: 'spawned', count };
    count = await relayOutbox(cfg);
    if (count > 0) return { kind: 'relayed', count };
    count = await fireTimers(cfg);
    if (count > 0) return { kind: 'timers', count };
    return undefined;
  }

  /**
   * Steps until `signal` aborts, then resolves. Each ack claims the next event in the same call
   * (`ackAndClaim`), as `consume()` does; an event so claimed when the signal aborts is given
   * back at once, its attempt unspent. Idle, it waits for the transport's change notices (where
   * the transport has them), for the next time the transport says a lease or a delay runs out,
   * or for a poll from `idleMinMs` doubling to `idleMaxMs` (store timers come due unannounced),
   * and wakes at once on abort. It never spins.
   * A handler's failure and a step's throw go to `onError` when the runtime has one, and `run()`
   * carries on (see {@link RuntimeOptions.onError}).
   * @throws (rejects with) the first error a step throws when the runtime has no `onError` (the
   *   caller decides whether to restart), and a `ClosedError` either way.
   */
  async run(options: { signal: AbortSignalLike }): Promise<void> {
    checkObject('options', options);
    const signal = options.signal;
    if (typeof signal?.addEventListener !== 'function' || typeof signal.aborted !== 'boolean') {
      throw new TypeError('options.signal must be an AbortSignal');
    }
    const cfg = this.#cfg;
    let wake: (() => void) | undefined;
    const notices = new Notices(cfg.transport, () => wake?.());
    const listen = (listener: () => void): (() => void) => {
      wake = listener;
      return () => void (wake = undefined);
    };
    // A failed stats() read only loses the ready time (the poll still runs); a failing
    // transport surfaces in the next step's claim.
    const idle = new IdleTimer(cfg, () => undefined);
    const next: NextClaim = { lease: null };
    this.#next = next;
    let busy = 0;
    let throws = 0;
    try {
      if (cfg.reclaimOwnLeases) {
        try {
          await cfg.transport.expireLeases(cfg.workerId);
        } catch (error) {
          if (!cfg.onError || error instanceof ClosedError) throw error;
          report(cfg.onError, error, { phase: 'step' });
        }
      }
      while (!signal.aborted) {
        const seen = notices.count;
        let result: StepResult;
        try {
          result = await this.step();
          throws = 0;
        } catch (error) {
          if (!cfg.onError || error instanceof ClosedError) throw error;
          report(cfg.onError, error, { phase: 'step' });
          // A backend that fails now will likely fail at once again: back off, as the idle poll does.
          await sleep(cfg.scheduler, Math.min(cfg.idleMaxMs, cfg.idleMinMs * 2 ** throws++), signal);
          continue;
        }
        if (cfg.onError && (result.kind === 'failed' || result.kind === 'missing')) report(cfg.onError, failureOf(result), { phase: 'handler', result });
        if (result.kind !== 'idle') {
          idle.busy();
          if (result.kind === 'failed' || result.kind === 'missing' || result.kind === 'foreign' || result.kind === 'suspended') idle.changed();
          // Work can keep every step inside microtasks; let timers and I/O of the host in now and then.
          if (++busy >= YIELD_EVERY) {
            busy = 0;
            await sleep(cfg.scheduler, 0, signal);
          }
          continue;
        }
        busy = 0;
        if (notices.count !== seen) continue;
        const { delayMs, polling } = await idle.next();
        if (notices.count !== seen || signal.aborted) continue;
        let woken = false;
        await sleep(cfg.scheduler, delayMs, signal, (listener) => listen(() => ((woken = true), listener())));
        if (!woken) idle.waited(polling);
      }
    } finally {
      this.#next = undefined;
      notices.close();
      // Claimed by the last ack but never handled: back at once, no attempt spent. If the
      // release fails too, the lease runs out and the event comes back then (an attempt spent).
      if (next.lease) await cfg.transport.release(next.lease, 0).catch(() => undefined);
    }
  }

  /**
   * Suspends execution `executionId`: once this resolves, none of its events commits until
   * `resume`. Its next event is held (its lease recorded in the execution, so any worker can
   * release it), keeping the group blocked and losing nothing; a handler already running loses
   * its commit to the CAS and its event is held too. Durable: every worker sharing the store
   * sees it. Suspending a suspended execution does nothing.
   * @throws LeaseholdError (code NOT_FOUND) if there is no such execution.
   * @throws StoreConflictError if the execution kept changing under 20 attempts.
   */
  async suspend(executionId: string): Promise<void> {
    checkId('executionId', executionId);
    await this.#updateControl(executionId, (control) => {
      if (control.suspended) return false;
      control.suspended = true;
      return true;
    });
  }

  /**
   * Resumes execution `executionId`: clears the suspension and releases the held event at once,
   * whichever worker held it. If the process dies between the two, the event flows again when
   * the hold runs out (`suspendHoldMs`). Resuming an execution that is not suspended does nothing.
   * @throws as {@link suspend}.
   */
  async resume(executionId: string): Promise<void> {
    checkId('executionId', executionId);
    let held: ReturnType<typeof readControl>['held'];
    await this.#updateControl(executionId, (control) => {
      if (!control.suspended) return false;
      held = control.held;
      delete control.suspended;
      delete control.held;
      return true;
    });
    if (held) {
      try {
        await this.#cfg.transport.nack(leaseOf(held), 0);
      } catch (error) {
        // Its hold ran out and another worker claimed it: that worker sees the resume.
        if (!(error instanceof LeaseLostError)) throw error;
      }
    }
  }

  /** Load → change the control state → save, retried on conflict. `change` returns whether to save. */
  async #updateControl(executionId: string, change: (control: ReturnType<typeof readControl>) => boolean): Promise<void> {
    const { store, clone } = this.#cfg;
    for (let attempt = 1; ; attempt++) {
      const stored = await store.load(executionId);
      if (stored === undefined) throw new LeaseholdError('NOT_FOUND', `execution ${JSON.stringify(executionId)} does not exist`);
      const control = readControl(stored);
      if (!change(control)) return;
      const exe = clone(stored);
      writeControl(exe, control);
      try {
        await store.save(exe);
        return;
      } catch (error) {
        if (!(error instanceof StoreConflictError) || attempt >= CONTROL_RETRIES) throw error;
      }
    }
  }
}

/** Calls `onError`; what it throws is ignored (a reporter must not stop the loop it reports on). */
function report(onError: NonNullable<RuntimeOptions['onError']>, error: unknown, info: RuntimeErrorInfo): void {
  try {
    onError(error, info);
  } catch {
    // ignored, as documented
  }
}

/** The error a `failed` or `missing` step stands for. */
function failureOf(result: Extract<StepResult, { kind: 'failed' | 'missing' }>): unknown {
  if (result.kind === 'failed') return result.error;
  return new LeaseholdError(
    'NOT_FOUND',
    `execution ${JSON.stringify(result.executionId)} does not exist: event ${JSON.stringify(result.eventId)} is retried in ${result.retryInMs} ms (an emit can overtake the spawn that creates its recipient; create the execution, or the transport's maxAttempts dead-letters the event)`,
  );
}
