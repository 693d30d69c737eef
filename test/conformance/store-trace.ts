/** The trace ring rules of the execution-store conformance suite. */
import { expect, it } from 'vitest';
import type { ExecutionStoreOptions } from '../../src/store/contract.js';
import type { StoreHarness } from './store-harness.js';

type Open = (options?: ExecutionStoreOptions) => Promise<StoreHarness>;

/** Registers the trace tests; called by `describeStore` inside its describe block. */
export function describeStoreTrace(open: Open): void {
  it('stamps trace steps with indices from 0, from appendTrace and commit alike', async () => {
    const { store } = await open();
    expect(await store.readTrace('a')).toEqual([]);
    await store.appendTrace('a', { event: 'start' });
    await store.commit({ id: 'a', version: 0 }, { trace: { event: 'go', actions: ['x'] } });
    expect(await store.readTrace('a')).toEqual([
      { event: 'start', index: 0 },
      { event: 'go', actions: ['x'], index: 1 },
    ]);
    expect(await store.readTrace('b')).toEqual([]);
  });

  it('drops the oldest step at the 201st by default, and indices keep climbing', async () => {
    const { store } = await open();
    for (let i = 0; i < 201; i++) await store.appendTrace('a', { i });
    let steps = await store.readTrace('a');
    expect(steps).toHaveLength(200);
    expect(steps[0]).toEqual({ i: 1, index: 1 });
    expect(steps[199]).toEqual({ i: 200, index: 200 });
    await store.appendTrace('a', { i: 201 });
    steps = await store.readTrace('a');
    expect(steps).toHaveLength(200);
    expect(steps.map((s) => s.index)).toEqual(Array.from({ length: 200 }, (_, k) => k + 2));
  });

  it('keeps every step with traceMax 0', async () => {
    const { store } = await open({ traceMax: 0 });
    for (let i = 0; i < 250; i++) await store.appendTrace('a', { i });
    const steps = await store.readTrace('a');
    expect(steps).toHaveLength(250);
    expect(steps[249]).toEqual({ i: 249, index: 249 });
  });

  it('keeps exactly the last traceMax steps, per execution', async () => {
    const { store } = await open({ traceMax: 3 });
    for (let i = 0; i < 5; i++) await store.appendTrace('a', { i });
    await store.appendTrace('b', { i: 0 });
    expect((await store.readTrace('a')).map((s) => s.index)).toEqual([2, 3, 4]);
    expect(await store.readTrace('b')).toEqual([{ i: 0, index: 0 }]);
  });

  it('honours an explicit index, and the step counter still advances', async () => {
    const { store } = await open();
    await store.appendTrace('a', { note: 'first' });
    await store.appendTrace('a', { note: 'imported', index: 'legacy-7' });
    await store.appendTrace('a', { note: 'zero', index: 0 });
    await store.commit({ id: 'a', version: 0 }, { trace: { note: 'next' } });
    expect(await store.readTrace('a')).toEqual([
      { note: 'first', index: 0 },
      { note: 'imported', index: 'legacy-7' },
      { note: 'zero', index: 0 },
      { note: 'next', index: 3 },
    ]);
  });

  it('treats an index of undefined as absent', async () => {
    const { store } = await open();
    await store.appendTrace('a', { index: undefined, note: 'x' });
    expect(await store.readTrace('a')).toEqual([{ note: 'x', index: 0 }]);
  });

  it('returns a copy of the trace: changing it does not change the store', async () => {
    const { store } = await open();
    await store.appendTrace('a', { note: 'x' });
    const steps = await store.readTrace('a');
    steps[0]!.index = 99;
    steps.push({ index: 5 });
    expect(await store.readTrace('a')).toEqual([{ note: 'x', index: 0 }]);
  });

  it('does not let the trace affect load, and load does not read it', async () => {
    const { store } = await open();
    await store.appendTrace('ghost', { note: 'x' });
    expect(await store.load('ghost')).toBeUndefined();
  });
}
