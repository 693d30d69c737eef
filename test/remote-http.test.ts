/**
 * The one HTTP client (src/remote/http.ts), through both clients that speak HTTP to a host: a
 * Durable Object's (`connectLeasehold`) and the inspector's (`httpTransport`). Each failure on
 * the way reaches the caller as the same class and code from both, driven by a stand-in fetch.
 */
import { describe, expect, it } from 'vitest';
import { connectLeasehold } from '../src/durable-object/client.js';
import { LeaseholdError, LeaseLostError, StorageError } from '../src/errors.js';
import { httpTransport } from '../src/inspector/client.js';
import { httpClient, readAnswer } from '../src/remote/http.js';
import { errorToWire } from '../src/remote/wire.js';
import type { Transport } from '../src/transport/contract.js';

type Reply = () => Promise<{ status: number; text(): Promise<string> }>;

const reply = (status: number, body: string): Reply => () => Promise.resolve({ status, text: () => Promise.resolve(body) });
const answer = (value: unknown) => JSON.stringify({ ok: true, value, changed: false, rowsWritten: 0 });

/** The two clients, each posting through `fetch`, and the requests they made. */
function clients(next: Reply): { name: string; transport: Transport; requests: { url: string; headers: Record<string, string>; body: string }[] }[] {
  const make = () => {
    const requests: { url: string; headers: Record<string, string>; body: string }[] = [];
    const fetch = (url: string, init: { headers: Record<string, string>; body: string }) => {
      requests.push({ url, headers: init.headers, body: init.body });
      return next();
    };
    return { requests, fetch };
  };
  const object = make();
  const inspector = make();
  return [
    { name: 'connectLeasehold', transport: connectLeasehold({ url: 'https://host.test/q/orders', headers: { authorization: 'Bearer t' }, fetch: object.fetch as never }).transport, requests: object.requests },
    { name: 'httpTransport', transport: httpTransport('https://host.test/admin/leasehold', { headers: { authorization: 'Bearer t' }, fetch: inspector.fetch as never }), requests: inspector.requests },
  ];
}

const failures: [string, Reply, (error: unknown) => void][] = [
  [
    'a request that fails on the way is STORAGE_UNAVAILABLE, maybe applied',
    () => Promise.reject(new TypeError('fetch failed')),
    (error) => {
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: expect.stringMatching(/transport\.stats: the request to https:\/\/host\.test\/.* failed \(fetch failed\); it may or may not have been applied/) });
      expect((error as StorageError).cause).toBeInstanceOf(TypeError);
    },
  ],
  [
    'a body cut off on the way is STORAGE_UNAVAILABLE',
    () => Promise.resolve({ status: 200, text: () => Promise.reject(new Error('terminated')) }),
    (error) => expect(error).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE', message: expect.stringContaining('(terminated)') }),
  ],
  [
    'HTTP 401 is ACCESS_DENIED, nothing applied',
    reply(401, 'unauthorized'),
    (error) => {
      expect(error).toBeInstanceOf(LeaseholdError);
      expect(error).not.toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: 'ACCESS_DENIED', message: expect.stringMatching(/HTTP 401.*nothing was applied/) });
    },
  ],
  [
    'HTTP 403 is ACCESS_DENIED, whatever the body says',
    reply(403, answer(1)),
    (error) => expect(error).toMatchObject({ name: 'LeaseholdError', code: 'ACCESS_DENIED', message: expect.stringContaining('HTTP 403') }),
  ],
  [
    "a proxy's error page (not a leasehold answer) is STORAGE_UNAVAILABLE, naming the status and the body",
    reply(502, '<html>Bad gateway</html>'),
    (error) => expect(error).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE', message: expect.stringMatching(/answered HTTP 502 with no leasehold answer .*: <html>Bad gateway<\/html>; it may or may not have been applied/) }),
  ],
  [
    'JSON that is not an answer, even with HTTP 200, is STORAGE_UNAVAILABLE',
    reply(200, JSON.stringify({ hello: 'world' })),
    (error) => expect(error).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE', message: expect.stringContaining('HTTP 200 with no leasehold answer') }),
  ],
  [
    "a leasehold answer's error arrives as its own class, whatever the status",
    reply(400, JSON.stringify({ ok: false, error: { name: 'TypeError', message: 'the request body must be JSON' } })),
    (error) => {
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe('the request body must be JSON');
    },
  ],
  [
    'a LeaseLostError keeps its class and fields',
    reply(200, JSON.stringify({ ok: false, error: errorToWire(new LeaseLostError(4, 2, 'g')) })),
    (error) => {
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ code: 'LEASE_LOST', seq: 4, attempt: 2, groupId: 'g' });
    },
  ],
];

describe('the HTTP client of every host', () => {
  for (const [name, next, check] of failures) {
    it(`maps the same way for both clients: ${name}`, async () => {
      for (const client of clients(next)) {
        const error = await client.transport.stats().then(
          () => new Error(`${client.name}: stats() resolved`),
          (e: unknown) => e,
        );
        try {
          check(error);
        } catch (failure) {
          throw new Error(`${client.name}: ${(failure as Error).message}`);
        }
      }
    });
  }

  it('posts JSON with the caller headers, and answers the value', async () => {
    for (const client of clients(reply(200, answer({ queued: 3 })))) {
      expect(await client.transport.stats()).toEqual({ queued: 3 });
      expect(client.requests).toHaveLength(1);
      const [request] = client.requests;
      expect(request!.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer t' });
      expect(JSON.parse(request!.body)).toMatchObject({ method: 'stats' });
    }
    expect(clients(reply(200, '')).map((c) => c.requests)).toEqual([[], []]);
  });

  it('reads an answer only in its shape', () => {
    expect(readAnswer('{"ok":true}')).toEqual({ ok: true });
    expect(readAnswer('{"ok":false,"error":{"name":"Error","message":"m"}}')).toEqual({ ok: false, error: { name: 'Error', message: 'm' } });
    for (const text of ['', 'null', '1', '[]', '{"ok":1}', '{"ok":false}', '{"ok":false,"error":{"name":1,"message":"m"}}', '<html>']) expect(readAnswer(text)).toBeNull();
  });

  it('needs a fetch', () => {
    const global = globalThis as { fetch?: unknown };
    const saved = global.fetch;
    global.fetch = undefined;
    try {
      expect(() => httpClient({ url: 'https://host.test/' })).toThrow(TypeError);
      expect(() => httpTransport('https://host.test/')).toThrow(/options\.fetch is required/);
    } finally {
      global.fetch = saved;
    }
  });
});
