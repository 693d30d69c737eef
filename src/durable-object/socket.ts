/**
 * Change notices over one WebSocket, opened while someone listens and reopened (with backoff)
 * if it drops. A notice is a hint: a dropped socket loses notices, never data, and consumers
 * still poll at their own pace.
 * @internal
 */
import { Listeners } from '../transport/notifier.js';

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
  readonly #listeners = new Listeners();
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

  add(listener: () => void): () => void {
    if (!this.#WebSocket) throw new TypeError('onChange needs a WebSocket class: pass options.WebSocket (e.g. the ws package on Node 20)');
    const unsubscribe = this.#listeners.add(listener);
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

  /** Notifies every listener (on a microtask, coalesced; one that throws cannot stop the others). */
  emit(): void {
    this.#listeners.notify();
  }

  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#count = 0;
    this.#shut();
  }

  #open(): void {
    if (this.#socket || this.#closed || this.#count === 0) return;
    // Headers reach the upgrade request where the class accepts them (ws); browsers send cookies instead.
    const socket = this.#init ? new this.#WebSocket!(this.#url, this.#init) : new this.#WebSocket!(this.#url);
    this.#socket = socket;
    socket.addEventListener('open', () => (this.#retryMs = RETRY_MIN_MS));
    socket.addEventListener('message', () => this.emit());
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
