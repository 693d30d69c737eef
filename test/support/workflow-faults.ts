/**
 * Faults for the workflow tests: a store or transport that behaves like a worker dying at a
 * chosen call. No vitest imports: the crash child process uses it too.
 */
import { ClosedError } from '../../src/errors.js';
import type { CommitChanges, ExecutionStore } from '../../src/store/contract.js';
import type { Transport } from '../../src/transport/contract.js';

/**
 * `store` with every method forwarded, except that `commit` calls `before(exe)` first and
 * `after(exe, changes)` once it landed: a hook that throws (or kills the process) is a worker
 * dying at that point.
 */
export function storeWithFault(
  store: ExecutionStore,
  before: (exe: Record<string, unknown>) => void,
  after: (exe: Record<string, unknown>, changes: CommitChanges | undefined) => void = () => {},
): ExecutionStore {
  return {
    load: (id) => store.load(id),
    save: (exe) => store.save(exe),
    commit: async (exe, changes) => {
      before(exe);
      await store.commit(exe, changes);
      after(exe, changes);
    },
    isProcessed: (id, eventId) => store.isProcessed(id, eventId),
    pendingOutbox: (limit) => store.pendingOutbox(limit),
    ackOutbox: (seq) => store.ackOutbox(seq),
    pendingSpawns: (limit) => store.pendingSpawns(limit),
    ackSpawn: (seq) => store.ackSpawn(seq),
    dueTimers: (now) => store.dueTimers(now),
    deleteTimer: (id, path, fireAt) => store.deleteTimer(id, path, fireAt),
    appendTrace: (id, entry) => store.appendTrace(id, entry),
    readTrace: (id) => store.readTrace(id),
    delete: (id) => store.delete(id),
    close: () => store.close(),
  };
}

/** `transport` whose `ack` throws (a worker dying after the commit, before the ack) while `dying()` says so. */
export function transportDyingAtAck(transport: Transport, dying: () => boolean): Transport {
  return {
    publish: (groupId, event, options) => transport.publish(groupId, event, options),
    claim: (workerId, visibilityMs, options) => transport.claim(workerId, visibilityMs, options),
    ack: async (lease) => {
      if (dying()) throw new ClosedError('transport (the worker died before its ack)');
      return transport.ack(lease);
    },
    // run() acks with the next claim in one call: the worker dies before that one too.
    ackAndClaim: async (lease, workerId, visibilityMs, options) => {
      if (dying()) throw new ClosedError('transport (the worker died before its ack)');
      return transport.ackAndClaim(lease, workerId, visibilityMs, options);
    },
    nack: (lease, delayMs) => transport.nack(lease, delayMs),
    release: (lease, delayMs) => transport.release(lease, delayMs),
    stats: () => transport.stats(),
    extend: (lease, visibilityMs) => transport.extend(lease, visibilityMs),
    inspect: () => transport.inspect(),
    close: () => transport.close(),
  } as Transport;
}
