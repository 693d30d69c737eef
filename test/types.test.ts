/**
 * The user's own types carried end to end: a typed transport's leases, a typed runtime's
 * handler and send. Checked by `npm run typecheck` (tsc over test/): each `@ts-expect-error`
 * line must be an error, or the typecheck fails ("unused directive"). The runtime assertions
 * only keep Vitest from reporting an empty file.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DEFAULT_QUEUE,
  InMemoryStore,
  InMemoryTransport,
  MAX_BATCH,
  Runtime,
  SqliteTransport,
  spreadTransport,
  type DeliveredEvent,
  type Lease,
  type RuntimeEvent,
  type SpawnedEvent,
  type TimeoutEvent,
  type Transport,
  type TransportStats,
} from 'leasehold';
import { openBrowserDatabase, type BrowserDatabase, type BrowserDatabaseOptions } from 'leasehold/browser';
import { Schedules, type ScheduledEvent } from 'leasehold/schedule';

// Declared as type aliases, without index signatures: a misspelt field is an error.
type OrderEvent = { id: string; type: 'place'; total: number } | { id: string; type: 'pay'; amount: number };
type Order = { id: string; version: number; status: 'new' | 'placed' | 'paid'; total: number };

describe('a typed transport', () => {
  it('gives leases of its event type, no cast needed', async () => {
    const transport = new InMemoryTransport<OrderEvent>();
    await transport.publish('order-1', { id: 'e1', type: 'place', total: 5 });
    const lease = await transport.claim('w1', 30_000);
    expectTypeOf(lease).toEqualTypeOf<Lease<OrderEvent> | null>();
    if (lease?.event.type === 'place') expectTypeOf(lease.event.total).toEqualTypeOf<number>();
    expect(lease?.event).toEqual({ id: 'e1', type: 'place', total: 5 });
    expectTypeOf<SqliteTransport<OrderEvent>>().toMatchTypeOf<Transport<OrderEvent>>();
  });

  it('rejects an event with a wrong field or of the wrong kind', () => {
    const transport = new InMemoryTransport<OrderEvent>();
    // @ts-expect-error `totl` is not a field of the place event
    void transport.publish('order-1', { id: 'e1', type: 'place', totl: 5 }).catch(() => {});
    // @ts-expect-error 'refund' is not an OrderEvent
    void transport.publish('order-1', { id: 'e1', type: 'refund', total: 5 }).catch(() => {});
    // The checks are the @ts-expect-error lines: `npm run typecheck` fails if either call compiles.
  });
});

describe('a typed runtime', () => {
  const store = new InMemoryStore<Order>();
  const transport = new InMemoryTransport<OrderEvent>();
  const runtime = new Runtime({
    store,
    transport,
    workerId: 'w1',
    visibilityMs: 30_000,
    handler(order, event) {
      expectTypeOf(order).toEqualTypeOf<Order>();
      expectTypeOf(event).toEqualTypeOf<DeliveredEvent<OrderEvent>>();
      expectTypeOf(event).toEqualTypeOf<OrderEvent | TimeoutEvent | SpawnedEvent>();
      if (event.type === 'place') {
        order.status = 'placed';
        order.total = event.total;
        // @ts-expect-error a place event has no `amount`
        void event.amount;
      }
      // @ts-expect-error `stauts` is not a field of Order
      order.stauts = 'paid';
      // @ts-expect-error 'shipped' is not a status
      if (event.type === 'pay') order.status = 'shipped';
    },
  });

  it('infers the execution and event types from the store and the transport', () => {
    expectTypeOf(runtime).toEqualTypeOf<Runtime<Order, OrderEvent>>();
    expect(runtime.workerId).toBe('w1');
  });

  it('send takes the app\'s events, with or without an id, and nothing else', () => {
    expectTypeOf(runtime.send).toBeCallableWith('order-1', { type: 'place', total: 5 });
    expectTypeOf(runtime.send).toBeCallableWith('order-1', { id: 'pay-1', type: 'pay', amount: 5 });
    // @ts-expect-error `totl` is not a field of the place event
    void runtime.send('order-1', { type: 'place', totl: 5 }).catch(() => {});
    // @ts-expect-error a pay event needs `amount`
    void runtime.send('order-1', { type: 'pay' }).catch(() => {});
    // The @ts-expect-error lines above are the checks: `npm run typecheck` fails if either call compiles.
  });

  it('an untyped transport gives handlers and send plain RuntimeEvents', () => {
    const untyped: Transport = new InMemoryTransport();
    const plain = new Runtime({ store: new InMemoryStore(), transport: untyped, workerId: 'w', visibilityMs: 1000, handler() {} });
    expectTypeOf(plain).toEqualTypeOf<Runtime>();
    expectTypeOf<Runtime>().toEqualTypeOf<Runtime<import('leasehold').Execution, RuntimeEvent>>();
    expectTypeOf(plain.send).toBeCallableWith('x', { anything: 1 });
    expect(plain.workerId).toBe('w');
  });
});

describe('a typed browser database', () => {
  // Never called: a browser database needs a page; only its types are under test here.
  async function page(db: BrowserDatabase<OrderEvent, Order>) {
    const lease = await db.transport.claim('tab', 30_000);
    if (lease?.event.type === 'pay') expectTypeOf(lease.event.amount).toEqualTypeOf<number>();
    expectTypeOf(await db.store.load('order-1')).toEqualTypeOf<Order | undefined>();
    // @ts-expect-error `totl` is not a field of the place event
    await db.transport.publish('order-1', { id: 'e1', type: 'place', totl: 5 });
    // A named queue has its own event type, unknown unless given.
    expectTypeOf(await db.queue('mail').claim('tab', 1000)).toEqualTypeOf<Lease<unknown> | null>();
    expectTypeOf(await db.queue<{ to: string }>('mail').claim('tab', 1000)).toEqualTypeOf<Lease<{ to: string }> | null>();
    // The runtime takes both types from the database.
    const runtime = new Runtime({ store: db.store, transport: db.transport, workerId: 'tab', visibilityMs: 30_000, handler() {} });
    expectTypeOf(runtime).toEqualTypeOf<Runtime<Order, OrderEvent>>();
  }

  it('openBrowserDatabase<E, X>() gives a transport of E and a store of X', () => {
    expectTypeOf(openBrowserDatabase<OrderEvent, Order>).returns.toEqualTypeOf<Promise<BrowserDatabase<OrderEvent, Order>>>();
    expectTypeOf(openBrowserDatabase).returns.toEqualTypeOf<Promise<BrowserDatabase<unknown, import('leasehold').Execution>>>();
    expect(typeof page).toBe('function');
  });

  it('the published BrowserDatabaseOptions carry no test hooks (tests start workers through an internal entry)', () => {
    expectTypeOf<keyof BrowserDatabaseOptions>().toEqualTypeOf<'name' | 'storage' | 'durability' | 'clock' | 'maxAttempts' | 'maxEventBytes' | 'onDeadLetter' | 'traceMax' | 'traceSql' | 'build'>();
  });
});

describe('what the public JSDoc names, leasehold exports', () => {
  it('TransportStats is what stats() answers, MAX_BATCH the largest max, DEFAULT_QUEUE the unnamed queue; spreadTransport keeps the event type', async () => {
    const transport = new InMemoryTransport<OrderEvent>();
    expectTypeOf(transport.stats()).resolves.toEqualTypeOf<TransportStats>();
    expect(await transport.claimMany('w', 1000, { max: MAX_BATCH })).toEqual([]);
    await expect(transport.claimMany('w', 1000, { max: MAX_BATCH + 1 })).rejects.toBeInstanceOf(RangeError);
    expect(DEFAULT_QUEUE).toBe('default');
    expectTypeOf(spreadTransport([transport])).toMatchTypeOf<Transport<OrderEvent>>();
  });
});

describe('typed schedules', () => {
  type Tick = { type: 'tick'; n: number };
  type Ping = { id: string; type: 'ping' };

  it('checks a schedule event against the transport, and a handler reads its slot as a number', async () => {
    const store = new InMemoryStore();
    const transport = new InMemoryTransport<ScheduledEvent<Tick> | Ping>();
    const schedules = new Schedules({ store, transport });
    await schedules.schedule('tick', { everyMs: 1000 }, { group: 'clock', event: { type: 'tick', n: 1 } });
    await schedules.schedule('start', { everyMs: 1000 }, { workflow: 'nightly' });
    // @ts-expect-error: the transport carries no 'tock'
    await schedules.schedule('bad', { everyMs: 1000 }, { group: 'clock', event: { type: 'tock', n: 1 } });
    // @ts-expect-error: n is a number
    await schedules.schedule('bad', { everyMs: 1000 }, { group: 'clock', event: { type: 'tick', n: 'one' } });
    new Runtime({
      store,
      transport,
      handler: schedules.handler((_exe, event) => {
        if (event.type === 'tick') expectTypeOf(event.slot).toEqualTypeOf<number>();
      }),
    });
    const untyped = new Schedules({ store, transport: new InMemoryTransport() });
    await untyped.schedule('any', { everyMs: 1000 }, { group: 'g', event: { anything: true } });
    expect(schedules.id).toBe('$schedules');
  });
});
