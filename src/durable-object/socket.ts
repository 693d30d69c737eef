/**
 * Change notices over one WebSocket, opened while someone listens and reopened (with backoff)
 * if it drops. The object sends `{"changed": "<queue>"}` (`"*"`: any queue, from its alarm). A
 * notice is a hint: a dropped socket loses notices, never data, and consumers still poll at
 * their own pace.
 * @internal
 */
import { Listeners } from '../transport/notifier.js';
import { ANY_QUEUE } from './protocol.js';

/** The WebSocket class shape the client needs (browsers', Node ≥ 22's, or `ws`'s). */
export type WebSocketClass = new (url: string, options?: unknown) => {
  addEventListener(type: 'message' | 'close' | 'error' | 'open', listener: (event: { data?: unknown }) => void): void;
  close(code?: number): void;
};

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 10_000;

export class NoticeSocket {
  readonly #url: string;
  readonly #WebSocket: WebSocketClass | undefined;
  /** Passed to the constructor only for a class the caller supplied (`ws`): a browser's takes protocols there. */
  readonly #init: { headers: Record<string, string> } | undefined;
  /** Listeners by queue. */
  readonly #listeners = new Map<string, Listeners>();
  #count = 0;
  #socket: InstanceType<WebSocketClass> | undefined;
  #retryMs = RETRY_MIN_MS;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(url: string, WebSocket: WebSocketClass | undefined, headers: Record<string, string>) {
    this.#url = url;
    this.#WebSocket = WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
    this.#init = WebSocket ? { headers } : undefined;
  }

  add(queue: string, listener: () => void): () => void {
    if (!this.#WebSocket) throw new TypeError('onChange needs a WebSocket class: pass options.WebSocket (e.g. the ws package on Node 20)');
    let listeners = this.#listeners.get(queue);
    if (!listeners) this.#listeners.set(queue, (listeners = new Listeners()));
    const unsubscribe = listeners.add(listener);
    this.#count += 1;
    this.#open();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      unsubscribe();
      this.#count -= 1;
      if (this.#count === 0) this.#shut();
    };
  }

  /** Notifies the listeners of `queue` (`"*"`: of every queue), on a microtask, coalesced. */
  emit(queue: string): void {
    if (queue === ANY_QUEUE) for (const listeners of this.#listeners.values()) listeners.notify();
    else this.#listeners.get(queue)?.notify();
  }

  close(): void {
    this.#closed = true;
    for (const listeners of this.#listeners.values()) listeners.clear();
    this.#count = 0;
    this.#shut();
  }

  #open(): void {
    if (this.#socket || this.#closed || this.#count === 0) return;
    // Headers reach the upgrade request where the class accepts them (ws); browsers send cookies instead.
    const socket = this.#init ? new this.#WebSocket!(this.#url, this.#init) : new this.#WebSocket!(this.#url);
    this.#socket = socket;
    socket.addEventListener('open', () => (this.#retryMs = RETRY_MIN_MS));
    socket.addEventListener('message', (event) => {
      let queue = ANY_QUEUE;
      try {
        queue = String((JSON.parse(String(event.data)) as { changed?: unknown }).changed ?? ANY_QUEUE);
      } catch {
        // Not a notice we know: wake everyone, a spurious hint costs one look.
      }
      this.emit(queue);
    });
    socket.addEventListener('error', () => undefined);
    socket.addEventListener('close', () => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      if (this.#closed || this.#count === 0) return;
      this.#retry = setTimeout(() => this.#open(), this.#retryMs);
      this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
    });
  }

  #shut(): void {
    clearTimeout(this.#retry);
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.close(1000);
  }
}
