/**
 * Bad input: every invalid argument rejects (a rejected promise, not a synchronous throw) with a
 * TypeError or RangeError naming the argument, and the store is left exactly as it was.
 */
import { expect, it } from 'vitest';
import type { Execution, ExecutionStore, ExecutionStoreOptions } from '../../src/store/contract.js';
import { dumpStore, type StoreHarness } from './store-harness.js';

type Open = (options?: ExecutionStoreOptions) => Promise<StoreHarness>;
type Call = (store: ExecutionStore, exe: Execution) => Promise<unknown>;
type Case = [description: string, call: Call, error: typeof TypeError | typeof RangeError, names: string];

// The execution under test is 'a' at version 1; `exe` is a valid writer of it.
const timer = (fields: Record<string, unknown>) => ({ timers: [{ action: 'schedule', path: 'p', ...fields }] });
const anyCall = <T>(value: unknown): T => value as T;

const everywhere: Case[] = [
  ['load: an empty id', (s) => s.load(''), RangeError, 'id'],
  ['load: a number id', (s) => s.load(anyCall(1)), TypeError, 'id'],
  ['save: null', (s) => s.save(anyCall(null)), TypeError, 'exe'],
  ['save: an empty id', (s) => s.save({ id: '', version: 0 }), RangeError, 'exe.id'],
  ['save: a missing id', (s) => s.save(anyCall({ version: 0 })), TypeError, 'exe.id'],
  ['save: no version', (s) => s.save(anyCall({ id: 'a' })), TypeError, 'exe.version'],
  ['save: a string version', (s) => s.save(anyCall({ id: 'a', version: '1' })), TypeError, 'exe.version'],
  ['save: a negative version', (s) => s.save({ id: 'a', version: -1 }), RangeError, 'exe.version'],
  ['save: a fractional version', (s) => s.save({ id: 'a', version: 1.5 }), RangeError, 'exe.version'],
  ['save: a NaN version', (s) => s.save({ id: 'a', version: NaN }), RangeError, 'exe.version'],
  ['commit: changes not an object', (s, e) => s.commit(e, anyCall('x')), TypeError, 'changes'],
  ['commit: emits not an array', (s, e) => s.commit(e, anyCall({ emits: {} })), TypeError, 'changes.emits'],
  ['commit: an empty targetId', (s, e) => s.commit(e, { emits: [{ targetId: '', event: 1 }] }), RangeError, 'changes.emits[0].targetId'],
  ['commit: an undefined targetId', (s, e) => s.commit(e, anyCall({ emits: [{ event: 1 }] })), TypeError, 'changes.emits[0].targetId'],
  ['commit: an empty processedEventId', (s, e) => s.commit(e, { processedEventId: '' }), RangeError, 'changes.processedEventId'],
  ['commit: a NaN fireAt', (s, e) => s.commit(e, anyCall(timer({ fireAt: NaN }))), RangeError, 'changes.timers[0].fireAt'],
  ['commit: an infinite fireAt', (s, e) => s.commit(e, anyCall(timer({ fireAt: Infinity }))), RangeError, 'changes.timers[0].fireAt'],
  ['commit: a string fireAt', (s, e) => s.commit(e, anyCall(timer({ fireAt: '5' }))), TypeError, 'changes.timers[0].fireAt'],
  ['commit: a missing fireAt', (s, e) => s.commit(e, anyCall(timer({}))), TypeError, 'changes.timers[0].fireAt'],
  ['commit: an unknown timer action', (s, e) => s.commit(e, anyCall(timer({ action: 'later', fireAt: 1 }))), RangeError, 'changes.timers[0].action'],
  ['commit: an empty timer path', (s, e) => s.commit(e, anyCall(timer({ path: '', fireAt: 1 }))), RangeError, 'changes.timers[0].path'],
  ['commit: a bad second timer after a good one', (s, e) => s.commit(e, anyCall({ timers: [{ action: 'schedule', path: 'q', fireAt: 1 }, { action: 'cancel', path: 7 }] })), TypeError, 'changes.timers[1].path'],
  ['commit: a numeric childId', (s, e) => s.commit(e, anyCall({ spawns: [{ childId: 5, rootPath: 'r', context: {} }] })), TypeError, 'changes.spawns[0].childId'],
  ['commit: an empty rootPath', (s, e) => s.commit(e, { spawns: [{ childId: 'c', rootPath: '', context: {} }] }), RangeError, 'changes.spawns[0].rootPath'],
  ['commit: a null context', (s, e) => s.commit(e, anyCall({ spawns: [{ childId: 'c', rootPath: 'r', context: null }] })), TypeError, 'changes.spawns[0].context'],
  ['commit: a string trace', (s, e) => s.commit(e, anyCall({ trace: 'step' })), TypeError, 'changes.trace'],
  ['commit: a bad execution with good changes', (s) => s.commit(anyCall({ id: 'a' }), { emits: [{ targetId: null, event: 1 }] }), TypeError, 'exe.version'],
  ['isProcessed: an empty execution id', (s) => s.isProcessed('', 'e'), RangeError, 'executionId'],
  ['isProcessed: a numeric event id', (s) => s.isProcessed('a', anyCall(3)), TypeError, 'eventId'],
  ['pendingOutbox: limit 0', (s) => s.pendingOutbox(0), RangeError, 'limit'],
  ['pendingOutbox: a fractional limit', (s) => s.pendingOutbox(1.5), RangeError, 'limit'],
  ['pendingSpawns: a string limit', (s) => s.pendingSpawns(anyCall('2')), TypeError, 'limit'],
  ['ackOutbox: seq 0', (s) => s.ackOutbox(0), RangeError, 'seq'],
  ['ackSpawn: a string seq', (s) => s.ackSpawn(anyCall('1')), TypeError, 'seq'],
  ['dueTimers: NaN', (s) => s.dueTimers(NaN), RangeError, 'now'],
  ['deleteTimer: a NaN fireAt', (s) => s.deleteTimer('a', 'p', NaN), RangeError, 'fireAt'],
  ['deleteTimer: an empty path', (s) => s.deleteTimer('a', '', 1), RangeError, 'path'],
  ['appendTrace: an empty execution id', (s) => s.appendTrace('', {}), RangeError, 'executionId'],
  ['appendTrace: a null entry', (s) => s.appendTrace('a', anyCall(null)), TypeError, 'entry'],
  ['readTrace: a numeric id', (s) => s.readTrace(anyCall(7)), TypeError, 'executionId'],
  ['delete: an empty id', (s) => s.delete(''), RangeError, 'executionId'],
];

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop' };
  value.self = value;
  return value;
}

// What JSON cannot carry: only the copying (SQL) backends reject these.
const notJson: Case[] = [
  ['commit: an execution with a cycle', (s, e) => s.commit(Object.assign(e, { context: cyclic() })), TypeError, 'exe'],
  ['commit: an execution with a BigInt', (s, e) => s.commit(Object.assign(e, { total: 10n })), TypeError, 'exe'],
  ['commit: an execution with a function', (s, e) => s.commit(Object.assign(e, { run: () => 1 })), TypeError, 'exe'],
  ['commit: an execution with NaN', (s, e) => s.commit(Object.assign(e, { ratio: NaN })), TypeError, 'exe'],
  ['commit: an execution with a Map', (s, e) => s.commit(Object.assign(e, { seen: new Map([[1, 2]]) })), TypeError, 'exe'],
  ['commit: an undefined event', (s, e) => s.commit(e, { emits: [{ targetId: null, event: undefined }] }), TypeError, 'changes.emits[0].event'],
  ['commit: an event with a cycle', (s, e) => s.commit(e, { emits: [{ targetId: 'b', event: cyclic() }] }), TypeError, 'changes.emits[0].event'],
  ['commit: an event with a BigInt', (s, e) => s.commit(e, { emits: [{ targetId: 'b', event: { n: 1n } }] }), TypeError, 'changes.emits[0].event'],
  ['commit: an event that is a function', (s, e) => s.commit(e, { emits: [{ targetId: 'b', event: () => 1 }] }), TypeError, 'changes.emits[0].event'],
  ['commit: an event with undefined in an array', (s, e) => s.commit(e, { emits: [{ targetId: 'b', event: [1, undefined] }] }), TypeError, 'changes.emits[0].event'],
  ['commit: a context with a BigInt', (s, e) => s.commit(e, { spawns: [{ childId: 'c', rootPath: 'r', context: { n: 2n } }] }), TypeError, 'changes.spawns[0].context'],
  ['commit: a context with a cycle', (s, e) => s.commit(e, { spawns: [{ childId: 'c', rootPath: 'r', context: cyclic() }] }), TypeError, 'changes.spawns[0].context'],
  ['commit: a trace with a function', (s, e) => s.commit(e, { trace: { f: () => 1 } }), TypeError, 'changes.trace'],
  ['appendTrace: an entry with a cycle', (s) => s.appendTrace('a', cyclic()), TypeError, 'entry'],
  ['appendTrace: an entry that encodes as a string', (s) => s.appendTrace('a', new Date(0)), TypeError, 'entry'],
];

/** Registers the bad-input tests; called by `describeStore` inside its describe block. */
export function describeStoreInput(open: Open): void {
  async function seeded(options?: ExecutionStoreOptions) {
    const h = await open(options);
    const stored = { id: 'a', version: 0, context: { n: 1 } };
    await h.store.commit(stored, {
      emits: [{ targetId: 'b', event: { n: 1 } }],
      processedEventId: 'e1',
      timers: [{ action: 'schedule', path: 'p', fireAt: 10 }],
      spawns: [{ childId: 'c', rootPath: 'r', context: { n: 1 } }],
      trace: { n: 1 },
    });
    // A distinct writer at the stored version, so a valid commit with it would succeed.
    const writer: Execution = { id: 'a', version: 1, context: { n: 2 } };
    const scope = { ids: ['a', 'b', 'c'], events: [['a', 'e1'], ['a', 'e2']] as const };
    return { h, writer, scope, before: await dumpStore(h.store, scope) };
  }

  const check = async ([, call, error, names]: Case, ctx: { skip: (why: string) => void }, onlyCopying: boolean) => {
    const { h, writer, scope, before } = await seeded();
    if (onlyCopying && h.caps.identity) ctx.skip('identity backends keep any value, as the seed does');
    const pending = call(h.store, writer);
    expect(pending).toBeInstanceOf(Promise);
    const rejection = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(rejection).toBeInstanceOf(error);
    expect((rejection as Error).message).toContain(names);
    expect(writer.version).toBe(1);
    expect(await dumpStore(h.store, scope)).toEqual(before);
  };

  for (const c of everywhere) it(`rejects bad input, writing nothing: ${c[0]}`, (ctx) => check(c, ctx, false));
  for (const c of notJson) it(`rejects what JSON cannot store, writing nothing (copying backends): ${c[0]}`, (ctx) => check(c, ctx, true));

  it('keeps any value by identity instead (identity backends)', async (ctx) => {
    const { store, caps } = await open();
    if (!caps.identity) ctx.skip('copying backends store JSON');
    const loop = cyclic();
    const fn = () => 1;
    await store.commit({ id: 'a', version: 0, loop, big: 10n }, { emits: [{ targetId: null, event: undefined }, { targetId: 'b', event: fn }] });
    expect((await store.load('a'))?.loop).toBe(loop);
    expect((await store.pendingOutbox()).map((e) => e.event)).toEqual([undefined, fn]);
  });

  for (const [traceMax, error] of [[-1, RangeError], [1.5, RangeError], [NaN, RangeError], ['5', TypeError]] as const) {
    it(`refuses traceMax ${String(traceMax)} with a ${error.name}`, async () => {
      await expect(open({ traceMax: anyCall(traceMax) })).rejects.toThrow(error);
      await expect(open({ traceMax: anyCall(traceMax) })).rejects.toThrow(/traceMax/);
    });
  }
}
