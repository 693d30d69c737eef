/**
 * A transport and a store that send every call somewhere else — to a Durable Object over Workers
 * RPC or over HTTP — built from the forwarded method list, so new contract methods need no
 * edit here. Errors come back as data and are rebuilt as leasehold's own classes.
 * @internal
 */
import { sameLeases } from '../browser/wire.js';
import { ClosedError } from '../errors.js';
import type { ExecutionStore } from '../store/contract.js';
import type { AckAndClaimManyResult, AckManyResult, ChangeNotifier, Lease, Transport } from '../transport/contract.js';
import { METHODS, type Target, VERSION_BUMPING } from './methods.js';

/** Sends one call and resolves its value, or rejects with the rebuilt error. */
export type SendCall = (target: Target, method: string, args: unknown[]) => Promise<unknown>;

function proxy(target: Target, send: SendCall): Record<string, unknown> & { close(): Promise<void> } {
  let closed = false;
  const backend: Record<string, unknown> & { close(): Promise<void> } = {
    async close() {
      closed = true;
    },
  };
  for (const method of METHODS[target]) {
    backend[method] = async (...args: unknown[]) => {
      if (closed) throw new ClosedError(target);
      // Trailing undefined arguments are left off, as a local call would not see them either.
      while (args.length > 0 && args[args.length - 1] === undefined) args.pop();
      const value = await send(target, method, args);
      // ackMany and ackAndClaimMany answer with the caller's own lease objects; copies came back.
      if (target === 'transport' && method === 'ackMany') return sameLeases(args[0] as Lease[], value as AckManyResult);
      if (target === 'transport' && method === 'ackAndClaimMany') return { ...sameLeases(args[0] as Lease[], value as AckManyResult), claimed: (value as AckAndClaimManyResult).claimed };
      if (target === 'store' && VERSION_BUMPING.has(method)) {
        // The object bumped its copy; the caller's object must see it too, as with a local store.
        (args[0] as { version: number }).version = value as number;
        return undefined;
      }
      return value;
    };
  }
  return backend;
}

/** A {@link Transport} whose calls go through `send`; `onChange` subscribes through `subscribe`. */
export function remoteTransport<E = unknown>(send: SendCall, subscribe?: (listener: () => void) => () => void): Transport<E> & Partial<ChangeNotifier> {
  const transport = proxy('transport', send);
  if (subscribe) {
    transport.onChange = (listener: () => void) => {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      return subscribe(listener);
    };
  }
  return transport as unknown as Transport<E> & Partial<ChangeNotifier>;
}

/** An {@link ExecutionStore} whose calls go through `send`. */
export function remoteStore(send: SendCall): ExecutionStore {
  return proxy('store', send) as unknown as ExecutionStore;
}
