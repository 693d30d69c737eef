/**
 * The idle path: what a step does when no event is claimable. Each relay moves work from the
 * store to the transport with "deliver, then acknowledge", so a crash in between delivers again
 * rather than never. Every delivery is made idempotent twice over: the publish key (the event
 * id) turns a repeat into a no-op while the first copy is queued, and the event id turns a
 * repeat that arrives after the first was handled into a `duplicate` step.
 * @internal
 */
import { StoreConflictError } from '../errors.js';
import type { Execution } from '../store/contract.js';
import { readClock } from '../validate.js';
import { spawnedEvent, timeoutEvent, writeControl } from './control.js';
import type { Config } from './options.js';

/**
 * Creates up to `relayBatch` spawned children (each only if absent), sends each its `spawned`
 * event, then acks the spawn entry. Returns how many entries it relayed.
 */
export async function relaySpawns<X extends Execution>(cfg: Config<X>): Promise<number> {
  const entries = await cfg.store.pendingSpawns(cfg.relayBatch);
  for (const entry of entries) {
    if ((await cfg.store.load(entry.childId)) === undefined) {
      const child = { id: entry.childId, version: 0, parentId: entry.parentId, rootPath: entry.rootPath, context: { ...entry.context } };
      writeControl(child, { timers: {} });
      try {
        await cfg.store.save(child as unknown as X);
      } catch (error) {
        // Another worker relaying the same entry created it first: that is the idempotent outcome.
        if (!(error instanceof StoreConflictError)) throw error;
      }
    }
    // Sent even when the child already existed: a crash after the create and before this publish
    // must not leave the child without its first event. Its fixed id makes repeats duplicates.
    const event = spawnedEvent(entry.parentId, entry.childId, entry.rootPath, entry.context);
    await cfg.transport.publish(entry.childId, event, { key: event.id });
    await cfg.store.ackSpawn(entry.seq);
  }
  return entries.length;
}

/**
 * Publishes up to `relayBatch` outbox entries to their targets' groups, then acks each.
 * Untargeted entries go to `onUntargeted` (or are dropped). Returns how many it relayed.
 */
export async function relayOutbox<X extends Execution>(cfg: Config<X>): Promise<number> {
  const entries = await cfg.store.pendingOutbox(cfg.relayBatch);
  for (const entry of entries) {
    if (entry.targetId === null) {
      await cfg.onUntargeted?.(entry.event);
    } else {
      // Runtime commits always give emits an id; an entry written by other code may lack one,
      // so it gets one derived from its outbox seq, the same on every relay of this entry.
      const raw = entry.event as Record<string, unknown>;
      const event = typeof raw?.id === 'string' && raw.id !== '' ? raw : { ...raw, id: `outbox:${entry.seq}` };
      await cfg.transport.publish(entry.targetId, event, { key: event.id as string });
    }
    await cfg.store.ackOutbox(entry.seq);
  }
  return entries.length;
}

/**
 * Fires up to `relayBatch` due timers: publishes each one's timeout event (deterministic id, also
 * the publish key), then disarms it with the guarded `deleteTimer`, which leaves a timer re-armed
 * meanwhile in place. The stale timeout that such a race publishes is recognised when claimed
 * (the execution's armed-timer map no longer has that time) and skipped. Returns how many fired.
 */
export async function fireTimers<X extends Execution>(cfg: Config<X>): Promise<number> {
  const due = (await cfg.store.dueTimers(readClock(cfg.clock))).slice(0, cfg.relayBatch);
  for (const timer of due) {
    const event = timeoutEvent(timer.executionId, timer.path, timer.fireAt);
    await cfg.transport.publish(timer.executionId, event, { key: event.id });
    await cfg.store.deleteTimer(timer.executionId, timer.path, timer.fireAt);
  }
  return due.length;
}
