/**
 * The one HTTP client of leasehold's hosts: a call is one `POST` of a JSON body, and its answer
 * is the wire's `{ ok, value }` or `{ ok: false, error }`. Every client that speaks HTTP to a
 * host (a Durable Object's, the inspector's) posts through it, so the same failure reaches the
 * caller as the same error whichever host it called:
 *
 * - no answer (the request failed on the way, the body was cut off, or the host answered with
 *   something that is not a leasehold answer: a proxy's 502, a 404 page, HTML): `StorageError`
 *   `STORAGE_UNAVAILABLE`. The call may or may not have been applied, as with any remote call
 *   that got no answer; retry it as such.
 * - HTTP 401 or 403: `LeaseholdError` `ACCESS_DENIED` (the credentials were refused; nothing
 *   was applied), whatever the body says.
 * - a leasehold answer with an error (whatever the HTTP status, e.g. 400 for a body that is not
 *   JSON): that error, rebuilt as its own class (`errorFromWire`).
 * @internal
 */
import { LeaseholdError, StorageError } from '../errors.js';
import { type Answer, errorFromWire } from './wire.js';

/** The fetch the client needs: the global one fits, and so does a test's stand-in. */
export type HttpFetch = (input: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<{ status: number; text(): Promise<string> }>;

/** Where and how an {@link HttpClient} posts. */
export interface HttpClientOptions {
  /** The URL every call is posted to (relative URLs resolve as the fetch resolves them). */
  url: string;
  /** Sent with every request, after `content-type: application/json` (so they may replace it). */
  headers?: Record<string, string> | undefined;
  /** The fetch to use; default the global one. */
  fetch?: HttpFetch | undefined;
}

/**
 * Posts `body` (made JSON here) and resolves the host's answer when it is `ok`, with any fields
 * the host adds beside `value`. `label` names the call in errors (`transport.claim`).
 * @throws the errors of the module comment.
 */
export type HttpClient = (body: unknown, label: string) => Promise<{ ok: true; value?: unknown } & Record<string, unknown>>;

/**
 * An {@link HttpClient} for `options.url`.
 * @throws TypeError when no fetch is given and the runtime has none.
 */
export function httpClient(options: HttpClientOptions): HttpClient {
  const doFetch = options.fetch ?? (globalThis.fetch as unknown as HttpFetch | undefined);
  if (typeof doFetch !== 'function') throw new TypeError('options.fetch is required: this runtime has no global fetch');
  const url = options.url;
  const headers = { 'content-type': 'application/json', ...options.headers };
  return async (body, label) => {
    let status: number;
    let text: string;
    try {
      const response = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new StorageError('STORAGE_UNAVAILABLE', `${label}: the request to ${url} failed (${(error as Error)?.message ?? String(error)}); it may or may not have been applied`, { cause: error });
    }
    if (status === 401 || status === 403) {
      throw new LeaseholdError('ACCESS_DENIED', `${label}: ${url} refused the request (HTTP ${status}): check the token or credentials in options.headers; nothing was applied`);
    }
    const answer = readAnswer(text);
    if (answer === null) {
      const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      throw new StorageError(
        'STORAGE_UNAVAILABLE',
        `${label}: ${url} answered HTTP ${status} with no leasehold answer (is leasehold served at that URL?)${shown ? `: ${shown}` : ''}; it may or may not have been applied`,
      );
    }
    if (!answer.ok) throw errorFromWire(answer.error);
    return answer as { ok: true; value?: unknown } & Record<string, unknown>;
  };
}

/** `text` as a leasehold answer, or null when it is none (not JSON, or not the answer's shape). */
export function readAnswer(text: string): Answer | null {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof answer !== 'object' || answer === null) return null;
  const { ok, error } = answer as { ok?: unknown; error?: unknown };
  if (ok === true) return answer as Answer;
  if (ok !== false || typeof error !== 'object' || error === null) return null;
  const { name, message } = error as { name?: unknown; message?: unknown };
  return typeof name === 'string' && typeof message === 'string' ? (answer as Answer) : null;
}
