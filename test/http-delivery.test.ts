/**
 * leasehold/http against real servers on port 0: the whole loop (a SQLite transport, consume()
 * with httpDelivery, the receiver on better-sqlite3 behind toNodeListener), a merged edit after
 * a lost answer applied with its latest content under a new delivery id, the answer of every
 * status classified, Retry-After read, a closed server and a silent one taken for offline, the
 * consumer's abort passed through, and lost reports.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { consume } from '../src/consume/consume.js';
import { RejectError, RetryLaterError } from '../src/consume/outcomes.js';
import { httpDelivery, reportLostOrigin, retryAfterMs } from '../src/http/index.js';
import { createReceiver, sqliteReceipts, toNodeListener, type Receiver } from '../src/receiver/index.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import type { Lease } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { scratchDir } from './support/backends.js';

interface Edit {
  note: string;
  text: string;
}

/** Starts `listener` on a free port; resolves with its URL and a close that ends every connection. */
async function serve(listener: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/outbox`;
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A server that answers every request with `status`, `headers` and `body`. */
const answering = (status: number, body = '', headers: Record<string, string> = {}) => serve((_, response) => response.writeHead(status, headers).end(body));

/** A lease as a transport issues it, for calling the handler directly. */
const lease = (over: Partial<Lease<Edit>> = {}): Lease<Edit> => ({
  seq: 1,
  groupId: 'n1',
  event: { note: 'n1', text: 't' },
  workerId: 'w',
  attempt: 1,
  expiresAt: 0,
  queue: 'default',
  origin: '0123456789abcdef0123456789abcdef',
  counter: 1,
  lowWater: 1,
  revision: 0,
  deliveryId: '0123456789abcdef0123456789abcdef/default/1/0',
  ...over,
});

const signal = () => ({ signal: new AbortController().signal });

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('it did not throw');
}

describe('httpDelivery with the receiver, end to end', () => {
  let scratch: ReturnType<typeof scratchDir>;
  let device: SqlDatabase;
  let serverDb: SqlDatabase;
  let transport: SqliteTransport<Edit>;
  let receiver: Receiver;
  let server: Awaited<ReturnType<typeof serve>>;
  let applied: { id: string; text: string }[];

  beforeEach(async () => {
    scratch = scratchDir();
    device = await openBetterSqliteDatabase(`${scratch.dir}/device.db`);
    serverDb = await openBetterSqliteDatabase(`${scratch.dir}/server.db`);
    serverDb.exec('CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)');
    transport = new SqliteTransport<Edit>(device);
    applied = [];
    const save = serverDb.prepare('INSERT INTO notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text');
    receiver = createReceiver<Edit, SqlDatabase, true>({
      store: sqliteReceipts(serverDb),
      apply: (edit, { delivery }) => {
        save.run(edit.note, edit.text);
        applied.push({ id: delivery.id, text: edit.text });
        return { status: 201, body: { saved: edit.note } };
      },
    });
    server = await serve(toNodeListener(receiver.handle));
  });
  afterEach(async () => {
    await server.close();
    await transport.close();
    device.close();
    serverDb.close();
    scratch.remove();
  });

  const notes = () => Object.fromEntries(serverDb.prepare('SELECT id, text FROM notes ORDER BY id').all<{ id: string; text: string }>().map((r) => [r.id, r.text]));

  it('delivers every queued edit through consume() once, and the receiver applies each once', async () => {
    for (let i = 1; i <= 6; i++) await transport.publish(`n${i % 3}`, { note: `n${i % 3}`, text: `edit ${i}` });
    const delivered: unknown[] = [];
    const consumer = consume(transport, httpDelivery<Edit>({ url: server.url, onDelivered: async (response) => void delivered.push(await response.json()) }), { concurrency: 3 });
    await expect.poll(() => consumer.handled).toBe(6);
    await consumer.stop();
    expect(notes()).toEqual({ n0: 'edit 6', n1: 'edit 4', n2: 'edit 5' });
    expect(applied).toHaveLength(6);
    expect(new Set(applied.map((a) => a.id)).size).toBe(6);
    expect(delivered).toHaveLength(6);
    expect(delivered[0]).toMatchObject({ saved: expect.stringMatching(/^n\d$/) });
    const origin = applied[0]!.id.split('/')[0]!;
    expect(await receiver.gaps(origin)).toMatchObject({ queues: [{ queue: 'default', received: 6, highest: 6, removed: [], stillToCome: [] }] });
  });

  it('applies a merged edit made after a lost answer with its latest content, under a new delivery id', async () => {
    await transport.publish('n1', { note: 'n1', text: 'v' }, { key: 'n1', onDuplicate: 'merge' });
    // The answer to the first request is lost on its way back: the server applied "v".
    let lose = true;
    const lossy: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!lose) return response;
      lose = false;
      await response.body?.cancel();
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    };
    const deliver = httpDelivery<Edit>({ url: server.url, fetch: lossy, retryMs: 0 });
    const first = (await transport.claim('w', 30_000))!;
    const failure = await thrown(deliver(first.event, first, signal()));
    expect(failure).toBeInstanceOf(RetryLaterError);
    expect(failure).toMatchObject({ offline: true, afterMs: 0, message: 'unreachable: fetch failed (ECONNRESET)' });
    await transport.release(first);
    // The user types on: the edit merges into the queued message, same seq and counter.
    await transport.publish('n1', { note: 'n1', text: 'v then v2' }, { key: 'n1', onDuplicate: 'merge' });
    const second = (await transport.claim('w', 30_000))!;
    expect([second.seq, second.counter, second.revision]).toEqual([first.seq, first.counter, 1]);
    expect(second.deliveryId).not.toBe(first.deliveryId);
    await deliver(second.event, second, signal());
    await transport.ack(second);
    expect(applied.map((a) => a.text)).toEqual(['v', 'v then v2']);
    expect(notes()).toEqual({ n1: 'v then v2' });
    // The first request, replayed late (a stalled connection): stale, never applied.
    await deliver(first.event, first, signal());
    expect(notes()).toEqual({ n1: 'v then v2' });
    expect(applied).toHaveLength(2);
  });

  it('reports a lost origin to the receiver, and null for one it never heard of', async () => {
    await transport.publish('n1', { note: 'n1', text: 'a' });
    await transport.publish('n2', { note: 'n2', text: 'b' });
    const one = (await transport.claim('w', 30_000))!;
    await httpDelivery<Edit>({ url: server.url })(one.event, one, signal());
    const report = await reportLostOrigin({ url: server.url, origin: one.origin! });
    expect(report).toEqual({ origin: one.origin, lost: true, queues: [{ queue: 'default', received: 1, highest: 1, lowWater: 1, removed: [], stillToCome: [], lost: [] }] });
    expect(await reportLostOrigin({ url: server.url, origin: 'f'.repeat(32) })).toBeNull();
    await expect(reportLostOrigin({ url: server.url, origin: 'nope' })).rejects.toThrow(RangeError);
  });

  it('gets a 413 through the Node adapter for a body over the limit, read no further', async () => {
    const small = await serve(toNodeListener(createReceiver({ store: sqliteReceipts(serverDb), apply: () => {}, maxBodyBytes: 1000 }).handle));
    try {
      const failure = await thrown(httpDelivery<Edit>({ url: small.url })({ note: 'n1', text: 'x'.repeat(5000) }, lease(), signal()));
      expect(failure).toBeInstanceOf(RejectError);
      expect((failure as Error).message).toBe('413 Payload Too Large: the body is larger than 1000 bytes');
    } finally {
      await small.close();
    }
  });
});

describe('httpDelivery classifies every answer', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  const start = async (status: number, body = '', headers: Record<string, string> = {}) => {
    const s = await answering(status, body, headers);
    closers.push(s.close);
    return s.url;
  };

  it('sends the delivery id as an sf-string Idempotency-Key, the low-water mark and the attempt', async () => {
    let seen: IncomingMessage['headers'] = {};
    let body = '';
    const s = await serve((request, response) => {
      seen = request.headers;
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => response.writeHead(204).end());
    });
    closers.push(s.close);
    await httpDelivery<Edit>({ url: s.url, headers: { authorization: 'Bearer t' } })({ note: 'n1', text: 't' }, lease({ attempt: 3, lowWater: 1, deliveryId: '0123456789abcdef0123456789abcdef/my%20queue/1/0' }), signal());
    expect(seen).toMatchObject({
      'idempotency-key': '"0123456789abcdef0123456789abcdef/my%20queue/1/0"',
      'leasehold-low-water': '1',
      'leasehold-attempt': '3',
      authorization: 'Bearer t',
      'content-type': 'application/json',
    });
    expect(JSON.parse(body)).toEqual({ note: 'n1', text: 't' });
  });

  it('dead-letters 400, 409, 410, 413 and 422 with the status and what the server said', async () => {
    const deliver = async (url: string) => (await thrown(httpDelivery<Edit>({ url })({ note: 'n', text: 't' }, lease(), signal()))) as Error;
    const json = await deliver(await start(422, JSON.stringify({ error: 'text too long' }), { 'content-type': 'application/json' }));
    expect(json).toBeInstanceOf(RejectError);
    expect(json.message).toBe('422 Unprocessable Entity: text too long');
    expect((await deliver(await start(409, '  no such note \n'))).message).toBe('409 Conflict: no such note');
    expect((await deliver(await start(410))).message).toBe('410 Gone');
    const long = await deliver(await start(400, 'x'.repeat(5000)));
    expect(long.message).toHaveLength(1000);
    expect(long.message.endsWith('…')).toBe(true);
    expect(await deliver(await start(413, 'too big'))).toBeInstanceOf(RejectError);
  });

  it('retries 429 and 503 after Retry-After (seconds or a date), else after retryMs at first; other statuses too', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const deliver = async (url: string) => (await thrown(httpDelivery<Edit>({ url, retryMs: 2500, clock: clock.now })({ note: 'n', text: 't' }, lease(), signal()))) as RetryLaterError;
    expect(await deliver(await start(503, '', { 'retry-after': '7' }))).toMatchObject({ afterMs: 7000, offline: false, message: '503 Service Unavailable: retry in 7000 ms' });
    expect(await deliver(await start(429, '', { 'retry-after': new Date(clock.now() + 12_000).toUTCString() }))).toMatchObject({ afterMs: 12_000 });
    expect(await deliver(await start(429, '', { 'retry-after': new Date(clock.now() - 60_000).toUTCString() }))).toMatchObject({ afterMs: 0 });
    expect(await deliver(await start(503, '', { 'retry-after': 'soon' }))).toMatchObject({ afterMs: 2500 });
    for (const status of [401, 403, 404, 408, 500, 502]) {
      const failure = await deliver(await start(status, 'nope'));
      expect(failure).toBeInstanceOf(RetryLaterError);
      expect(failure).toMatchObject({ afterMs: 2500, offline: false });
      expect(failure.message).toMatch(new RegExp(`^${status} .*: retry in 2500 ms$`));
    }
    expect(retryAfterMs(null, 0)).toBeNull();
    expect(retryAfterMs(' 3 ', 0)).toBe(3000);
    expect(retryAfterMs('-3', 0)).toBeNull();
  });

  it('backs off while answers name no wait: retryMs, then about the time the trouble lasted, up to maxRetryMs; an answer ends it', async () => {
    const clock = new ManualClock(1_000_000);
    let url = await start(500);
    const failing = url;
    const ok = await start(200);
    const unnamed = await start(503);
    const deliver = httpDelivery<Edit>({ url: () => url, retryMs: 1000, maxRetryMs: 8000, clock: clock.now });
    const wait = async () => ((await thrown(deliver({ note: 'n', text: 't' }, lease(), signal()))) as RetryLaterError).afterMs;
    // Two deliveries failing at once (concurrency) are one outage: both wait retryMs.
    expect([await wait(), await wait()]).toEqual([1000, 1000]);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      clock.advance(waits.at(-1) ?? 1000);
      waits.push(await wait());
    }
    // Each wait is the time since the trouble began, within ±20 %, never past maxRetryMs (and
    // still spread below it once there).
    let lasted = 1000;
    for (const w of waits) {
      expect(w).toBeGreaterThanOrEqual(Math.floor(Math.min(8000, lasted) * 0.8));
      expect(w).toBeLessThanOrEqual(Math.min(8000, Math.ceil(lasted * 1.2)));
      lasted += w;
    }
    expect(waits.at(-1)).toBeGreaterThan(4000);
    url = unnamed; // a 503 with no Retry-After is in the same run
    expect(await wait()).toBeGreaterThan(4000);
    url = ok;
    await deliver({ note: 'n', text: 't' }, lease(), signal());
    url = failing;
    expect(await wait()).toBe(1000); // a new run
    expect(() => httpDelivery({ url: 'http://x', retryMs: 2000, maxRetryMs: 1000 })).toThrow(/maxRetryMs \(1000\) must be at least options.retryMs/);
    expect(httpDelivery({ url: 'http://x', retryMs: 120_000 })).toBeTypeOf('function'); // the default ceiling follows a larger retryMs
  });

  it('takes a closed server and a silent one for offline', async () => {
    const closed = await answering(200);
    await closed.close();
    const refused = (await thrown(httpDelivery<Edit>({ url: closed.url, retryMs: 100 })({ note: 'n', text: 't' }, lease(), signal()))) as RetryLaterError;
    expect(refused).toBeInstanceOf(RetryLaterError);
    expect(refused).toMatchObject({ afterMs: 100, offline: true, message: expect.stringMatching(/^unreachable: .*ECONNREFUSED/) });
    const silent = await serve(() => {}); // takes the request, never answers
    closers.push(silent.close);
    const timedOut = (await thrown(httpDelivery<Edit>({ url: silent.url, timeoutMs: 50 })({ note: 'n', text: 't' }, lease(), signal()))) as RetryLaterError;
    expect(timedOut).toBeInstanceOf(RetryLaterError);
    expect(timedOut).toMatchObject({ offline: true, message: 'unreachable: no answer within 50 ms' });
  });

  it("rethrows the consumer's abort, never a retry", async () => {
    const silent = await serve(() => {});
    closers.push(silent.close);
    const controller = new AbortController();
    const sending = httpDelivery<Edit>({ url: silent.url })({ note: 'n', text: 't' }, lease(), { signal: controller.signal });
    const reason = new Error('lease lost');
    setTimeout(() => controller.abort(reason), 20);
    expect(await thrown(sending)).toBe(reason);
  });

  it('lets classify decide first, for an answer and for a network error', async () => {
    const url = await start(404);
    await httpDelivery<Edit>({ url, classify: (outcome) => (outcome instanceof Response && outcome.status === 404 ? 'ack' : undefined) })({ note: 'n', text: 't' }, lease(), signal());
    const mine = new RejectError('gone for good');
    expect(await thrown(httpDelivery<Edit>({ url, classify: () => mine })({ note: 'n', text: 't' }, lease(), signal()))).toBe(mine);
    const closed = await answering(200);
    await closed.close();
    const seen: unknown[] = [];
    await httpDelivery<Edit>({ url: closed.url, classify: (outcome) => (seen.push(outcome), 'ack') })({ note: 'n', text: 't' }, lease(), signal());
    expect(seen[0]).toBeInstanceOf(Error);
  });

  it('refuses bad options at once and a lease written by hand when called', async () => {
    expect(() => httpDelivery({ url: 'http://x', timeoutMS: 5 } as never)).toThrow(/did you mean "timeoutMs"/);
    expect(() => httpDelivery({ url: '' })).toThrow(RangeError);
    expect(() => httpDelivery({ url: 'http://x', retryMs: -1 })).toThrow(RangeError);
    expect(() => httpDelivery({} as never)).toThrow(TypeError);
    const { deliveryId: _, ...handMade } = lease();
    await expect(httpDelivery<Edit>({ url: 'http://127.0.0.1:9/x' })({ note: 'n', text: 't' }, handMade as Lease<Edit>, signal())).rejects.toThrow(/issued by a transport/);
  });
});
