/**
 * The owner's dispatcher and call journal, in Node on a real sqlite-wasm database: a call
 * retried after its answer was lost (the owner tab died) is answered, never applied twice.
 */
import { describe, expect, it } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { CallMessage } from '../src/browser/wire.js';
import { errorFromWire, errorToWire } from '../src/browser/wire.js';
import { LeaseLostError, StorageError, StoreConflictError } from '../src/errors.js';

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
    await expect(core.serve(call('transport', 'close', []))).rejects.toThrow(TypeError);
    await expect(core.serve(call('store', 'constructor', []))).rejects.toThrow(TypeError);
    await expect(core.serve(call('host' as 'store', 'load', ['x']))).rejects.toThrow(TypeError);
    await expect(core.serve({ ...call('store', 'load', ['x']), now: Number.NaN })).rejects.toThrow(TypeError);
  });
});

describe('errors across the worker boundary', () => {
  it('rebuilds the same classes with their fields', () => {
    const cases: Error[] = [
      new LeaseLostError(7, 2, 'g'),
      new StoreConflictError('exe', 1, 3),
      new StorageError('STORAGE_FULL', 'full'),
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
