/**
 * The host worker: one per tab and database. What it decides — who owns the database, where a
 * call goes, what a race means — is election.ts's pure state machine; this file only observes
 * (the page, the BroadcastChannel, link and broker ports, the Web Lock, timers, the database) and
 * performs the effects the machine returns. No queue logic lives here: HostCore and the SQL
 * backends do the work.
 * @internal
 */
import { StorageError } from '../errors.js';
import { HOST_METHODS, HostCore, unknownMethod } from './core.js';
import { type HostEffect, type HostEvent, type HostState, initialHostState, PROTOCOL_VERSION, step, type TimerId } from './election.js';
import { SCHEMA_VERSION } from '../sqlite/schema.js';
import { HOST_SCHEMA_VERSION } from '../remote/journal.js';
import { explainStorageFailure, openHostDatabase, type OpenedDatabase } from './opfs.js';
import type { AnswerMessage, BrokerToHost, CallMessage, HostOptions, HostToHost, HostToPage, PageToHost } from './protocol.js';
import type { SqlTracer } from './trace.js';
import { errorToWire } from '../remote/wire.js';

interface Scope {
  postMessage(message: HostToPage): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<PageToHost>) => void): void;
  close(): void;
}

export function startHost(scope: Scope): void {
  let state: HostState<MessagePort> = initialHostState(`host-${randomId()}`);
  const queue: HostEvent<MessagePort>[] = [];
  let stepping = false;

  /** Feeds the machine one event; events raised while effects run wait their turn, in order. */
  const dispatch = (event: HostEvent<MessagePort>) => {
    queue.push(event);
    if (stepping) return;
    stepping = true;
    try {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const result = step(state, next);
        state = result.state;
        for (const effect of result.effects) perform(effect);
      }
    } finally {
      stepping = false;
    }
  };

  let channel: BroadcastChannel | undefined;
  const timers = new Map<TimerId, ReturnType<typeof setTimeout>>();
  /** Resolving it lets the database's lock go; aborting stops waiting for it. */
  let lock: { release: () => void; abort: AbortController } | undefined;
  let options: HostOptions | undefined;
  let opened: OpenedDatabase | undefined;
  let core: HostCore | undefined;
  /** Present only when the page asked for `traceSql` and this host owns the database. */
  let tracer: SqlTracer | undefined;
  /** Opening the database failed: every call gets this error. */
  let failure: { error: unknown } | undefined;

  const perform = (effect: HostEffect<MessagePort>) => {
    switch (effect.kind) {
      case 'to-page':
        return scope.postMessage(effect.message);
      case 'to-host':
        return (effect.via === 'channel' ? channel! : effect.via.port).postMessage(effect.message);
      case 'to-broker':
        return effect.port.postMessage(effect.message);
      case 'open-channel':
        channel = new BroadcastChannel(`leasehold:${effect.name}`);
        channel.onmessage = (event: MessageEvent<HostToHost>) => dispatch({ kind: 'host', message: event.data, via: 'channel' });
        return;
      case 'close-channel':
        return channel?.close();
      case 'request-lock': {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const abort = new AbortController();
        lock = { release, abort };
        navigator.locks
          .request(`leasehold:${effect.name}`, { signal: abort.signal }, () => {
            dispatch({ kind: 'lock-granted' });
            return held;
          })
          // Aborted: this host closed while it waited.
          .catch(() => undefined);
        return;
      }
      case 'release-lock':
        lock?.abort.abort();
        return lock?.release();
      case 'listen': {
        const { port } = effect;
        port.addEventListener('close', () => dispatch({ kind: 'port-closed', port }));
        port.onmessage = (event: MessageEvent<HostToHost>) => dispatch({ kind: 'host', message: event.data, via: { port } });
        return;
      }
      case 'listen-broker': {
        const { port } = effect;
        port.onmessage = (event: MessageEvent<BrokerToHost>) => dispatch({ kind: 'broker', port, message: event.data });
        return;
      }
      case 'watch-broker': {
        const { port } = effect;
        void navigator.locks?.request(effect.lock, { mode: 'shared' }, () => dispatch({ kind: 'broker-gone', port }));
        return;
      }
      case 'close-port':
        return effect.port.close();
      case 'set-timer':
        timers.set(
          effect.timer,
          setTimeout(() => {
            timers.delete(effect.timer);
            dispatch({ kind: 'timeout', timer: effect.timer });
          }, effect.ms),
        );
        return;
      case 'clear-timer':
        clearTimeout(timers.get(effect.timer));
        timers.delete(effect.timer);
        return;
      case 'open-database':
        options = effect.options;
        void openDatabase(effect.options);
        return;
      case 'serve':
        void serve(effect.call, effect.journaled, effect.caller).then((answer) => dispatch({ kind: 'served', answer, reply: effect.reply, call: effect.call }));
        return;
      case 'close-database':
        void closeDatabase();
        return;
    }
  };

  const openDatabase = async (requested: HostOptions) => {
    try {
      opened = await openHostDatabase(requested);
      // Loaded only when asked for: an app that never traces ships none of it (a chunk of its own).
      tracer = requested.traceSql ? new (await import('./trace.js')).SqlTracer() : undefined;
      core = new HostCore(opened.db, {
        name: requested.name,
        trace: tracer,
        maxAttempts: requested.maxAttempts,
        maxEventBytes: requested.maxEventBytes,
        onDeadLetter: requested.onDeadLetter,
        traceMax: requested.traceMax,
        onChange: (queue) => dispatch({ kind: 'changed', queue }),
      });
    } catch (error) {
      failure = { error };
      // This host will never own the database (election.ts): let the file go at once, so the
      // tab that takes the lock next can open it.
      try {
        if (opened && !opened.db.closed) opened.db.close();
      } catch {
        // Closing what failed to open may fail too; the pool is let go below all the same.
      }
      opened?.release();
      opened = undefined;
      dispatch({ kind: 'database-failed', error });
      return;
    }
    dispatch({ kind: 'database-opened' });
  };

  /** `journaled`: the call may be retried (it was forwarded); `caller`: whose turn it takes. See HostCore.serve. */
  const serve = async (call: CallMessage, journaled: boolean, caller: string): Promise<AnswerMessage> => {
    try {
      // A method of another build: its answer must never be another method's.
      if (call.target === 'host' && !HOST_METHODS.includes(call.method)) throw unknownMethod(options!.name, call.target, call.method);
      // The SQL trace lives with the owner: another tab's page reaches it by forwarding.
      if (call.target === 'host' && call.method === 'sqlTrace') return { kind: 'answer', id: call.id, ok: true, value: tracer?.entries() ?? [] };
      if (failure) throw failure.error;
      if (!core) throw new StorageError('STORAGE_UNAVAILABLE', 'the database is not open');
      // The database's origin, which the page keeps in its marker to name a loss.
      if (call.target === 'host') return { kind: 'answer', id: call.id, ok: true, value: opened!.db.prepare('SELECT origin FROM lh_origin WHERE id = 1').get<{ origin: string }>()!.origin };
      return { kind: 'answer', id: call.id, ok: true, value: await core.serve(call, journaled, caller) };
    } catch (error) {
      return { kind: 'answer', id: call.id, ok: false, error: errorToWire(await explainStorageFailure(error, options!.name)) };
    }
  };

  const closeDatabase = async () => {
    try {
      await core?.close();
    } finally {
      // Even after a failed close: the next owner must be able to open the file.
      opened?.release();
      // A host that handed the database over may open it again (its successor went away first).
      core = undefined;
      opened = undefined;
      dispatch({ kind: 'database-closed' });
    }
  };

  scope.addEventListener('message', (event) => {
    const message = event.data;
    if (message.kind === 'open') {
      const env = {
        locks: typeof navigator !== 'undefined' && !!navigator.locks,
        broadcastChannel: typeof BroadcastChannel !== 'undefined',
        storage: typeof navigator !== 'undefined' && typeof navigator.storage?.getDirectory === 'function',
        secureContext: globalThis.isSecureContext as boolean | undefined,
      };
      // The schemas this build writes: the newest owns the database (election.ts).
      const version = { schema: SCHEMA_VERSION, host: HOST_SCHEMA_VERSION, protocol: PROTOCOL_VERSION, ...(message.options.build === undefined ? {} : { build: message.options.build }) };
      dispatch({ kind: 'open', options: message.options, broker: message.broker, env, version });
    } else if (message.kind === 'call') dispatch({ kind: 'page-call', call: message });
    else if (message.kind === 'broker') dispatch({ kind: 'broker-port', port: message.port });
    else if (message.kind === 'close') dispatch({ kind: 'close' });
  });
}

function randomId(): string {
  // getRandomValues, unlike randomUUID, exists outside secure contexts too.
  return Array.from(crypto.getRandomValues(new Uint8Array(6)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
