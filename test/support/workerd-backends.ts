/**
 * The Durable Object backends, as entries of the shared backend lists: a `LeaseholdObject` in the
 * real workerd the run starts on first use (test/support/servers.ts), reached through `connectLeasehold` over HTTP, or
 * through a Worker that calls the object over Workers RPC. Every test gets a fresh object; the
 * manual clock's reading and the object's options travel with each call, added to the body by
 * the client's `fetch` option and read by the test Worker's subclass (test/workerd/worker.ts).
 */
import { WebSocket } from 'ws';
import { ManualClock, type Clock } from '../../src/clock.js';
import { connectLeasehold, type LeaseholdClient } from '../../src/durable-object/client.js';
import { checkObjectOptions, type ObjectOptions } from '../../src/durable-object/core.js';
import type { TransportHarness } from '../conformance/transport.js';
import type { StoreHarness } from '../conformance/store-harness.js';
import type { RuntimeBackends } from './runtime-backends.js';
import { startedUrl, workerdUrl } from './servers.js';

/**
 * How a test reaches the object: `/q/…` is the object's own endpoint, by `POST /call` or (`ws`)
 * by calls on its WebSocket; `/rpc/…` a Worker calling it over RPC.
 */
export type Route = 'q' | 'ws' | 'rpc';
export const ROUTES: { route: Route; label: string }[] = [
  { route: 'q', label: 'HTTP' },
  { route: 'ws', label: 'WebSocket calls' },
  { route: 'rpc', label: 'Workers RPC' },
];

let objects = 0;

/** A name no other test used: a new, empty object. */
export function freshObject(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${++objects}`;
}

/** The base URL of object `name` on `route` of the shared workerd (or of `base`). */
export function objectUrl(route: Route, name: string, base = startedUrl('workerd')): string {
  return `${base}/${route === 'ws' ? 'q' : route}/${name}`;
}

export function connect(route: Route, name: string, clock: Clock | undefined, options: ObjectOptions = {}, base?: string): LeaseholdClient {
  // The client's own fetch option carries the test's fields: nothing in the shipped client knows them.
  const withTestFields = (url: string, init: { method: string; headers: Record<string, string>; body: string }) => {
    const body = { ...(JSON.parse(init.body) as object), ...(clock ? { now: clock() } : {}), options };
    return fetch(url, { ...init, body: JSON.stringify(body) });
  };
  // And on the socket, its own WebSocket class adds them to every call it sends.
  class WithTestFields extends WebSocket {
    override send(data: string): void {
      const message = JSON.parse(data) as { id?: unknown };
      super.send(typeof message.id === 'number' ? JSON.stringify({ ...message, ...(clock ? { now: clock() } : {}), options }) : data);
    }
  }
  return connectLeasehold({ url: objectUrl(route, name, base), WebSocket: WithTestFields, fetch: withTestFields, calls: route === 'ws' ? 'websocket' : 'http' });
}

/** Drops the object's instance, so the next call builds a new one from its storage (a test hook). */
export async function resetObject(name: string, base = startedUrl('workerd')): Promise<void> {
  await fetch(`${base}/q/${name}/abort`, { method: 'POST' }).then((r) => r.text());
}

export function workerdTransport(route: Route) {
  return async (options: { maxAttempts?: number }): Promise<TransportHarness> => {
    await workerdUrl();
    const clock = new ManualClock(1_000_000);
    const name = freshObject('transport');
    let client = connect(route, name, clock.now, checkObjectOptions(options));
    const harness: TransportHarness = {
      transport: client.transport,
      clock,
      queue: async (queue) => client.queue(queue),
      dispose: () => client.close(),
      async reopen() {
        await client.close();
        await resetObject(name);
        client = connect(route, name, clock.now, checkObjectOptions(options));
        harness.transport = client.transport;
        return client.transport;
      },
    };
    return harness;
  };
}

export function workerdStore(route: Route) {
  return async (options?: { traceMax?: number }): Promise<StoreHarness> => {
    // The store's constructor checks run in the object; checking here first rejects bad options
    // with the same errors before any request.
    const objectOptions = checkObjectOptions(options ?? {});
    await workerdUrl();
    const name = freshObject('store');
    let client = connect(route, name, undefined, objectOptions);
    const harness: StoreHarness = {
      store: client.store,
      clock: new ManualClock(1_000),
      caps: {
        identity: false,
        persistent: true,
        reopen: async () => {
          await client.close();
          await resetObject(name);
          client = connect(route, name, undefined, objectOptions);
          harness.store = client.store;
          return client.store;
        },
      },
      dispose: () => client.close(),
    };
    return harness;
  };
}

export function workerdRuntime(route: Route) {
  return async ({ clock, maxAttempts }: { clock: Clock; maxAttempts?: number }): Promise<RuntimeBackends> => {
    await workerdUrl();
    const client = connect(route, freshObject('runtime'), clock, maxAttempts === undefined ? {} : { maxAttempts });
    return { store: client.store, transport: client.transport, dispose: () => client.close() };
  };
}
