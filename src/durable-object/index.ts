/**
 * leasehold inside Cloudflare Durable Objects (SQLite storage): the driver that puts an object's
 * `ctx.storage.sql` behind the SQL seam, the ready `LeaseholdObject` class, a router for the
 * Worker's `fetch`, and RPC wrappers with the exact contracts. Import it from a Worker only (it
 * imports `cloudflare:workers`); outside Workers use `leasehold/durable-object/client`.
 */
import { remoteStore, remoteTransport, type Send } from '../remote/client.js';
import { errorFromWire } from '../remote/wire.js';
import type { ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import type { CallAnswer } from './protocol.js';
import { checkId } from '../validate.js';

export { fromDurableObjectStorage } from './driver.js';
export { LeaseholdObject } from './object.js';
export type { LeaseholdEnv } from './object.js';
export type { CallAnswer, CallBody, SocketAnswer, SocketCall } from './protocol.js';
export type { ObjectOptions } from './core.js';
export type { DurableObjectStateLike, DurableObjectStorageLike, SqlCursorLike, SqlStorageLike, WebSocketLike } from './types.js';
export type { Target } from '../remote/methods.js';
export type { Answer, RemoteCall, WireError } from '../remote/wire.js';

/** The part of a Durable Object stub the wrappers call (any `LeaseholdObject` stub has it). */
export interface LeaseholdStub {
  call(target: 'transport' | 'store', method: string, args: unknown[], extra?: { queue?: string }): Promise<CallAnswer>;
}

const viaStub = (stub: LeaseholdStub): Send => {
  if (typeof stub?.call !== 'function') throw new TypeError('stub must be a LeaseholdObject stub (env.NAMESPACE.get(id))');
  return async ({ target, method, args, queue }) => {
    const answer = await stub.call(target, method, args, queue === undefined ? {} : { queue });
    if (!answer.ok) throw errorFromWire(answer.error);
    return answer.value;
  };
};

/**
 * The object's queue (`queue`, default `'default'`) over Workers RPC, as a {@link Transport}
 * with leasehold's error classes (raw stub calls lose them, and reach only the default queue).
 * No `onChange`: subscribe with a WebSocket to `…/changes`.
 * @throws TypeError when `stub` is not a leasehold object's stub; TypeError / RangeError for a bad queue name.
 */
export function objectTransport<E = unknown>(stub: LeaseholdStub, queue?: string): Transport<E> {
  const send = viaStub(stub);
  if (queue !== undefined) checkId('queue', queue);
  return remoteTransport<E>(send, queue === undefined ? {} : { queue });
}

/** The object's execution store over Workers RPC (see {@link objectTransport}). */
export function objectStore(stub: LeaseholdStub): ExecutionStore {
  return remoteStore(viaStub(stub));
}

/** The slice of a Durable Object namespace binding the router uses. */
export interface NamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { fetch(request: Request): Promise<Response> };
}

const NAME = /^[A-Za-z0-9._~-]{1,128}$/;

/**
 * Routes `<prefix>/<object name>/call` and `<prefix>/<object name>/changes` to the object of that
 * name; resolves null for other paths (the Worker serves them itself). With `token`, a request
 * must carry `authorization: Bearer <token>` (else 401): the endpoint changes data, so never
 * expose it unauthenticated.
 * @throws TypeError for a bad namespace or prefix.
 */
export async function routeToObject(request: Request, namespace: NamespaceLike, options: { prefix?: string; token?: string } = {}): Promise<Response | null> {
  if (typeof namespace?.idFromName !== 'function') throw new TypeError('namespace must be a Durable Object namespace binding');
  const prefix = (options.prefix ?? '/leasehold').replace(/\/+$/, '');
  const path = new URL(request.url).pathname;
  if (!path.startsWith(`${prefix}/`)) return null;
  const [name, action, ...rest] = path.slice(prefix.length + 1).split('/');
  if (!name || !NAME.test(decodeURIComponent(name)) || (action !== 'call' && action !== 'changes') || rest.length > 0) return null;
  if (options.token !== undefined) {
    const given = request.headers.get('authorization') ?? new URL(request.url).searchParams.get('token');
    if (given !== `Bearer ${options.token}` && given !== options.token) return new Response('unauthorized', { status: 401 });
  }
  return namespace.get(namespace.idFromName(decodeURIComponent(name))).fetch(request);
}
