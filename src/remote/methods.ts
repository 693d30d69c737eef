/**
 * The method table: every method of the Transport and ExecutionStore contracts that a host serves
 * for callers elsewhere, whether it writes, and how its arguments go out and its answer comes
 * back. It is the one list of the contracts' methods: the client proxies, the SQL host's
 * dispatch and journal, the Durable Object's RPC methods and the replay test are all made from
 * it. `satisfies` makes a contract method missing here (or a name that is not one) a compile
 * error.
 * @internal
 */
import type { ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';

/** The objects a remote call can address. */
export type Target = 'transport' | 'store';

/** How one method crosses. */
export interface MethodSpec {
  /**
   * `'write'`: changes data; a host journals its answer so a retried call is answered, never
   * applied twice. `'read'`: changes nothing, so a retry simply runs again.
   */
  readonly kind: 'read' | 'write';
  /**
   * Argument 0 is a list of leases and the answer sorts them into `acked` / `lost` (ackMany,
   * ackAndClaimMany): only each lease's fences go out (its event stays with the caller), and the
   * answer is given with the caller's own lease objects.
   */
  readonly leases?: true;
  /**
   * The method bumps `version` of the execution in argument 0 (save, commit): the host answers
   * the new version and the client writes it back into the caller's object, as a local store does.
   */
  readonly version?: true;
}

/** A contract's methods that cross: all but `close`, which closes the caller's handle only. */
type Crossing<T> = Exclude<keyof T, 'close'>;

const read = { kind: 'read' } as const;
const write = { kind: 'write' } as const;

/** The Transport contract's methods. */
export const TRANSPORT_METHODS = {
  publish: write,
  publishMany: write,
  claim: write,
  claimMany: write,
  ack: write,
  ackMany: { kind: 'write', leases: true },
  ackAndClaim: write,
  ackAndClaimMany: { kind: 'write', leases: true },
  nack: write,
  release: write,
  reject: write,
  extend: write,
  expireLeases: write,
  stats: read,
  cancel: write,
  inspect: read,
  inspectGroup: read,
  deadLetters: read,
  redrive: write,
  discard: write,
  cancelGroup: write,
  pause: write,
  resume: write,
} as const satisfies Record<Crossing<Transport>, MethodSpec>;

/** The ExecutionStore contract's methods. */
export const STORE_METHODS = {
  load: read,
  save: { kind: 'write', version: true },
  commit: { kind: 'write', version: true },
  isProcessed: read,
  pendingOutbox: read,
  ackOutbox: write,
  pendingSpawns: read,
  ackSpawn: write,
  dueTimers: read,
  deleteTimer: write,
  appendTrace: write,
  readTrace: read,
  delete: write,
} as const satisfies Record<Crossing<ExecutionStore>, MethodSpec>;

export type TransportMethod = keyof typeof TRANSPORT_METHODS;
export type StoreMethod = keyof typeof STORE_METHODS;

/** The table by target. */
export const METHODS: { readonly transport: Readonly<Record<TransportMethod, MethodSpec>>; readonly store: Readonly<Record<StoreMethod, MethodSpec>> } = {
  transport: TRANSPORT_METHODS,
  store: STORE_METHODS,
};

/** The spec of `target.method`, or undefined when it is not a method that crosses (own keys only: never `constructor`, `toString`…). */
export function methodSpec(target: unknown, method: unknown): MethodSpec | undefined {
  if (target !== 'transport' && target !== 'store') return undefined;
  const table: Readonly<Record<string, MethodSpec>> = METHODS[target];
  return typeof method === 'string' && Object.hasOwn(table, method) ? table[method] : undefined;
}
