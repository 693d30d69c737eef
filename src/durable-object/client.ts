/**
 * The client of a leasehold Durable Object for code outside Workers (Node, browsers, other
 * clouds): a {@link Transport} (with `onChange` over a WebSocket) and an {@link ExecutionStore}
 * whose every call is one `POST …/call` to the object, or one message on the object's WebSocket
 * (`calls: 'websocket'`). Any runtime with `fetch` runs it; change notices and WebSocket calls
 * also need a WebSocket class (global in browsers and Node ≥ 22; pass `ws`'s on Node 20).
 */
import { remoteStore, remoteTransport, type Send } from '../remote/client.js';
import { encodeValue } from '../remote/codec.js';
import { httpClient } from '../remote/http.js';
import { errorFromWire, type RemoteCall } from '../remote/wire.js';
import type { ExecutionStore } from '../store/contract.js';
import { type ChangeNotifier, DEFAULT_QUEUE, type Transport } from '../transport/contract.js';
import { checkId, checkObject, checkOptions } from '../validate.js';
import { SOCKET_CALL_MAX_BYTES, type CallAnswer, type CallBody } from './protocol.js';
import { ObjectSocket, type WebSocketClass } from './socket.js';

/** Options of {@link connectLeasehold}. */
export interface LeaseholdClientOptions {
  /**
   * The object's base URL: the client posts calls to `<url>/call` and subscribes at
   * `<url>/changes`. With `routeToObject` in the Worker: `https://<worker>/<prefix>/<object name>`.
   */
  url: string | URL;
  /** Sent with every request (e.g. `authorization`). */
  headers?: Record<string, string>;
  /** The fetch to use; default the global one. */
  fetch?: (input: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;
  /** The WebSocket class for change notices and WebSocket calls; default the global one. Without one, `onChange` throws. */
  WebSocket?: WebSocketClass;
  /**
   * How calls travel. `'http'` (default): one `POST …/call` each, stateless, through any proxy.
   * `'websocket'`: as messages on one WebSocket to the object (the one notices use), opened at
   * the first call and kept until `close()`; a call skips the cost of an HTTP request in
   * workerd (claim+ack about 2× faster, docs/BENCHMARKS.md). An answer still comes only once the
   * call is durable. A call larger than 1 MB of JSON goes over HTTP (workerd refuses larger
   * socket messages). Needs a WebSocket class; where the class does not report the HTTP status
   * of a refused upgrade (browsers), a wrong token shows as `STORAGE_UNAVAILABLE`, not
   * `ACCESS_DENIED`.
   */
  calls?: 'http' | 'websocket';
  /**
   * false (default): calls go out one after another, each once the previous one is answered, so
   * they apply in the order they were made, as on a local transport. true: calls go out at once
   * and may apply in any order (more throughput for many concurrent workers on one client).
   */
  concurrent?: boolean;
}

/** A connection to one leasehold Durable Object. */
export interface LeaseholdClient {
  /** The object's default queue. `onChange` notices cover every caller's changes and leases running out. */
  readonly transport: Transport & ChangeNotifier;
  /**
   * Another named queue of the same object: independent of the others (own groups, seqs,
   * round-robin order, keys, dead letters, stats and notices). `queue('default')` is {@link transport}'s.
   * @throws TypeError / RangeError for a name that is not a non-empty string.
   */
  queue(name: string): Transport & ChangeNotifier;
  /** The object's execution store. */
  readonly store: ExecutionStore;
  /** Closes the notice socket and marks both closed. Data stays in the object. Idempotent. */
  close(): Promise<void>;
}

/**
 * Connects to the leasehold Durable Object at `options.url`. Nothing is sent until the first call.
 *
 * Calls reject with the backend's own errors (TypeError, RangeError, LeaseLostError,
 * StoreConflictError …). A call that gets no answer (the request fails on the way, or what comes
 * back is not a leasehold answer: a proxy's error page, say) rejects with a `StorageError`
 * (`STORAGE_UNAVAILABLE`): the call may or may not have been applied, as with any remote call.
 * A request refused for its credentials (HTTP 401 or 403: a missing or wrong token) rejects with
 * a `LeaseholdError` of code `ACCESS_DENIED`, and nothing was applied. The inspector's
 * `httpTransport` maps failures the same way (one HTTP client, in the hosting layer).
 *
 * @throws TypeError / RangeError for bad options.
 */
export function connectLeasehold(options: LeaseholdClientOptions): LeaseholdClient {
  checkOptions('options', options, ['url', 'headers', 'fetch', 'WebSocket', 'calls', 'concurrent']);
  let base: URL;
  try {
    base = new URL(String(options.url));
  } catch {
    throw new TypeError(`options.url must be an absolute URL, got ${String(options.url)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new RangeError(`options.url must be http(s), got ${base.protocol}`);
  const root = base.href.replace(/\/+$/, '');
  const http = httpClient({ url: `${root}/call`, headers: options.headers, fetch: options.fetch });
  const headers = { 'content-type': 'application/json', ...(options.headers ?? {}) };
  const calls = options.calls ?? 'http';
  if (calls !== 'http' && calls !== 'websocket') throw new RangeError(`options.calls must be 'http' or 'websocket', got ${String(calls)}`);
  const clientId = randomId();

  const socket = new ObjectSocket(`${root.replace(/^http/, 'ws')}/changes?client=${clientId}`, root, options.WebSocket, headers);
  if (calls === 'websocket' && !socket.available) throw new TypeError("options.calls 'websocket' needs a WebSocket class: pass options.WebSocket (e.g. the ws package on Node 20)");

  /** The last call sent, when calls are ordered: the next one waits for its answer. */
  let tail: Promise<unknown> = Promise.resolve();
  const send: Send = (call) => {
    // Encoded and clocked now, at the call, whenever it goes out.
    const body: CallBody = { ...call, args: encodeValue(call.args), client: clientId };
    if (options.concurrent === true) return deliver(body);
    const answer = tail.then(() => deliver(body));
    tail = answer.catch(() => undefined);
    return answer;
  };

  const deliver = async (body: CallBody): Promise<unknown> => {
    if (calls === 'websocket') {
      const { client: _, ...call } = body;
      const text = JSON.stringify(call);
      // Counted in UTF-16 units first: a text of n units is at most 3n bytes of UTF-8.
      if (text.length * 3 <= SOCKET_CALL_MAX_BYTES || new TextEncoder().encode(text).length <= SOCKET_CALL_MAX_BYTES) {
        return settle(body, await socket.call(call, `${body.target}.${body.method}`));
      }
    }
    return post(body);
  };

  /** What the caller gets from the object's answer. */
  const settle = (body: CallBody, answer: CallAnswer): unknown => {
    if (!answer.ok) throw errorFromWire(answer.error);
    // This connection's own changes are not echoed over the socket: raise them here.
    if (answer.changed) socket.emit(body.queue ?? DEFAULT_QUEUE);
    return answer.value;
  };

  const post = async (body: CallBody): Promise<unknown> => settle(body, (await http(body, `${body.target}.${body.method}`)) as CallAnswer);

  const queues = new Map<string, Transport & ChangeNotifier>();
  const queue = (name: string): Transport & ChangeNotifier => {
    checkId('name', name);
    let transport = queues.get(name);
    if (!transport) {
      transport = remoteTransport(send, { ...(name === DEFAULT_QUEUE ? {} : { queue: name }), subscribe: (listener) => socket.add(name, listener) });
      queues.set(name, transport);
    }
    return transport;
  };
  const store = remoteStore(send);
  return {
    transport: queue(DEFAULT_QUEUE),
    queue,
    store,
    async close() {
      for (const transport of queues.values()) await transport.close();
      await store.close();
      socket.close();
    },
  };
}

function randomId(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export type { WebSocketClass } from './socket.js';
