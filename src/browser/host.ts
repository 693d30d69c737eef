/**
 * The host worker: one per tab and database. The hosts of a database elect an owner with the
 * Web Locks API (the lock is held for the owner's lifetime); only the owner opens the database.
 * Every other host forwards its page's calls to the owner and relays the answers, so a page never
 * knows or cares which tab owns the file. Calls travel over a MessagePort straight to the owner's
 * host when the link broker (broker.ts) has paired the two, else over the database's
 * BroadcastChannel, which also carries announcements and change notices. When the owner goes
 * away the lock passes to a waiting host, which opens the database and announces itself; calls
 * still waiting for an answer are sent again (over the channel, until a port to the new owner is
 * paired), and the owner's call journal answers any that were already applied. No queue logic
 * lives here: HostCore and the SQL backends do the work.
 * @internal
 */
import { StorageError } from '../errors.js';
import { HostCore } from './core.js';
import { explainStorageFailure, openHostDatabase, type OpenedDatabase } from './opfs.js';
import type { AnswerMessage, BrokerToHost, CallMessage, HostOptions, HostToBroker, HostToHost, HostToPage, OwnerInfo, PageToHost } from './protocol.js';
import type { SqlTracer } from './trace.js';
import { errorToWire } from '../remote/wire.js';

/** How long a page's open waits for an owner to answer before it reports the database stuck. */
const OPEN_TIMEOUT_MS = 10_000;
/** How long a forwarded call waits for the owner's answer before failing. */
const CALL_TIMEOUT_MS = 15_000;

interface Scope {
  postMessage(message: HostToPage): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<PageToHost>) => void): void;
  close(): void;
}

export function startHost(scope: Scope): void {
  const hostId = `host-${randomId()}`;
  let options: HostOptions | undefined;
  let core: HostCore | undefined;
  /** Present only when the page asked for `traceSql` and this host owns the database. */
  let tracer: SqlTracer | undefined;
  let opened: OpenedDatabase | undefined;
  /** The owner failed to open the database: every call gets this error. */
  let ownerError: unknown;
  let ownerId: string | null = null;
  let channel: BroadcastChannel | undefined;
  /** The page's port to the link broker, when it started one. */
  let broker: MessagePort | undefined;
  /** A forwarding host's port to the owner `peer`; `ready` once calls may take it (see forward). */
  let link: { peer: string; port: MessagePort; ready: boolean } | undefined;
  /** An owner's ports to the hosts that forward to it. */
  const links = new Set<MessagePort>();
  let releaseLock: (() => void) | undefined;
  /** Calls of this tab's page sent to another tab's owner, awaiting an answer. */
  const forwarded = new Map<string, { call: CallMessage; timer: ReturnType<typeof setTimeout> }>();
  let openSettled = false;
  /** close() has begun: forwarded calls still queued go unanswered, to be retried on the next owner. */
  let closing = false;
  let openTimer: ReturnType<typeof setTimeout> | undefined;

  const toPage = (message: HostToPage) => scope.postMessage(message);
  const via = () => (ownerId === hostId ? 'self' : link?.ready && link.peer === ownerId ? 'port' : 'channel');
  const owner = (): OwnerInfo => ({ ownerId, isThisTab: ownerId === hostId, via: via() });
  const toBroker = (message: HostToBroker) => broker?.postMessage(message);
  const isOwner = () => ownerId === hostId;

  const settleOpen = (error?: unknown) => {
    if (openSettled) return;
    openSettled = true;
    clearTimeout(openTimer);
    toPage(error === undefined ? { kind: 'opened', owner: owner() } : { kind: 'open-failed', error: errorToWire(error) });
  };

  /** `journaled`: the call may be retried (it was forwarded); `caller`: whose turn it takes. See HostCore.serve. */
  const serveLocally = async (call: CallMessage, journaled: boolean, caller: string): Promise<AnswerMessage> => {
    try {
      // The SQL trace lives with the owner: another tab's page reaches it by forwarding.
      if (call.target === 'host') return { kind: 'answer', id: call.id, ok: true, value: tracer?.entries() ?? [] };
      if (ownerError !== undefined) throw ownerError;
      if (!core) throw new StorageError('STORAGE_UNAVAILABLE', 'the database is not open');
      return { kind: 'answer', id: call.id, ok: true, value: await core.serve(call, journaled, caller) };
    } catch (error) {
      return { kind: 'answer', id: call.id, ok: false, error: errorToWire(await explainStorageFailure(error, options!.name)) };
    }
  };

  const forward = (call: CallMessage) => {
    const timer = setTimeout(() => {
      settled(call.id);
      const error = new StorageError(
        'STORAGE_BUSY',
        `no tab answered for database ${JSON.stringify(options?.name)} within ${CALL_TIMEOUT_MS / 1000} s; the call may or may not have been applied. The tab that owns it may be frozen: close it, or retry.`,
      );
      toPage({ kind: 'answer', id: call.id, ok: false, error: errorToWire(error) });
    }, CALL_TIMEOUT_MS);
    forwarded.set(call.id, { call, timer });
    (link?.ready && link.peer === ownerId ? link.port : channel!).postMessage({ kind: 'call', from: hostId, call } satisfies HostToHost);
  };

  /**
   * Calls take the port only once nothing sent over the channel waits for an answer, so a page's
   * calls reach the owner in the order it made them, as over the channel alone.
   */
  const settled = (id: string) => {
    forwarded.delete(id);
    if (link && forwarded.size === 0) link.ready = true;
  };

  const dropLink = () => {
    link?.port.close();
    link = undefined;
  };

  /**
   * A port to the broker, at open or after the last one died. The broker lives in the renderer of
   * the tab that started it and dies with it when that tab crashes (a graceful close leaves it to
   * the other tabs). Its Web Lock is then released: this host, waiting for it, asks its page to
   * start or join a broker again and registers there (serve, or connect to the current owner).
   */
  const attachBroker = (port: MessagePort) => {
    broker = port;
    port.onmessage = (event: MessageEvent<BrokerToHost>) => {
      if (event.data.kind === 'link') return onBrokerMessage(event.data);
      // Shared: every host waiting is told at once, none waits for another (a frozen tab's, say).
      void navigator.locks?.request(event.data.lock, { mode: 'shared' }, () => {
        if (port !== broker || closing) return;
        broker = undefined;
        toPage({ kind: 'broker' });
      });
    };
    if (ownerId === null) return;
    if (isOwner()) {
      if (ownerError === undefined) toBroker({ kind: 'serve', hostId });
    } else if (link?.peer !== ownerId) {
      toBroker({ kind: 'connect', from: hostId, to: ownerId });
    }
  };

  const onBrokerMessage = (data: Extract<BrokerToHost, { kind: 'link' }>) => {
    const { peer, port } = data;
    if (data.side === 'owner' && isOwner() && !closing) {
      // A forwarding host's link: its calls are answered on the same port.
      links.add(port);
      port.addEventListener('close', () => links.delete(port));
      port.onmessage = (event: MessageEvent<HostToHost>) => void onChannelMessage(event.data, port);
    } else if (data.side === 'caller' && peer === ownerId && link?.peer !== peer && !closing) {
      dropLink();
      link = { peer, port, ready: forwarded.size === 0 };
      port.onmessage = (event: MessageEvent<HostToHost>) => void onChannelMessage(event.data, port);
    } else {
      // Paired with an owner that has since been replaced, or again (a connect re-sent to a new
      // broker crossed the link the old one paired), or by a host now closing.
      port.close();
    }
  };

  const onPageCall = async (call: CallMessage) => {
    if (call.target === 'host' && call.method === 'owner') {
      toPage({ kind: 'answer', id: call.id, ok: true, value: owner() });
    } else if (options?.storage === 'memory' || isOwner()) {
      toPage(await serveLocally(call, false, hostId));
    } else {
      forward(call);
    }
  };

  const becomeOwner = async () => {
    try {
      opened = await openHostDatabase(options!);
      // Loaded only when asked for: an app that never traces ships none of it (a chunk of its own).
      tracer = options!.traceSql ? new (await import('./trace.js')).SqlTracer() : undefined;
      core = new HostCore(opened.db, {
        trace: tracer,
        maxAttempts: options!.maxAttempts,
        traceMax: options!.traceMax,
        onChange: (queue) => {
          toPage({ kind: 'changed', queue });
          channel?.postMessage({ kind: 'changed', queue } satisfies HostToHost);
        },
      });
    } catch (error) {
      ownerError = error;
    }
    ownerId = hostId;
    dropLink();
    if (ownerError === undefined) toBroker({ kind: 'serve', hostId });
    channel?.postMessage({ kind: 'owner', hostId } satisfies HostToHost);
    toPage({ kind: 'owner', owner: owner() });
    settleOpen(ownerError);
    // Calls this tab had forwarded to the old owner are now ours to serve (the journal answers
    // any the old owner applied before it went away).
    for (const [id, { call, timer }] of forwarded) {
      clearTimeout(timer);
      forwarded.delete(id);
      void serveLocally(call, true, hostId).then(toPage);
    }
  };

  /** `reply`: where a call came from and its answer goes (a link port, or the channel). */
  const onChannelMessage = async (message: HostToHost, reply: MessagePort | BroadcastChannel = channel!) => {
    switch (message.kind) {
      case 'call': {
        if (!isOwner()) break;
        const answer = await serveLocally(message.call, true, message.from);
        // Unanswered, the caller's host sends the call again to the next owner (the journal
        // there would answer it had it been applied here; it was not: close drops queued calls).
        if (!closing) reply.postMessage({ kind: 'answer', to: message.from, answer } satisfies HostToHost);
        break;
      }
      case 'answer': {
        const waiting = message.to === hostId ? forwarded.get(message.answer.id) : undefined;
        if (waiting) {
          clearTimeout(waiting.timer);
          settled(message.answer.id);
          toPage(message.answer);
        }
        break;
      }
      case 'who':
        if (isOwner()) channel!.postMessage({ kind: 'owner', hostId } satisfies HostToHost);
        break;
      case 'owner':
        if (message.hostId === ownerId) break;
        ownerId = message.hostId;
        dropLink();
        toBroker({ kind: 'connect', from: hostId, to: message.hostId });
        toPage({ kind: 'owner', owner: owner() });
        settleOpen();
        // The previous owner may have died holding our calls: send them again.
        for (const { call } of forwarded.values()) channel!.postMessage({ kind: 'call', from: hostId, call } satisfies HostToHost);
        break;
      case 'changed':
        toPage({ kind: 'changed', queue: message.queue });
        break;
    }
  };

  const open = async (requested: HostOptions, brokerPort?: MessagePort) => {
    options = requested;
    if (brokerPort && requested.storage !== 'memory') attachBroker(brokerPort);
    if (requested.storage === 'memory') {
      await becomeOwner();
      return;
    }
    if (typeof navigator === 'undefined' || !navigator.locks || typeof BroadcastChannel === 'undefined') {
      settleOpen(
        new StorageError(
          'STORAGE_UNAVAILABLE',
          (globalThis.isSecureContext === false ? 'this page is not a secure context, so the browser offers it no Web Locks and no OPFS' : 'this browser offers no Web Locks or BroadcastChannel') +
            ", which a shared OPFS database needs. Serve the page from https:// or http://localhost, or open it with storage: 'memory'.",
        ),
      );
      return;
    }
    channel = new BroadcastChannel(`leasehold:${requested.name}`);
    channel.onmessage = (event: MessageEvent<HostToHost>) => void onChannelMessage(event.data);
    openTimer = setTimeout(
      () =>
        settleOpen(
          new StorageError(
            'STORAGE_BUSY',
            `database ${JSON.stringify(requested.name)} is owned by another tab that does not answer; close the other tabs of this site and retry.`,
          ),
        ),
      OPEN_TIMEOUT_MS,
    );
    const held = new Promise<void>((resolve) => (releaseLock = resolve));
    void navigator.locks.request(`leasehold:${requested.name}`, async () => {
      await becomeOwner();
      await held;
    });
    channel.postMessage({ kind: 'who' } satisfies HostToHost);
  };

  const close = async () => {
    closing = true;
    if (isOwner()) toBroker({ kind: 'leave', hostId });
    for (const { timer } of forwarded.values()) clearTimeout(timer);
    forwarded.clear();
    try {
      await core?.close();
    } finally {
      opened?.release();
      releaseLock?.();
      channel?.close();
      dropLink();
      for (const port of links) port.close();
      broker?.close();
      toPage({ kind: 'closed' });
    }
  };

  scope.addEventListener('message', (event) => {
    const message = event.data;
    if (message.kind === 'open') void open(message.options, message.broker);
    else if (message.kind === 'call') void onPageCall(message);
    else if (message.kind === 'broker') attachBroker(message.port);
    else if (message.kind === 'close') void close();
  });
}

function randomId(): string {
  // getRandomValues, unlike randomUUID, exists outside secure contexts too.
  return Array.from(crypto.getRandomValues(new Uint8Array(6)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
