/**
 * Calls over the object's WebSocket (`calls: 'websocket'`), what the shared suites (which run
 * every contract over this route too) cannot see: the socket's own changes raise its listeners
 * without an echo, a dropped socket fails the calls in flight and the next call opens a new
 * one, a call too large for a socket message goes over HTTP, a refused token is ACCESS_DENIED,
 * and the options are checked. Runs against the workerd of the global setup.
 */
import { WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import { connectLeasehold } from '../src/durable-object/client.js';
import { LeaseholdError, LeaseLostError, StorageError } from '../src/errors.js';
import { connect, freshObject, objectUrl, resetObject } from './support/workerd-backends.js';
import { workerdUrl } from './support/servers.js';

// This file needs the run's workerd: started here, before any test (pools and sockets take its URL at once).
await workerdUrl();

/** Resolves once `condition` holds, polling every 10 ms; rejects after `ms`. */
async function until(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('calls over the WebSocket', () => {
  it('apply in the order they were made and bring the backend errors back with their classes', async () => {
    const client = connect('ws', freshObject('socket-order'), undefined);
    try {
      const seqs = await Promise.all(Array.from({ length: 20 }, (_, i) => client.transport.publish('g', { i })));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      const lease = (await client.transport.claim('w', 60_000))!;
      expect(lease.event).toEqual({ i: 0 });
      await client.transport.ack(lease);
      await expect(client.transport.ack(lease)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(client.transport.claim('', 1_000)).rejects.toBeInstanceOf(RangeError);
      expect((await client.transport.stats()).queued).toBe(19);
    } finally {
      await client.close();
    }
  });

  it("raise the caller's own listeners from the answer, and the other clients' from a notice", async () => {
    const name = freshObject('socket-notice');
    const caller = connect('ws', name, undefined);
    const other = connect('q', name, undefined);
    let own = 0;
    let heard = 0;
    const stopOwn = caller.transport.onChange(() => own++);
    const stopOther = other.transport.onChange(() => heard++);
    try {
      // The other client's socket opens on its own time: publish until it hears.
      for (let i = 0; heard === 0; i++) {
        if (i === 600) throw new Error('the other client heard of no change in 600 publishes');
        await caller.transport.publish('g', i);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(own).toBeGreaterThan(0);
      // The caller's own change reaches it once, from its answer: the object echoes nothing to
      // the socket the call came on. The other client's changes do reach it.
      const before = own;
      await caller.transport.publish('g', 'mine');
      await until(() => own > before);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(own).toBe(before + 1);
      const seen = own;
      await other.transport.publish('g', 'theirs');
      await until(() => own > seen);
    } finally {
      stopOwn();
      stopOther();
      await caller.close();
      await other.close();
    }
  });

  it('fail with STORAGE_UNAVAILABLE when the socket drops under them, and the next call opens a new one', async () => {
    const name = freshObject('socket-drop');
    const client = connect('ws', name, undefined);
    try {
      await client.transport.publish('g', 'before');
      // Dropping the object's instance closes the sockets it accepted. Calls go one at a time,
      // each as soon as the last is answered, so one is in flight when the socket drops; the
      // ones after it go out on a new socket.
      const inFlight = Array.from({ length: 500 }, (_, i) => client.transport.publish('h', i).then(
        () => 'answered',
        (error: unknown) => error,
      ));
      await resetObject(name);
      const outcomes = await Promise.all(inFlight);
      expect(outcomes.filter((o) => o !== 'answered').length).toBeGreaterThanOrEqual(1);
      expect(outcomes.at(-1)).toBe('answered');
      for (const outcome of outcomes) {
        if (outcome === 'answered') continue;
        expect(outcome).toBeInstanceOf(StorageError);
        expect((outcome as StorageError).code).toBe('STORAGE_UNAVAILABLE');
        expect((outcome as StorageError).message).toMatch(/may or may not have been applied/);
      }
      // Every answered publish is in the object, and the client goes on over a new socket.
      const answered = outcomes.filter((o) => o === 'answered').length;
      const stats = await client.transport.stats();
      expect(stats.queued).toBeGreaterThanOrEqual(1 + answered);
      expect(await client.transport.publish('g', 'after')).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('send a call larger than a socket message over HTTP', async () => {
    const client = connect('ws', freshObject('socket-large'), undefined, { maxEventBytes: 2_000_000 });
    try {
      const big = 'x'.repeat(1_500_000);
      const seq = await client.transport.publish('g', { big });
      const lease = (await client.transport.claim('w', 60_000))!;
      expect(lease.seq).toBe(seq);
      expect((lease.event as { big: string }).big.length).toBe(big.length);
    } finally {
      await client.close();
    }
  });

  it('are refused with ACCESS_DENIED without the token, and served with it', async () => {
    const url = `${await workerdUrl()}/s/${freshObject('socket-secure')}`;
    const denied = connectLeasehold({ url, WebSocket, calls: 'websocket' });
    const allowed = connectLeasehold({ url, WebSocket, calls: 'websocket', headers: { authorization: 'Bearer test-token' } });
    try {
      const error = await denied.transport.publish('g', 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseholdError);
      expect((error as LeaseholdError).code).toBe('ACCESS_DENIED');
      expect(await allowed.transport.publish('g', 1)).toBe(1);
    } finally {
      await denied.close();
      await allowed.close();
    }
  });

  it('are an option checked at connect', () => {
    const url = objectUrl('q', freshObject('socket-options'));
    expect(() => connectLeasehold({ url, WebSocket, calls: 'socket' as never })).toThrow(RangeError);
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      expect(() => connectLeasehold({ url, calls: 'websocket' })).toThrow(/needs a WebSocket class/);
    } finally {
      if (saved !== undefined) global.WebSocket = saved;
    }
  });
});
