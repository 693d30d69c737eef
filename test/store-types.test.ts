import { describe, expectTypeOf, it } from 'vitest';
import {
  InMemoryStore,
  SqliteStore,
  type CommitChanges,
  type DueTimer,
  type Execution,
  type ExecutionStore,
  type OutboxEntry,
  type SpawnEntry,
  type TraceStep,
} from 'leasehold';

interface Order extends Execution {
  status: 'new' | 'paid';
  total: number;
}

describe('execution store types', () => {
  it('lets a typed store load and commit its own execution type', () => {
    const store = new InMemoryStore<Order>();
    expectTypeOf(store).toMatchTypeOf<ExecutionStore<Order>>();
    expectTypeOf(store.load).returns.toEqualTypeOf<Promise<Order | undefined>>();
    expectTypeOf(store.commit).parameter(0).toEqualTypeOf<Order>();
    expectTypeOf(store.commit).parameter(1).toEqualTypeOf<CommitChanges | undefined>();
    expectTypeOf<SqliteStore<Order>>().toMatchTypeOf<ExecutionStore<Order>>();
  });

  it('describes the records the relay and the sweep read', () => {
    expectTypeOf<OutboxEntry>().toEqualTypeOf<{ seq: number; targetId: string | null; event: unknown }>();
    expectTypeOf<SpawnEntry['context']>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<DueTimer>().toEqualTypeOf<{ executionId: string; path: string; fireAt: number }>();
    expectTypeOf<TraceStep['index']>().toBeUnknown();
  });

  it('accepts only the two timer actions, with fireAt required to schedule', () => {
    expectTypeOf<{ action: 'schedule'; path: string; fireAt: number }>().toMatchTypeOf<NonNullable<CommitChanges['timers']>[number]>();
    expectTypeOf<{ action: 'cancel'; path: string }>().toMatchTypeOf<NonNullable<CommitChanges['timers']>[number]>();
    expectTypeOf<{ action: 'schedule'; path: string }>().not.toMatchTypeOf<NonNullable<CommitChanges['timers']>[number]>();
  });
});
