/**
 * The owner's dispatcher and call journal, in Node on a real sqlite-wasm database: a call
 * retried after its answer was lost (the owner tab died) is answered, never applied twice.
 */
import { describe, expect, it } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { AckManyResult, Lease } from '../src/transport/contract.js';
import type { CallMessage } from '../src/browser/protocol.js';
import { errorFromWire, errorToWire, leaseFences, sameLeases } from '../src/remote/wire.js';
import { LeaseLostError, SchemaTooNewError, StorageError, StoreConflictError } from '../src/errors.js';

let ids = 0;
const call = (target: CallMessage['target'], method: string, args: unknown[], now = 1000, id = `c${++ids}`): CallMessage => ({ kind: 'call', id, target, method, args, now });

describe('HostCore', () => {
  it('answers a retried publish from the journal instead of publishing twice', async () => {
    const db = await openWasmDatabase();
    const first = new HostCore(db);
    const publish = call('transport', 'publish', ['g', { n: 1 }, undefined]);
    const seq = await first.serve(publish);
    // A new owner over the same file sees the retry of the same call id.
    const second = new HostCore(db);
    expect(await second.serve(publish)).toBe(seq);
    const snapshot = (await second.serve(call('transport', 'inspect', []))) as { groups: { messages: unknown[] }[] };
    expect(snapshot.groups[0]!.messages).toHaveLength(1);
  });

  it('refuses a method it does not know (a tab of another build sent it) as UNKNOWN_METHOD, applying nothing', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db, { name: 'uploads' });
    for (const [target, method] of [['transport', 'publishLater'], ['store', 'loadMany'], ['transport', 'constructor'], ['elsewhere', 'publish']] as const) {
      const error = await core.serve(call(target as CallMessage['target'], method, ['g', 1, undefined])).catch((e: unknown) => e);
      const rebuilt = errorFromWire(errorToWire(error));
      expect(rebuilt).toMatchObject({ name: 'LeaseholdError', code: 'UNKNOWN_METHOD' });
      expect((rebuilt as Error).message).toContain(`${target}.${method} is not a method the leasehold serving database "uploads" knows`);
      expect((rebuilt as Error).message).toMatch(/Nothing was applied/);
    }
    expect(await core.serve(call('transport', 'inspect', []))).toMatchObject({ groups: [] });
    await core.close();
  });

  it('answers a retried claim with the same lease, and a retried commit with the same version', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    await core.serve(call('transport', 'publish', ['g', 'job', undefined]));
    const claim = call('transport', 'claim', ['w', 1000, undefined]);
    const lease = await core.serve(claim);
    expect(await core.serve(claim)).toEqual(lease);
    expect(await core.serve(call('transport', 'claim', ['w2', 1000, undefined]))).toBeNull();

    const commit = call('store', 'commit', [{ id: 'exe', version: 0, n: 1 }, { emits: [{ targetId: 'x', event: 1 }] }]);
    expect(await core.serve(commit)).toBe(1);
    expect(await core.serve(commit)).toBe(1);
    expect(await core.serve(call('store', 'pendingOutbox', [undefined]))).toHaveLength(1);
  });

  it('skips the journal for the owner page\u2019s own calls, which are never retried', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    await core.serve(call('transport', 'publish', ['g', 1, undefined]), false);
    expect(db.prepare('SELECT count(*) AS n FROM lh_calls').get()).toEqual({ n: 0 });
    await core.serve(call('transport', 'publish', ['g', 2, undefined]), true);
    expect(db.prepare('SELECT count(*) AS n FROM lh_calls').get()).toEqual({ n: 1 });
  });

  it('does not journal a call that failed, so its retry runs again', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    const stale = call('store', 'commit', [{ id: 'exe', version: 5 }, undefined]);
    await core.serve(call('store', 'save', [{ id: 'exe', version: 0 }]));
    await expect(core.serve(stale)).rejects.toBeInstanceOf(StoreConflictError);
    await expect(core.serve(stale)).rejects.toBeInstanceOf(StoreConflictError);
  });

  it('measures leases on the clock reading each call carries', async () => {
    const db = await openWasmDatabase();
    const core = new HostCore(db);
    await core.serve(call('transport', 'publish', ['g', 'job', undefined], 0));
    const lease = (await core.serve(call('transport', 'claim', ['w', 500, undefined], 10_000))) as { expiresAt: number };
    expect(lease.expiresAt).toBe(10_500);
    expect(await core.serve(call('transport', 'claim', ['w2', 500, undefined], 10_500))).toBeNull();
    expect(await core.serve(call('transport', 'claim', ['w2', 500, undefined], 10_501))).toMatchObject({ attempt: 2 });
  });

  it('serves only the contracts\u2019 methods', async () => {
    const core = new HostCore(await openWasmDatabase());
    // Not in the method table: refused as unknown (see above), never run.
    await expect(core.serve(call('transport', 'close', []))).rejects.toMatchObject({ code: 'UNKNOWN_METHOD' });
    await expect(core.serve(call('store', 'constructor', []))).rejects.toMatchObject({ code: 'UNKNOWN_METHOD' });
    await expect(core.serve(call('host' as 'store', 'load', ['x']))).rejects.toMatchObject({ code: 'UNKNOWN_METHOD' });
    await expect(core.serve({ ...call('store', 'load', ['x']), now: Number.NaN })).rejects.toThrow(TypeError);
  });
});

describe('errors across the worker boundary', () => {
  it('rebuilds the same classes with their fields', () => {
    const cases: Error[] = [
      new LeaseLostError(7, 2, 'g'),
      new StoreConflictError('exe', 1, 3),
      new StorageError('STORAGE_FULL', 'full'),
      new SchemaTooNewError('database "x"', 'host', 2, 1),
      new TypeError('bad type'),
      new RangeError('bad value'),
    ];
    for (const original of cases) {
      const rebuilt = errorFromWire(structuredClone(errorToWire(original)));
      expect(rebuilt).toBeInstanceOf(original.constructor);
      expect(rebuilt.message).toBe(original.message);
      expect({ ...rebuilt }).toEqual({ ...original });
    }
  });
});

describe('ackMany across the worker boundary', () => {
  it('sends only what the owner fences with, and answers with the caller\'s own leases', async () => {
    const core = new HostCore(await openWasmDatabase());
    const send = (method: string, args: unknown[]) => core.serve({ kind: 'call', id: `f${method}`, target: 'transport', method, args, now: 1_000 }, false);
    await send('publishMany', [[{ groupId: 'a', event: { big: 'x'.repeat(100) } }, { groupId: 'b', event: 2 }]]);
    const leases = structuredClone(await send('claimMany', ['w', 5_000, { max: 2 }])) as Lease[];
    const stale = { ...leases[1]!, attempt: 9 };
    const sent = leaseFences([leases[0], stale]) as object[];
    expect(sent).toEqual([
      { seq: leases[0]!.seq, attempt: 1, workerId: 'w', groupId: 'a', queue: 'default' },
      { seq: leases[1]!.seq, attempt: 9, workerId: 'w', groupId: 'b', queue: 'default' },
    ]);
    const answer = structuredClone(await send('ackMany', [structuredClone(sent)])) as AckManyResult;
    const result = sameLeases([leases[0]!, stale], answer);
    expect(result.acked[0]).toBe(leases[0]);
    expect(result.lost[0]).toBe(stale);
    expect(result.acked).toHaveLength(1);
  });

  it('passes what is not a lease object through, so the owner refuses it as before', async () => {
    expect(leaseFences('nope')).toBe('nope');
    expect(leaseFences([null, 3])).toEqual([null, 3]);
    const core = new HostCore(await openWasmDatabase());
    const ack = (leases: unknown) => core.serve({ kind: 'call', id: 'bad', target: 'transport', method: 'ackMany', args: [leaseFences(leases)], now: 1 }, false);
    await expect(ack('nope')).rejects.toBeInstanceOf(TypeError);
    await expect(ack([{ seq: 1, attempt: 0, workerId: 'w', groupId: 'g', event: 1 }])).rejects.toThrow(/leases\[0\]\.attempt/);
    await expect(ack([{ attempt: 1, workerId: 'w', groupId: 'g' }])).rejects.toThrow(/leases\[0\]\.seq/);
  });
});
