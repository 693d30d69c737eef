/**
 * The execution-store conformance suite: every rule of the contract (and of the seed's
 * DictStore) as a named behaviour, run unchanged against every backend.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClosedError, StoreConflictError } from '../../src/errors.js';
import type { Execution, ExecutionStore, ExecutionStoreOptions } from '../../src/store/contract.js';
import { describeStoreInput } from './store-input.js';
import { describeStoreModel } from './store-model.js';
import { copyOf, dumpStore, END_OF_TIME, type MakeStoreHarness, type StoreHarness } from './store-harness.js';
import { describeStoreRelay } from './store-relay.js';
import { describeStoreTrace } from './store-trace.js';

export { dumpStore, type MakeStoreHarness, type StoreHarness } from './store-harness.js';

/**
 * Registers the suite for one backend. `make` returns a fresh, empty store per call; the suite
 * disposes every harness it made.
 */
/** Tuning for slow boundaries (the browser host answers each call through a worker). */
export interface StoreSuiteOptions {
  /** Runs of the model-based test (default 200). */
  modelRuns?: number;
  /** Time limit of the model-based test in ms (default: the project's test timeout). */
  modelTimeout?: number;
}

export function describeStore(name: string, make: MakeStoreHarness, suite: StoreSuiteOptions = {}): void {
  describe(`ExecutionStore: ${name}`, () => {
    const made: StoreHarness[] = [];
    const open = async (options?: ExecutionStoreOptions): Promise<StoreHarness> => {
      const h = await make(options);
      made.push(h);
      return h;
    };
    afterEach(async () => {
      for (const h of made.splice(0)) await h.dispose();
    });

    describeCas(open);
    describeStoreRelay(open);
    describeStoreTrace(open);
    describeLifecycle(open);
    describeStoreInput(open);
    describeStoreModel(open, suite.modelRuns, suite.modelTimeout);
  });
}

type Open = (options?: ExecutionStoreOptions) => Promise<StoreHarness>;

const fresh = (id = 'order-1', fields: Record<string, unknown> = {}): Execution => ({ id, version: 0, ...fields });

function describeCas(open: Open): void {
  it('loads undefined for an id never saved', async () => {
    const { store } = await open();
    expect(await store.load('nobody')).toBeUndefined();
  });

  it('bumps the version in place on save and commit, and load returns the saved state', async () => {
    const { store } = await open();
    const exe = fresh('order-1', { status: 'new', context: { items: [1, 2] } });
    await store.save(exe);
    expect(exe.version).toBe(1);
    exe.status = 'paid';
    await store.commit(exe);
    expect(exe.version).toBe(2);
    expect(await store.load('order-1')).toEqual({ id: 'order-1', version: 2, status: 'paid', context: { items: [1, 2] } });
  });

  it('lets a first write succeed at any version', async () => {
    const { store } = await open();
    const exe = { id: 'late', version: 7 };
    await store.save(exe);
    expect(exe.version).toBe(8);
    expect((await store.load('late'))?.version).toBe(8);
  });

  it('accepts a different object at the stored version', async () => {
    const { store } = await open();
    const first = fresh('x', { n: 1 });
    await store.save(first);
    const second = { id: 'x', version: 1, n: 2 };
    await store.save(second);
    expect(second.version).toBe(2);
    expect(await store.load('x')).toMatchObject({ version: 2, n: 2 });
  });

  it('rejects a stale writer with StoreConflictError and changes nothing anywhere', async () => {
    const { store } = await open();
    const exe = fresh('order-1', { step: 0 });
    await store.commit(exe, { emits: [{ targetId: 'other', event: { kind: 'hello' } }], timers: [{ action: 'schedule', path: 't', fireAt: 10 }], trace: { step: 0 } });
    const stale = copyOf((await store.load('order-1'))!);
    const winner = copyOf(stale);
    winner.step = 1;
    await store.commit(winner, { processedEventId: 'e1' });
    const scope = { ids: ['order-1', 'child'], events: [['order-1', 'e1'], ['order-1', 'e2']] as const };
    const before = await dumpStore(store, scope);

    stale.step = 99;
    const error = await store
      .commit(stale, {
        emits: [{ targetId: null, event: 'lost' }],
        processedEventId: 'e2',
        timers: [{ action: 'schedule', path: 't', fireAt: 99 }, { action: 'cancel', path: 'u' }],
        spawns: [{ childId: 'child', rootPath: 'root', context: {} }],
        trace: { step: 99 },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreConflictError);
    expect(error).toMatchObject({ executionId: 'order-1', expected: 1, found: 2, code: 'STORE_CONFLICT' });
    expect(stale.version).toBe(1);
    expect(await dumpStore(store, scope)).toEqual(before);
    await expect(store.save(stale)).rejects.toBeInstanceOf(StoreConflictError);
  });

  it('returns the very object that was saved (identity backends)', async (ctx) => {
    const { store, caps } = await open();
    if (!caps.identity) ctx.skip('this backend stores copies');
    const exe = fresh('a', { context: { deep: [1] } });
    await store.save(exe);
    expect(await store.load('a')).toBe(exe);
    exe.context = 'changed by the caller';
    expect((await store.load('a'))?.context).toBe('changed by the caller');
  });

  it('lets the stored object itself win whatever its version (identity backends)', async (ctx) => {
    const { store, caps } = await open();
    if (!caps.identity) ctx.skip('only an identity backend can tell "the same object"');
    const exe = fresh('a');
    await store.save(exe);
    exe.version = 40;
    await store.save(exe);
    expect(exe.version).toBe(41);
    expect(await store.load('a')).toBe(exe);
  });

  it('returns a new object on every load (copying backends)', async (ctx) => {
    const { store, caps } = await open();
    if (caps.identity) ctx.skip('this backend returns the saved object itself');
    const exe = fresh('a', { context: { deep: [1] } });
    await store.save(exe);
    const first = await store.load('a');
    const second = await store.load('a');
    expect(first).not.toBe(exe);
    expect(first).not.toBe(second);
    expect(first).toEqual(exe);
    first!.context = 'changed';
    expect(await store.load('a')).toEqual(exe);
  });

  it('applies the version rule to any object, even the one load returned (copying backends)', async (ctx) => {
    const { store, caps } = await open();
    if (caps.identity) ctx.skip('identity backends exempt the stored object');
    await store.save(fresh('a'));
    const loaded = (await store.load('a'))!;
    loaded.version = 40;
    const error = await store.save(loaded).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'StoreConflictError', executionId: 'a', expected: 40, found: 1 });
    expect(loaded.version).toBe(40);
  });
}

function describeLifecycle(open: Open): void {
  it('deletes an execution with its dedupe marks, timers and trace, but not what it emitted', async () => {
    const { store } = await open();
    const exe = fresh('gone');
    await store.commit(exe, {
      emits: [{ targetId: 'x', event: 'sent' }],
      processedEventId: 'e1',
      timers: [{ action: 'schedule', path: 't', fireAt: 5 }],
      spawns: [{ childId: 'kid', rootPath: 'r', context: {} }],
      trace: { note: 'first' },
    });
    await store.commit(fresh('kept'), { processedEventId: 'e1', timers: [{ action: 'schedule', path: 't', fireAt: 5 }], trace: { note: 'k' } });
    await store.delete('gone');
    await store.delete('never-existed');
    expect(await store.load('gone')).toBeUndefined();
    expect(await store.isProcessed('gone', 'e1')).toBe(false);
    expect(await store.readTrace('gone')).toEqual([]);
    expect(await store.dueTimers(END_OF_TIME)).toEqual([{ executionId: 'kept', path: 't', fireAt: 5 }]);
    expect(await store.pendingOutbox()).toHaveLength(1);
    expect(await store.pendingSpawns()).toHaveLength(1);
    expect(await store.isProcessed('kept', 'e1')).toBe(true);

    const again = fresh('gone');
    await store.commit(again, { trace: { note: 'reborn' } });
    expect(again.version).toBe(1);
    expect(await store.readTrace('gone')).toEqual([{ note: 'reborn', index: 0 }]);
  });

  it('rejects every call after close with ClosedError, and close is idempotent', async () => {
    const { store } = await open();
    await store.save(fresh('a'));
    await store.close();
    await store.close();
    const calls: ((s: ExecutionStore) => Promise<unknown>)[] = [
      (s) => s.load('a'),
      (s) => s.save(fresh('b')),
      (s) => s.commit(fresh('b'), {}),
      (s) => s.isProcessed('a', 'e'),
      (s) => s.pendingOutbox(),
      (s) => s.ackOutbox(1),
      (s) => s.pendingSpawns(),
      (s) => s.ackSpawn(1),
      (s) => s.dueTimers(0),
      (s) => s.deleteTimer('a', 'p', 1),
      (s) => s.appendTrace('a', {}),
      (s) => s.readTrace('a'),
      (s) => s.delete('a'),
    ];
    for (const call of calls) await expect(call(store)).rejects.toBeInstanceOf(ClosedError);
  });

  it('round-trips non-ASCII, SQL and HTML text in ids, fields, events, contexts and traces', async () => {
    const { store } = await open();
    const nasty = ["Robert'); DROP TABLE lh_executions;--", '<script>alert("x")</script>', 'Grüße, 你好, עברית, 🚚📦', 'quote " backslash \\ nul \u0000 end', '\u2028\u2029'];
    for (const text of nasty) {
      const exe = { id: text, version: 0, label: text, nested: { [text]: [text] } };
      await store.commit(exe, {
        emits: [{ targetId: text, event: { text } }],
        processedEventId: text,
        timers: [{ action: 'schedule', path: text, fireAt: 1 }],
        spawns: [{ childId: text, rootPath: text, context: { text } }],
        trace: { text },
      });
      expect(await store.load(text)).toEqual({ id: text, version: 1, label: text, nested: { [text]: [text] } });
      expect(await store.isProcessed(text, text)).toBe(true);
      expect(await store.readTrace(text)).toEqual([{ text, index: 0 }]);
    }
    expect((await store.pendingOutbox()).map((e) => [e.targetId, e.event])).toEqual(nasty.map((t) => [t, { text: t }]));
    expect((await store.pendingSpawns()).map((s) => [s.childId, s.rootPath, s.context])).toEqual(nasty.map((t) => [t, t, { text: t }]));
    expect(new Set((await store.dueTimers(1)).map((t) => t.path))).toEqual(new Set(nasty));
  });

  it('keeps everything across closing and reopening the database (persistent backends)', async (ctx) => {
    const { store, caps } = await open();
    if (!caps.persistent || caps.reopen === undefined) ctx.skip('this backend does not persist');
    const exe = fresh('durable', { context: { lines: ['a', 'b'] } });
    await store.commit(exe, {
      emits: [{ targetId: 'peer', event: { kind: 'shipped' } }],
      processedEventId: 'e1',
      timers: [{ action: 'schedule', path: 'remind', fireAt: 42 }],
      spawns: [{ childId: 'kid', rootPath: 'root', context: { k: 1 } }],
      trace: { note: 'one' },
    });
    await store.appendTrace('durable', { note: 'two' });
    const scope = { ids: ['durable'], events: [['durable', 'e1']] as const };
    const before = await dumpStore(store, scope);
    const reopened = await caps.reopen!();
    expect(await dumpStore(reopened, scope)).toEqual(before);
    // and the counters carry on where they were
    await reopened.commit((await reopened.load('durable'))!, { emits: [{ targetId: null, event: 2 }], trace: { note: 'three' } });
    expect((await reopened.pendingOutbox()).map((e) => e.seq)).toEqual([1, 2]);
    expect((await reopened.readTrace('durable')).map((s) => s.index)).toEqual([0, 1, 2]);
  });
}
