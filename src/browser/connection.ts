/**
 * The page's link to its host worker: numbered calls and their answers, change and owner
 * notices, and ending the host while the page cannot run and starting one again. Apart from
 * `openBrowserDatabase()` because it is the one stateful piece of the page side: the options
 * and the lifecycle events only drive it.
 * @internal
 */
import { ClosedError, StorageError } from '../errors.js';
import { type ChangeNotifier, DEFAULT_QUEUE, type PublishOptions, type Transport } from '../transport/contract.js';
import { checkChanges, checkExecution } from '../store/checks.js';
import { encodeCommit, encodeStep } from '../store/encode.js';
import { checkPublish, checkPublishItems } from '../transport/shared.js';
import { checkId, checkObject, toJson } from '../validate.js';
import type { CallMessage, HostOptions, HostToPage, HostVersion, OwnerInfo, PageToHost } from './protocol.js';
import { remoteTransport } from '../remote/client.js';
import type { Target } from '../remote/methods.js';
import { errorFromWire, type RemoteCall } from '../remote/wire.js';

/** One page's link to its host worker: numbered calls, answers, notices. */
export class Connection {
  readonly #createWorker: () => Worker;
  #worker: Worker;
  /** What the page asked to open, sent again to a new host after {@link resume}. */
  #options?: HostOptions;
  /** The host was ended while the page could not run ({@link suspend}); the next call or resume starts one. */
  #suspended = false;
  readonly #clock: () => number;
  /** Starts (or joins) the link broker: at open, and again whenever the host says it went away. */
  readonly #broker?: () => MessagePort | undefined;
  readonly #prefix = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('');
  #next = 0;
  readonly #pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  #opened?: { resolve: () => void; reject: (error: unknown) => void };
  #closing?: () => void;
  #closed = false;
  /** Change notice listeners, by queue. */
  readonly changeListeners = new Map<string, ListenerSet<[]>>();
  readonly ownerListeners = new ListenerSet<[OwnerInfo]>();
  /** The newer build that owns the database, once the host said this one is outdated. */
  outdated: HostVersion | undefined;
  readonly outdatedListeners = new ListenerSet<[HostVersion]>();

  constructor(createWorker: () => Worker, clock: () => number, broker?: () => MessagePort | undefined) {
    this.#createWorker = createWorker;
    this.#clock = clock;
    this.#broker = broker;
    this.#worker = this.#start();
  }

  #start(): Worker {
    const worker = this.#createWorker();
    worker.onmessage = (event: MessageEvent<HostToPage>) => this.#receive(event.data);
    worker.onerror = (event) => this.#fail(new StorageError('STORAGE_FAILED', `the leasehold host worker failed: ${event.message || 'it could not start'}`));
    return worker;
  }

  open(options: HostOptions): Promise<void> {
    this.#options = options;
    return new Promise((resolve, reject) => {
      this.#opened = { resolve, reject };
      this.#sendOpen(options);
    });
  }

  #sendOpen(options: HostOptions): void {
    const broker = this.#broker?.();
    this.#worker.postMessage({ kind: 'open', options, broker } satisfies PageToHost, broker ? [broker] : []);
  }

  /** Ends the host worker at once (its lock, pool and ports go with it). */
  terminate(): void {
    this.#worker.terminate();
  }

  /**
   * The page is going into the back/forward cache or being frozen: end the host now, so its Web
   * Lock and OPFS pool go to another tab. A call still waiting may or may not have been applied
   * (as when a tab crashes): it fails saying so.
   */
  suspend(): void {
    if (this.#closed || this.#suspended || !this.#options) return;
    this.#suspended = true;
    this.#worker.terminate();
    this.#fail(
      new StorageError(
        'STORAGE_BUSY',
        'the page went into the back/forward cache or was frozen while this call was in flight; it may or may not have been applied. Check, or retry if it is safe to.',
      ),
    );
  }

  /** The page runs again: a new host opens the database, as a new tab's would (usually as a forwarder now). */
  resume(): void {
    if (this.#closed || !this.#suspended || !this.#options) return;
    this.#suspended = false;
    this.#opened = undefined;
    this.#worker = this.#start();
    this.#sendOpen(this.#options);
  }

  onChange(queue: string, listener: () => void): () => void {
    let listeners = this.changeListeners.get(queue);
    if (!listeners) this.changeListeners.set(queue, (listeners = new ListenerSet<[]>()));
    return listeners.add(listener);
  }

  /** A transport of queue `name` whose calls go to the host worker as messages (each batch is one message, applied there as one transaction). */
  transport<Q>(name: string): Transport<Q> & ChangeNotifier {
    const send = (call: RemoteCall) => this.call(call.target, call.method, call.args, name);
    return remoteTransport<Q>(send, { subscribe: (listener) => this.onChange(name, listener) });
  }

  call(target: Target | 'host', method: string, args: unknown[], queue?: string): Promise<unknown> {
    if (this.#closed) return Promise.reject(new ClosedError(target === 'store' ? 'store' : 'transport'));
    // A page that was hidden and runs on without a pageshow (no event is promised): start again.
    this.resume();
    const id = `${this.#prefix}-${++this.#next}`;
    let now: number;
    try {
      now = this.#clock();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      const message: CallMessage = { kind: 'call', id, target, method, args, now };
      if (queue !== undefined && queue !== DEFAULT_QUEUE) message.queue = queue;
      try {
        this.#worker.postMessage(message);
      } catch (error) {
        // Structured clone refuses functions, symbols, DOM nodes…: values the SQL backend would
        // refuse too. Name the offending value the way the backend would have.
        reject(
          explainUnsendable(target, method, args) ??
            new TypeError(`${target}.${method}: an argument cannot be sent to the database worker (${(error as Error).message})`),
        );
        return;
      }
      this.#pending.set(id, { resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#suspended) {
      // No host runs: nothing to close but this side.
      this.#fail(new ClosedError('database'));
      return;
    }
    await new Promise<void>((resolve) => {
      this.#closing = resolve;
      this.#post({ kind: 'close' });
    });
    this.#worker.terminate();
    this.#fail(new ClosedError('database'));
  }

  #post(message: PageToHost): void {
    this.#worker.postMessage(message);
  }

  #receive(message: HostToPage): void {
    switch (message.kind) {
      case 'opened':
        this.#opened?.resolve();
        break;
      case 'open-failed':
        this.#opened?.reject(errorFromWire(message.error));
        break;
      case 'answer': {
        const waiting = this.#pending.get(message.id);
        if (!waiting) break;
        this.#pending.delete(message.id);
        if (message.ok) waiting.resolve(message.value);
        else waiting.reject(errorFromWire(message.error));
        break;
      }
      case 'changed':
        this.changeListeners.get(message.queue)?.emit();
        break;
      case 'owner':
        this.ownerListeners.emit(message.owner);
        break;
      case 'outdated':
        // Once per page: a host started again after the page was hidden may learn it again.
        if (this.outdated) break;
        this.outdated = message.newer;
        this.outdatedListeners.emit(message.newer);
        break;
      case 'broker': {
        const port = this.#closed ? undefined : this.#broker?.();
        if (port) this.#worker.postMessage({ kind: 'broker', port } satisfies PageToHost, [port]);
        break;
      }
      case 'closed':
        this.#closing?.();
        break;
    }
  }

  #fail(error: unknown): void {
    this.#opened?.reject(error);
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
  }
}

/** Listeners of one kind of notice: one that throws cannot stop the others (its error surfaces as an unhandled rejection). */
class ListenerSet<A extends unknown[]> {
  readonly #listeners = new Set<(...args: A) => void>();
  add(listener: (...args: A) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const entry = (...args: A) => listener(...args);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }
  emit(...args: A): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(...args);
      } catch (error) {
        void Promise.reject(error);
      }
    }
  }
}

/** The error the SQL backend gives for arguments that cannot even be cloned to reach it. */
function explainUnsendable(target: Target | 'host', method: string, args: unknown[]): Error | undefined {
  try {
    if (target === 'transport' && method === 'publish') {
      checkPublish(args[0], args[2] as PublishOptions | undefined);
      toJson('event', args[1]);
    }
    if (target === 'transport' && method === 'publishMany') {
      checkPublishItems(args[0]).forEach((item, i) => toJson(`items[${i}].event`, item.event));
    }
    if (target === 'store' && (method === 'commit' || method === 'save')) {
      checkExecution(args[0]);
      encodeCommit(args[0], checkChanges(args[1]));
    }
    if (target === 'store' && method === 'appendTrace') {
      checkId('executionId', args[0]);
      checkObject('entry', args[1]);
      encodeStep('entry', args[1]);
    }
  } catch (error) {
    return error as Error;
  }
  return undefined;
}
