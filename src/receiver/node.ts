/**
 * A fetch-style handler on `node:http`: the request as a standard `Request` (its body a stream
 * read only as the handler pulls it, and never past a limit), the `Response` written back.
 * Node's objects are typed structurally (the parts used): nothing of Node is loaded or needed
 * for types, so the entry still runs, and type-checks, on Workers.
 */
import { checkInteger, checkOptions } from '../validate.js';
import { BodyTooLarge } from './protocol.js';

/** The slice of `http.IncomingMessage` used. */
export interface NodeRequestLike extends AsyncIterable<Uint8Array> {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** The slice of `http.ServerResponse` used. */
export interface NodeResponseLike {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  writeHead(status: number, statusText: string, headers: Record<string, string>): unknown;
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  once(event: 'drain', listener: () => void): unknown;
  destroy(): unknown;
}

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** The most bytes of a request body passed on; past it the handler's read fails (a receiver answers 413). Default 1 MiB. */
  maxBodyBytes?: number;
}

/**
 * The request's body as a pull stream: a chunk is read from the socket only when the handler
 * asks for one, so a handler that stops reading (a body too large) leaves the rest unread.
 */
function bodyOf(request: NodeRequestLike, max: number, done: () => void): ReadableStream<Uint8Array> {
  const chunks = request[Symbol.asyncIterator]();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) {
          done();
          controller.close();
          return;
        }
        size += next.value.byteLength;
        if (size > max) controller.error(new BodyTooLarge(max));
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      } catch (error) {
        controller.error(error);
      }
    },
    cancel() {
      void chunks.return?.();
    },
  });
}

/**
 * Serves `handler` (e.g. `receiver.handle`) on `node:http`:
 * `createServer(toNodeListener(receiver.handle))`. The request URL is built from the Host
 * header; a request whose body the handler did not read to its end is answered with
 * `Connection: close`, so Node does not keep reading it to reuse the connection. A handler that
 * throws is answered 500.
 * @throws TypeError / RangeError for a handler that is not a function or bad options.
 */
export function toNodeListener(
  handler: (request: Request) => Response | Promise<Response>,
  options: NodeListenerOptions = {},
): (request: NodeRequestLike, response: NodeResponseLike) => void {
  if (typeof handler !== 'function') throw new TypeError('handler must be a function (request: Request) => Promise<Response>');
  checkOptions('options', options, ['maxBodyBytes'], true);
  const max = options?.maxBodyBytes ?? 1024 * 1024;
  checkInteger('options.maxBodyBytes', max, 1, 2 ** 31 - 1);

  return (request, response) => {
    const serve = async (): Promise<void> => {
      let bodyRead = request.method === 'GET' || request.method === 'HEAD';
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (value === undefined) continue;
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
      const init: RequestInit & { duplex?: 'half' } = { method: request.method ?? 'GET', headers };
      if (!bodyRead) {
        init.body = bodyOf(request, max, () => (bodyRead = true));
        init.duplex = 'half'; // Node's fetch wants it for a stream body
      }
      let answer: Response;
      try {
        answer = await handler(new Request(url, init));
      } catch {
        answer = new Response(JSON.stringify({ error: 'the server failed' }), { status: 500, headers: { 'content-type': 'application/json' } });
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        out[name] = value;
      });
      if (!bodyRead) out.connection = 'close';
      if (answer.statusText) response.writeHead(answer.status, answer.statusText, out);
      else response.writeHead(answer.status, out);
      if (answer.body === null) {
        response.end();
        return;
      }
      const reader = answer.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!response.write(value)) await new Promise<void>((resolve) => response.once('drain', resolve));
      }
      response.end();
    };
    serve().catch(() => {
      if (!response.headersSent) {
        response.writeHead(500, {});
        response.end();
      }
      else response.destroy();
    });
  };
}
