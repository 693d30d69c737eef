/**
 * The client side of every host: a Transport and an ExecutionStore whose calls go through a
 * `send` the platform supplies (postMessage to the browser's host worker, HTTP or Workers RPC to
 * a Durable Object). Made from the method table, so a contract method reaches every platform
 * with no edit here; the table says how a batch ack's leases go out and how a version comes back.
 * No queue logic and no SQL: a client bundle carries none of the backends.
 * @internal
 */
import { ClosedError } from '../errors.js';
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { AckManyResult, ChangeNotifier, Lease, Transport } from '../transport/contract.js';
import { METHODS, type MethodSpec, type Target } from './methods.js';
import { leaseFences, type RemoteCall, sameLeases } from './wire.js';

/**
 * Carries one call to the host and resolves its answer's value, or rejects with the call's error
 * rebuilt as leasehold's own class (see `errorFromWire`).
 */
export type Send = (call: RemoteCall) => Promise<unknown>;

function proxy(target: Target, send: Send, queue: string | undefined): Record<string, unknown> & { close(): Promise<void> } {
  let closed = false;
  const backend: Record<string, unknown> & { close(): Promise<void> } = {
    async close() {
      closed = true;
    },
  };
  for (const [method, spec] of Object.entries(METHODS[target]) as [string, MethodSpec][]) {
    backend[method] = async (...given: unknown[]) => {
      if (closed) throw new ClosedError(target);
      // Trailing undefined arguments are left off, as a local call would not see them either.
      let length = given.length;
      while (length > 0 && given[length - 1] === undefined) length--;
      const args = given.slice(0, length);
      if (spec.leases) args[0] = leaseFences(args[0]);
      const call: RemoteCall = { target, method, args };
      if (queue !== undefined) call.queue = queue;
      const value = await send(call);
      if (spec.leases) {
        const answer = value as AckManyResult & { claimed?: unknown };
        const own = sameLeases(given[0] as readonly Lease[], answer);
        return 'claimed' in answer ? { ...own, claimed: answer.claimed } : own;
      }
      if (spec.version) {
        // The host bumped its copy; the caller's object must see it too, as with a local store.
        (given[0] as { version: number }).version = value as number;
        return undefined;
      }
      return value;
    };
  }
  return backend;
}

/**
 * A {@link Transport} whose every call goes through `send`, addressed to `queue` (absent: the
 * host's default queue). With `subscribe`, it is also a {@link ChangeNotifier}.
 */
export function remoteTransport<E = unknown>(send: Send, options: { queue?: string; subscribe: (listener: () => void) => () => void }): Transport<E> & ChangeNotifier;
export function remoteTransport<E = unknown>(send: Send, options?: { queue?: string }): Transport<E>;
export function remoteTransport<E = unknown>(send: Send, options: { queue?: string; subscribe?: (listener: () => void) => () => void } = {}): Transport<E> & Partial<ChangeNotifier> {
  const transport = proxy('transport', send, options.queue);
  const subscribe = options.subscribe;
  if (subscribe) {
    transport.onChange = (listener: () => void) => {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      return subscribe(listener);
    };
  }
  return transport as unknown as Transport<E> & Partial<ChangeNotifier>;
}

/** An {@link ExecutionStore} whose every call goes through `send`. */
export function remoteStore<X extends Execution = Execution>(send: Send): ExecutionStore<X> {
  return proxy('store', send, undefined) as unknown as ExecutionStore<X>;
}
