/**
 * The client's one WebSocket to an object: change notices, and calls when the client sends
 * them this way (`calls: 'websocket'`).
 *
 * Notices: the socket is open while someone listens and reopened (with backoff) if it drops.
 * The object sends `{"changed": "<queue>"}` (`"*"`: any queue, from its alarm). A notice is a
 * hint: a dropped socket loses notices, never data, and consumers still poll at their own pace.
 *
 * Calls: the first call opens the socket, which then stays open until `close()`. Each call is a
 * message with an id; the object answers with the same id. A call sent while the socket is
 * connecting waits for it. When the socket drops, every call still unanswered fails with
 * `STORAGE_UNAVAILABLE` (it may or may not have been applied, as when an HTTP request is cut
 * off), and the next call opens a new one.
 * @internal
 */
import { ClosedError, LeaseholdError, StorageError } from '../errors.js';
import { Listeners } from '../transport/notifier.js';
import { ANY_QUEUE, type CallAnswer, type SocketAnswer, type SocketCall } from './protocol.js';

/** The WebSocket class shape the client needs (browsers', Node ≥ 22's, or `ws`'s). */
export type WebSocketClass = new (url: string, options?: unknown) => {
  addEventListener(type: 'message' | 'close' | 'error' | 'open', listener: (event: { data?: unknown; message?: unknown }) => void): void;
  send(data: string): void;
  close(code?: number): void;
};

type Socket = InstanceType<WebSocketClass>;

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 10_000;

/** A call waiting for its answer: `label` names it in errors (`transport.claim`). */
interface Pending {
  label: string;
  resolve(answer: CallAnswer): void;
  reject(error: Error): void;
}

export class ObjectSocket {
  readonly #url: string;
  /** The object's base URL, for error messages. */
  readonly #root: string;
  readonly #WebSocket: WebSocketClass | undefined;
  /** Passed to the constructor only for a class the caller supplied (`ws`): a browser's takes protocols there. */
  readonly #init: { headers: Record<string, string> } | undefined;
  /** Listeners by queue. */
  readonly #listeners = new Map<string, Listeners>();
  #count = 0;
  #socket: Socket | undefined;
  /** Whether {@link #socket} has opened (calls sent before then wait in {@link #unsent}). */
  #open = false;
  #unsent: string[] = [];
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  /** A call was made: keep the socket open between calls. */
  #calling = false;
  /** What the last failed connection attempt said (ws reports an HTTP refusal there). */
  #lastError = '';
  #retryMs = RETRY_MIN_MS;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(url: string, root: string, WebSocket: WebSocketClass | undefined, headers: Record<string, string>) {
    this.#url = url;
    this.#root = root;
    this.#WebSocket = WebSocket ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
    this.#init = WebSocket ? { headers } : undefined;
  }

  /** Whether a WebSocket class is at hand (given, or global). */
  get available(): boolean {
    return this.#WebSocket !== undefined;
  }

  add(queue: string, listener: () => void): () => void {
    if (!this.#WebSocket) throw new TypeError('onChange needs a WebSocket class: pass options.WebSocket (e.g. the ws package on Node 20)');
    let listeners = this.#listeners.get(queue);
    if (!listeners) this.#listeners.set(queue, (listeners = new Listeners()));
    const unsubscribe = listeners.add(listener);
    this.#count += 1;
    this.#connect();
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      unsubscribe();
      this.#count -= 1;
      if (!this.#wanted()) this.#shut();
    };
  }

  /** Notifies the listeners of `queue` (`"*"`: of every queue), on a microtask, coalesced. */
  emit(queue: string): void {
    if (queue === ANY_QUEUE) for (const listeners of this.#listeners.values()) listeners.notify();
    else this.#listeners.get(queue)?.notify();
  }

  /**
   * Sends `call` and resolves the object's answer.
   * @throws StorageError `STORAGE_UNAVAILABLE` when the socket cannot open or drops before the
   * answer; LeaseholdError `ACCESS_DENIED` when the object refused the connection's credentials
   * (where the WebSocket class reports the HTTP status, as `ws` does).
   */
  call(call: Omit<SocketCall, 'id'>, label: string): Promise<CallAnswer> {
    if (this.#closed) return Promise.reject(new ClosedError(`${label}: the client`));
    const id = this.#nextId++;
    const text = JSON.stringify({ ...call, id } satisfies SocketCall);
    return new Promise<CallAnswer>((resolve, reject) => {
      this.#pending.set(id, { label, resolve, reject });
      this.#calling = true;
      this.#connect();
      if (this.#open) this.#socket!.send(text);
      else this.#unsent.push(text);
    });
  }

  close(): void {
    this.#closed = true;
    for (const listeners of this.#listeners.values()) listeners.clear();
    this.#count = 0;
    this.#shut();
  }

  #wanted(): boolean {
    return !this.#closed && (this.#count > 0 || this.#calling);
  }

  #connect(): void {
    if (this.#socket || !this.#wanted()) return;
    clearTimeout(this.#retry);
    // Headers reach the upgrade request where the class accepts them (ws); browsers send cookies instead.
    const socket = this.#init ? new this.#WebSocket!(this.#url, this.#init) : new this.#WebSocket!(this.#url);
    this.#socket = socket;
    this.#open = false;
    socket.addEventListener('open', () => {
      if (this.#socket !== socket) return;
      this.#open = true;
      this.#retryMs = RETRY_MIN_MS;
      const unsent = this.#unsent;
      this.#unsent = [];
      for (const text of unsent) socket.send(text);
    });
    socket.addEventListener('message', (event) => this.#receive(String(event.data)));
    socket.addEventListener('error', (event) => {
      if (this.#socket === socket) this.#lastError = String(event.message ?? '');
    });
    socket.addEventListener('close', () => {
      if (this.#socket !== socket) return;
      const opened = this.#open;
      this.#socket = undefined;
      this.#open = false;
      this.#fail(opened);
      if (!this.#wanted() || this.#count === 0) return;
      this.#retry = setTimeout(() => this.#connect(), this.#retryMs);
      this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
    });
  }

  #receive(text: string): void {
    let message: { id?: unknown; changed?: unknown } | null;
    try {
      message = JSON.parse(text) as { id?: unknown; changed?: unknown } | null;
    } catch {
      // Not a message we know: wake everyone, a spurious hint costs one look.
      this.emit(ANY_QUEUE);
      return;
    }
    if (typeof message?.id === 'number') {
      const pending = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      const { id: _, ...answer } = message as SocketAnswer;
      pending?.resolve(answer as CallAnswer);
      return;
    }
    this.emit(String(message?.changed ?? ANY_QUEUE));
  }

  /** Fails every unanswered call: the socket closed (`opened`: after it had opened). */
  #fail(opened: boolean): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#unsent = [];
    // ws reports a refused upgrade as "Unexpected server response: 401"; browsers say nothing.
    const status = opened ? null : /\b(401|403)\b/.exec(this.#lastError)?.[1];
    for (const call of pending) {
      if (status) {
        call.reject(new LeaseholdError('ACCESS_DENIED', `${call.label}: ${this.#root} refused the WebSocket (HTTP ${status}): check the token or credentials in options.headers; nothing was applied`));
      } else {
        const how = opened ? 'the WebSocket closed before the answer' : `the WebSocket did not open${this.#lastError ? ` (${this.#lastError})` : ''}`;
        call.reject(new StorageError('STORAGE_UNAVAILABLE', `${call.label}: ${how} to ${this.#root}; it may or may not have been applied`));
      }
    }
    this.#lastError = '';
  }

  #shut(): void {
    clearTimeout(this.#retry);
    const socket = this.#socket;
    this.#socket = undefined;
    this.#open = false;
    this.#fail(true);
    socket?.close(1000);
  }
}
