/**
 * One claimed event, start to finish: load → dedupe → suspension → stale timeout → handler →
 * commit (with the dedupe mark) → ack. Every way out releases or acks the lease, or leaves it
 * to run out only when the store itself failed (the error propagates to the caller). Inside
 * `run()` the ack also claims the next event (`ackAndClaim`: one transaction where two calls
 * pay two), as `consume()` does.
 * @internal
 */
import { ClosedError, LeaseLostError, StoreConflictError } from '../errors.js';
import type { Execution } from '../store/contract.js';
import type { Lease } from '../transport/contract.js';
import { isId, readClock, reasonFrom } from '../validate.js';
import { Kept } from '../worker/keeper.js';
import { retryDelay } from '../worker/options.js';
import { isTimeoutFor, ownersOf, readControl, writeControl, type ControlState } from './control.js';
import { toChanges } from './effects.js';
import type { Config } from './options.js';
import type { RuntimeEvent, StepResult } from './types.js';

interface Delivery {
  executionId: string;
  eventId: string;
  seq: number;
  attempt: number;
}

/** Where `run()` wants the event claimed with an ack (`ackAndClaim`); `lease` is set when one was. */
export interface NextClaim {
  lease: Lease | null;
}

/** Runs `action` on the lease; a lease lost meanwhile is not an error here (the message moved on). */
async function settle(action: Promise<unknown>): Promise<boolean> {
  try {
    await action;
    return true;
  } catch (error) {
    if (error instanceof LeaseLostError) return false;
    throw error;
  }
}

/** Acks `lease`, and with `next` claims the next event in the same call. */
function ack<X extends Execution>(cfg: Config<X>, lease: Lease, next: NextClaim | undefined): Promise<boolean> {
  if (!next) return settle(cfg.transport.ack(lease));
  return settle(cfg.transport.ackAndClaim(lease, cfg.workerId, cfg.visibilityMs).then((claimed) => void (next.lease = claimed)));
}

/** The retry delay for a delivery's `attempt`, by the `backoff` option. */
function backoff<X extends Execution>(cfg: Config<X>, attempt: number): number {
  return retryDelay(cfg.backoff, attempt, cfg.random);
}

function isEvent(value: unknown): value is RuntimeEvent {
  return typeof value === 'object' && value !== null && isId((value as RuntimeEvent).id);
}

/** Handles the event `lease` holds and says what happened; with `next`, an ack claims the next event into it. */
export async function handleLease<X extends Execution>(cfg: Config<X>, lease: Lease, next?: NextClaim): Promise<StepResult> {
  const executionId = lease.groupId;
  const event = lease.event;
  // An event without an id cannot be deduplicated; it is still retried (and dead-lettered by
  // maxAttempts), under a stand-in id for the report.
  const d: Delivery = { executionId, eventId: isEvent(event) ? event.id : `seq:${lease.seq}`, seq: lease.seq, attempt: lease.attempt };
  if (!isEvent(event)) return fail(cfg, lease, d, new TypeError('event must be an object whose id is a non-empty string of well-formed Unicode'));

  const stored = await cfg.store.load(executionId);
  if (stored === undefined) {
    // Not an error: an emit can overtake the spawn that creates its recipient. Retry later.
    const retryInMs = backoff(cfg, lease.attempt);
    await settle(cfg.transport.nack(lease, retryInMs));
    return { ...d, kind: 'missing', retryInMs };
  }
  if (await cfg.store.isProcessed(executionId, d.eventId)) {
    await ack(cfg, lease, next);
    return { ...d, kind: 'duplicate' };
  }
  const control = readControl(stored);
  if (control.owner !== undefined && !ownersOf(cfg.handler).includes(control.owner)) {
    // Not this handler's to run (a schedule's timer reaching a Runtime whose handler was not
    // wrapped): back, without spending an attempt, for a worker whose handler runs it.
    const retryInMs = backoff(cfg, lease.attempt);
    await settle(cfg.transport.release(lease, retryInMs));
    return { ...d, kind: 'foreign', owner: control.owner, retryInMs };
  }
  if (control.suspended) return hold(cfg, lease, stored, control, d);
  if (isTimeoutFor(executionId, event)) {
    if (control.timers[event.path] !== event.fireAt) {
      await ack(cfg, lease, next);
      return { ...d, kind: 'stale' };
    }
    delete control.timers[event.path];
  }

  // The handler works on a private copy: a throw, a conflict or a lost lease leaves the stored
  // execution as it was (the in-memory store would otherwise hand out its live object).
  const exe = cfg.clone(stored);
  const renewal = cfg.keeper.keep(new Kept(lease));
  try {
    const effects = await cfg.handler(exe, event, { now: readClock(cfg.clock), attempt: lease.attempt, seq: lease.seq, workerId: cfg.workerId });
    const changes = toChanges(effects, control, readClock(cfg.clock), cfg.newId);
    writeControl(exe, control);
    changes.processedEventId = d.eventId;
    changes.trace = { event: d.eventId, type: event.type, worker: cfg.workerId, attempt: lease.attempt, ...changes.trace };
    await cfg.keeper.stop(renewal);
    if (renewal.lost) return { ...d, kind: 'lost' };
    await cfg.store.commit(exe, changes);
  } catch (error) {
    await cfg.keeper.stop(renewal);
    if (error instanceof StoreConflictError) {
      // Not the event's fault: back at once without spending an attempt.
      await settle(cfg.transport.release(renewal.lease, 0));
      return { ...d, kind: 'conflict' };
    }
    if (error instanceof ClosedError) throw error;
    if (renewal.lost) return { ...d, kind: 'lost' };
    return fail(cfg, renewal.lease, d, error);
  }
  // Committed. If the ack fails because another worker took the event over, the commit stands
  // and its dedupe mark makes that worker's delivery a duplicate.
  const acked = await ack(cfg, renewal.lease, next);
  return { ...d, kind: 'handled', acked };
}

/** Records the failure in the trace and parks the event for its back-off. */
async function fail<X extends Execution>(cfg: Config<X>, lease: Lease, d: Delivery, error: unknown): Promise<StepResult> {
  const retryInMs = backoff(cfg, lease.attempt);
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  await cfg.store.appendTrace(d.executionId, { event: d.eventId, worker: cfg.workerId, attempt: lease.attempt, error: message, retryInMs });
  await settle(cfg.transport.nack(lease, retryInMs, reasonFrom(message)));
  return { ...d, kind: 'failed', error, retryInMs };
}

/**
 * Holds a suspended execution's event: records the lease in the execution first (so `resume()`
 * in any worker can release it at once), then stretches the lease to `suspendHoldMs`. A lease,
 * not a park: a parked message has no holder and nobody could free it before its time.
 */
async function hold<X extends Execution>(cfg: Config<X>, lease: Lease, stored: X, control: ControlState, d: Delivery): Promise<StepResult> {
  const exe = cfg.clone(stored);
  control.held = { seq: lease.seq, attempt: lease.attempt, workerId: lease.workerId, groupId: lease.groupId };
  writeControl(exe, control);
  try {
    await cfg.store.save(exe);
  } catch (error) {
    if (!(error instanceof StoreConflictError)) throw error;
    await settle(cfg.transport.release(lease, 0));
    return { ...d, kind: 'conflict' };
  }
  // A resume() between the save and here already released the lease: the extend then fails
  // with LeaseLostError and the event flows again, which is what resume asked for.
  await settle(cfg.transport.extend(lease, cfg.suspendHoldMs).then(() => undefined));
  return { ...d, kind: 'suspended', holdMs: cfg.suspendHoldMs };
}
