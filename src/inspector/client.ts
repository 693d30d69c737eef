/**
 * The page half of leasehold/inspector/http: a Transport-shaped client whose calls are `POST`s
 * to an `inspectorHandler`, and whose `onChange` long-polls it, so the inspector (or
 * `watchQueue`, or the React hooks) shows a server process's queue as it shows a local one.
 * The handler serves reads (and redrive/discard when it allows actions); any other method
 * rejects with a `LeaseholdError` of code `ACCESS_DENIED` and changes nothing. Failures on the
 * way map as for every leasehold HTTP client (src/remote/http.ts): no answer is `StorageError`
 * `STORAGE_UNAVAILABLE`, HTTP 401/403 is `ACCESS_DENIED`.
 */
import { remoteTransport } from '../remote/client.js';
import { encodeValue } from '../remote/codec.js';
import { httpClient } from '../remote/http.js';
import type { ChangeNotifier, Transport } from '../transport/contract.js';
import { checkObject, checkOptions } from '../validate.js';

/** Options of {@link httpTransport}. */
export interface HttpTransportOptions {
  /** Sent with every request (your app's credentials, e.g. `authorization`). */
  headers?: Record<string, string>;
  /** The fetch to use; default the global one (with the page's cookies, as `fetch` sends them same-origin). */
  fetch?: typeof fetch;
}

/** How long to wait after a failed change poll before the next one (the server restarting, say). */
const RETRY_MS = 2_000;

/**
 * A transport that reads the queue an `inspectorHandler` serves at `url`. A call that gets no
 * answer (the request fails, or what comes back is not a leasehold answer: the handler is not
 * mounted at `url`, say) rejects with a `StorageError` of code `STORAGE_UNAVAILABLE`; one refused
 * for its credentials (HTTP 401 or 403) with a `LeaseholdError` of code `ACCESS_DENIED`; the
 * handler's own refusals and the backend's errors arrive as their own classes.
 * @throws TypeError for a `url` that is not a string or URL, or bad options.
 */
export function httpTransport<E = unknown>(url: string | URL, options: HttpTransportOptions = {}): Transport<E> & ChangeNotifier {
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError('url must be a string or a URL');
  checkOptions('options', options, ['headers', 'fetch']);
  if (options.headers !== undefined) checkObject('options.headers', options.headers as unknown);
  const http = httpClient({ url: String(url), headers: options.headers, fetch: options.fetch });
  const post = async (method: string, args: unknown[]): Promise<unknown> => (await http({ method, args: encodeValue(args) }, `transport.${method}`)).value;

  const listeners = new Set<() => void>();
  let polling = false;
  const poll = async (): Promise<void> => {
    polling = true;
    let seen: number | null = null;
    while (listeners.size > 0) {
      try {
        const version = (await post('changes', [seen])) as number;
        if (seen !== null && version !== seen) for (const listener of [...listeners]) listener();
        seen = version;
      } catch {
        // The server went away or refused: try again a little later, while anyone listens.
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
    polling = false;
  };
  const subscribe = (listener: () => void): (() => void) => {
    const entry = () => {
      try {
        listener();
      } catch (error) {
        void Promise.reject(error);
      }
    };
    listeners.add(entry);
    if (!polling) void poll();
    return () => void listeners.delete(entry);
  };
  return remoteTransport<E>((call) => post(call.method, call.args), { subscribe });
}
