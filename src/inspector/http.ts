/**
 * leasehold/inspector/http: the server half of the inspector for a queue that lives in a server
 * process (SQLite, PostgreSQL, memory). `inspectorHandler(transport)` is a fetch-style handler,
 * `(request: Request) => Promise<Response>`: the shape Node 18+ frameworks (Hono, Next.js route
 * handlers, Remix, Fastify and Express through their adapters), Deno, Bun and Workers all take,
 * and one that imports nothing from `node:`, so this entry runs anywhere. On plain `node:http`
 * it takes a ten-line adapter (docs/inspector.md). Mount it behind your own authentication:
 * it checks none.
 *
 * It serves reads only (`stats`, `inspect`, `inspectGroup`, `deadLetters`), plus `redrive` and
 * `discard` when `actions: true`, and long-polls for change notices, so `httpTransport` in the page follows
 * the queue within one notice. Every call is one `POST` of `{ method, args }`, answered with the
 * wire format of leasehold's other hosts (errors rebuilt as the same classes on the client).
 */
import { LeaseholdError } from '../errors.js';
import { decodeValue } from '../remote/codec.js';
import { type Answer, errorToWire } from '../remote/wire.js';
import { isChangeNotifier, type Transport } from '../transport/contract.js';
import { checkDuration, checkInteger, checkOptions } from '../validate.js';

/** Options of {@link inspectorHandler}. */
export interface InspectorHandlerOptions {
  /** Also serve `redrive` and `discard` (the inspector's buttons). Default false: reads only. */
  actions?: boolean;
  /** How long a change poll is held open when nothing changes (ms, > 0). Default 25 000: under most proxies' idle timeouts. */
  waitMs?: number;
  /**
   * The most characters of an event's JSON a read sends (a positive integer, or null for every
   * event whole). A longer event is sent as `{ truncated: true, chars, start }`: its length and
   * its first `maxEventChars` characters, so a queue of large events stays readable each second.
   * Default 4096.
   */
  maxEventChars?: number | null;
}

/** What a read sends in place of an event whose JSON is longer than `maxEventChars`. */
export interface TruncatedEvent {
  truncated: true;
  /** The length of the event's JSON, in characters. */
  chars: number;
  /** Its first `maxEventChars` characters. */
  start: string;
}

/** A fetch-style handler; `close()` ends its held polls and its change subscription. */
export interface InspectorHandler {
  (request: Request): Promise<Response>;
  close(): void;
}

const READS = new Set(['stats', 'inspect', 'inspectGroup', 'deadLetters']);
const ACTIONS = new Set(['redrive', 'discard']);

/**
 * Serves `transport` to `<leasehold-inspector>` through `httpTransport(url)`.
 * @throws TypeError / RangeError for a transport without `inspect` or bad options.
 */
export function inspectorHandler(transport: Transport, options: InspectorHandlerOptions = {}): InspectorHandler {
  if (typeof transport !== 'object' || transport === null || typeof transport.inspect !== 'function') throw new TypeError('transport must be a leasehold Transport');
  checkOptions('options', options, ['actions', 'waitMs', 'maxEventChars']);
  if (options.actions !== undefined && typeof options.actions !== 'boolean') throw new TypeError('options.actions must be a boolean');
  if (options.waitMs !== undefined) checkDuration('options.waitMs', options.waitMs, true);
  const actions = options.actions ?? false;
  const waitMs = options.waitMs ?? 25_000;
  const maxEventChars = options.maxEventChars === undefined ? 4096 : options.maxEventChars;
  if (maxEventChars !== null) checkInteger('options.maxEventChars', maxEventChars, 1, Number.MAX_SAFE_INTEGER);
  const trimmed = (items: { event: unknown }[] | undefined) => {
    if (maxEventChars === null || !items) return;
    for (const item of items) {
      const json = JSON.stringify(item.event) ?? '';
      if (json.length > maxEventChars) item.event = { truncated: true, chars: json.length, start: json.slice(0, maxEventChars) } satisfies TruncatedEvent;
    }
  };
  /** The answer of a read, its large events cut (the objects are the read's own copies or fresh ones). */
  const shortened = (method: string, value: unknown): unknown => {
    const read = value as { groups?: { messages: { event: unknown }[] }[]; group?: { messages: { event: unknown }[] } | null; deadLetters?: { event: unknown }[] };
    if (method === 'inspect') {
      for (const group of read.groups ?? []) trimmed(group.messages);
      trimmed(read.deadLetters);
    } else if (method === 'inspectGroup') {
      trimmed(read.group?.messages);
      trimmed(read.deadLetters);
    } else if (method === 'deadLetters') trimmed(value as { event: unknown }[]);
    return value;
  };

  // Change notices, counted: a poll that names the count it saw waits for a higher one.
  let version = 0;
  const waiting = new Set<() => void>();
  let unlisten: (() => void) | null = null;
  const wake = () => {
    for (const resolve of [...waiting]) resolve();
    waiting.clear();
  };
  const changes = (since: unknown): Promise<number> => {
    if (!unlisten && isChangeNotifier(transport)) {
      unlisten = transport.onChange(() => {
        version++;
        wake();
      });
    }
    if (typeof since !== 'number' || since !== version) return Promise.resolve(version);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        resolve(version);
      };
      const timer = setTimeout(done, waitMs);
      waiting.add(done);
    });
  };

  const handler = (async (request: Request): Promise<Response> => {
    if (request.method !== 'POST') return new Response('POST a JSON { method, args } call', { status: 405, headers: { allow: 'POST' } });
    let answer: Answer;
    try {
      const body = (await request.json()) as { method?: unknown; args?: unknown };
      const method = body?.method;
      const args = (Array.isArray(body?.args) ? decodeValue(body.args) : []) as unknown[];
      if (method === 'changes') answer = { ok: true, value: await changes(args[0]) };
      else if (typeof method === 'string' && (READS.has(method) || (actions && ACTIONS.has(method)))) {
        const call = (transport as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
        answer = { ok: true, value: shortened(method, await call.apply(transport, args)) };
      } else {
        throw new LeaseholdError('ACCESS_DENIED', `the inspector handler does not serve ${JSON.stringify(method)}: it serves stats, inspect, inspectGroup and deadLetters${actions ? ', redrive and discard' : ' (redrive and discard with options.actions: true)'}`);
      }
    } catch (error) {
      answer = { ok: false, error: errorToWire(error instanceof SyntaxError ? new TypeError(`the request body is not JSON: ${error.message}`) : error) };
    }
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
  }) as InspectorHandler;
  handler.close = () => {
    unlisten?.();
    unlisten = null;
    wake();
  };
  return handler;
}
