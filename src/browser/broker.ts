/**
 * The link broker: a SharedWorker, one per origin (and build), that hands each forwarding host a
 * MessagePort straight to the owner's host. A BroadcastChannel message travels through the
 * browser process to every tab; a port's goes to one peer, and in Chromium costs about half the
 * round trip (measured: ~250 vs ~380 µs between two tabs' workers). BroadcastChannel cannot carry
 * ports and a worker cannot start a SharedWorker, so each page starts the broker and hands its
 * port to its host worker. The broker only pairs: it carries no calls, and a host without it (no
 * SharedWorker, as on Chrome for Android) forwards over the BroadcastChannel as before. The broker
 * runs in the renderer of the tab that started it and dies when that tab crashes; every host then
 * has its page start (or join) a new one and registers there again (see `alive` below, host.ts).
 * @internal
 */
import type { BrokerToHost, HostToBroker } from './protocol.js';

interface Scope {
  addEventListener(type: 'connect', listener: (event: MessageEvent) => void): void;
}

export function startBroker(scope: Scope): void {
  /** Hosts that own a database, by host id: where a forwarding host's link is delivered. */
  const owners = new Map<string, MessagePort>();
  /** Forwarding hosts that asked for an owner not yet registered here, by that owner's id. */
  const waiting = new Map<string, { from: string; port: MessagePort }[]>();

  const pair = (owner: MessagePort, ownerId: string, from: string, requester: MessagePort) => {
    const { port1, port2 } = new MessageChannel();
    owner.postMessage({ kind: 'link', side: 'owner', peer: from, port: port1 } satisfies BrokerToHost, [port1]);
    requester.postMessage({ kind: 'link', side: 'caller', peer: ownerId, port: port2 } satisfies BrokerToHost, [port2]);
  };

  // A Web Lock held for the broker's life, named for this broker alone. A crash of the tab whose
  // renderer runs the broker kills it without a word (Chromium 156 fires no MessagePort `close`
  // and no SharedWorker `error`), but its locks are released: each host waits on this one to learn
  // that the broker is gone and to join a new one (host.ts).
  const lock = `leasehold:broker:${Math.random().toString(36).slice(2)}`;
  const held = new Promise<void>((resolve) => void navigator.locks?.request(lock, () => (resolve(), new Promise(() => {}))));

  scope.addEventListener('connect', (event) => {
    const port = event.ports[0]!;
    void held.then(() => port.postMessage({ kind: 'alive', lock } satisfies BrokerToHost));
    port.onmessage = ({ data }: MessageEvent<HostToBroker>) => {
      if (data.kind === 'serve') {
        owners.set(data.hostId, port);
        for (const { from, port: requester } of waiting.get(data.hostId) ?? []) pair(port, data.hostId, from, requester);
        waiting.delete(data.hostId);
      } else if (data.kind === 'connect') {
        const owner = owners.get(data.to);
        if (owner) pair(owner, data.to, data.from, port);
        else waiting.set(data.to, [...(waiting.get(data.to) ?? []), { from: data.from, port }]);
      } else if (data.kind === 'leave') {
        // A host that closes says so; one whose tab crashed stays listed (a few bytes) and its
        // links are never answered: the next owner's announcement moves its callers on.
        owners.delete(data.hostId);
        for (const [to, list] of waiting) {
          const rest = list.filter((w) => w.from !== data.hostId);
          if (rest.length > 0) waiting.set(to, rest);
          else waiting.delete(to);
        }
      }
    };
  });
}
