/**
 * What the shared suites cannot see of the Durable Object backend: notices to other clients over
 * the hibernatable WebSocket, the alarm that wakes them when a lease runs out, raw RPC calls,
 * the router's token check, and the argument codec. Runs against the workerd of the global setup.
 */
import { WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../src/remote/codec.js';
import { connectLeasehold, type LeaseholdClient } from '../src/durable-object/client.js';
import { STORE_METHODS, TRANSPORT_METHODS } from '../src/remote/methods.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { connect, freshObject } from './support/workerd-backends.js';
import { workerdUrl } from './support/servers.js';

// This file needs the run's workerd: started here, before any test (pools and sockets take its URL at once).
await workerdUrl();

/**
 * Subscribes `watcher` for good and returns a way to await its next notice. Resolves once the
 * socket is known to be open: `writer` publishes until the watcher hears of it (the upgrade
 * takes a moment; a hint sent before it is simply missed).
 */
async function watch(watcher: LeaseholdClient, writer: LeaseholdClient): Promise<{ after(time: number, ms?: number): Promise<number>; stop(): void }> {
  const heard: number[] = [];
  let check: (() => void) | undefined;
  const stop = watcher.transport.onChange(() => {
    heard.push(Date.now());
    check?.();
  });
  // Up to 600 publishes 50 ms apart (30 s and more): the upgrade is quick, but on a loaded
  // machine not within a few seconds.
  for (let i = 0; heard.length === 0; i++) {
    if (i === 600) throw new Error('the watcher heard of no change in 600 publishes');
    await writer.transport.publish('warm-up', i);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  /**
   * Resolves the time of the first notice heard at or after `time` (wall clock); rejects after
   * `ms`, generous: a notice or an alarm due in under a second can take seconds on a loaded machine.
   */
  const after = (time: number, ms = 30_000) =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no notice within ${ms} ms`)), ms);
      check = () => {
        const found = heard.find((t) => t >= time);
        if (found === undefined) return;
        clearTimeout(timer);
        check = undefined;
        resolve(found);
      };
      check();
    });
  return { after, stop };
}

describe('LeaseholdObject in workerd', () => {
  it('sends a change notice to the other clients of the object over a WebSocket', async () => {
    const name = freshObject('notice');
    const watcher = connect('q', name, undefined);
    const writer = connect('q', name, undefined);
    try {
      const notices = await watch(watcher, writer);
      const sent = Date.now();
      await writer.transport.publish('g', 1);
      await notices.after(sent);
      notices.stop();
    } finally {
      await watcher.close();
      await writer.close();
    }
  });

  it('wakes subscribers from its alarm when a lease runs out, with no call in between', async () => {
    const name = freshObject('alarm');
    const watcher = connect('q', name, undefined);
    const worker = connect('q', name, undefined);
    try {
      const notices = await watch(watcher, worker);
      // Real time here: the alarm runs on the wall clock. Only the alarm can raise a notice after
      // the lease's end: nobody calls the object meanwhile.
      const lease = (await worker.transport.claim('w', 600))!;
      await notices.after(lease.expiresAt);
      notices.stop();
      // It did run out: the message is claimable again.
      const messages = (await worker.transport.inspect()).groups.flatMap((g) => g.messages);
      expect(messages.find((m) => m.seq === lease.seq)?.state).toBe('expired');
    } finally {
      await watcher.close();
      await worker.close();
    }
  });

  it('answers raw Workers RPC calls on the object (publish, claim, ack) from inside a Worker', async () => {
    const response = await fetch(`${await workerdUrl()}/bench/${freshObject('rpc')}/rpc?n=5`);
    expect(await response.json()).toMatchObject({ n: 5 });
  });

  it('refuses a call without the token when the route has one, and serves it with the token', async () => {
    const url = `${await workerdUrl()}/s/${freshObject('secure')}`;
    const anonymous = connectLeasehold({ url, WebSocket });
    await expect(anonymous.transport.publish('g', 1)).rejects.toMatchObject({ code: 'ACCESS_DENIED', message: expect.stringContaining('401') });
    const allowed = connectLeasehold({ url, WebSocket, headers: { authorization: 'Bearer test-token' } });
    expect(await allowed.transport.publish('g', 1)).toBe(1);
  });

  it('refuses a body that is not JSON, and a method that is not forwarded', async () => {
    const url = `${await workerdUrl()}/q/${freshObject('bad')}/call`;
    const notJson = await fetch(url, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    const answer = await (await fetch(url, { method: 'POST', body: JSON.stringify({ target: 'transport', method: 'constructor', args: [] }) })).json();
    expect(answer).toMatchObject({ ok: false, error: { name: 'TypeError' } });
  });
});

describe('the forwarded methods', () => {
  it('are the method table: every public method of SqliteTransport and SqliteStore except close and onChange, nothing more', () => {
    const publicMethods = (prototype: object) =>
      Object.getOwnPropertyNames(prototype).filter((name) => name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(prototype, name)?.value === 'function');
    // A public method added to a backend but not to the contract and the table is not exposed over HTTP or RPC.
    expect(Object.keys(TRANSPORT_METHODS).sort()).toEqual(publicMethods(SqliteTransport.prototype).filter((m) => m !== 'close' && m !== 'onChange').sort());
    expect(Object.keys(STORE_METHODS).sort()).toEqual(publicMethods(SqliteStore.prototype).filter((m) => m !== 'close').sort());
  });
});

describe('the argument codec', () => {
  it('carries what JSON alone would change: undefined, NaN, BigInt, Map, Set, Date, cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const value = [undefined, NaN, -Infinity, 10n, new Map([[1, { a: 2 }]]), new Set(['x']), new Date(5), cyclic, { $lh: 'not a tag' }, [1, undefined]];
    const back = decodeValue(JSON.parse(JSON.stringify(encodeValue(value)))) as unknown[];
    expect(back.slice(0, 7)).toEqual(value.slice(0, 7));
    const loop = back[7] as Record<string, unknown>;
    expect(loop.self).toBe(loop);
    expect(back[8]).toEqual({ $lh: 'not a tag' });
    expect(back[9]).toEqual([1, undefined]);
    expect(typeof decodeValue(encodeValue(() => 1))).toBe('function');
  });
});
