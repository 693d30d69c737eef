/**
 * The workflows the runtime tests drive, written as an application would write them, and the
 * small harness around a backend pair: a manual clock and scheduler, workers, and "step until
 * quiet".
 */
import { ManualClock } from '../../src/clock.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { Effects, Handler, RuntimeEvent, RuntimeOptions, StepResult } from '../../src/runtime/types.js';
import type { Execution } from '../../src/store/contract.js';
import type { MakeRuntimeBackends, RuntimeBackends } from './runtime-backends.js';
import { ManualScheduler } from './runtime-scheduler.js';

export const VISIBILITY_MS = 30_000;
export const PAYMENT_WINDOW_MS = 60_000;

/** An order (placed → paid → shipped, or cancelled by the payment timeout) or one of its item children. */
export interface OrderLike extends Execution {
  status: string;
  /** Every event id this execution applied, in order: a repeat would show here. */
  applied: string[];
  items?: string[];
  reserved?: string[];
  paid?: boolean;
}

function maybeShip(order: OrderLike, effects: Effects): void {
  if (order.status === 'paid' && order.reserved!.length === order.items!.length) {
    order.status = 'shipped';
    (effects.emit ??= []).push({ to: null, event: { type: 'shipped', orderId: order.id } });
  }
}

/**
 * The order workflow. `place` arms the payment timer and spawns one child per item; a child
 * reserves its item and tells the order; `pay` cancels the timer; the order ships once paid with
 * every item reserved; the timeout cancels an unpaid order.
 */
export const orderHandler: Handler = (exe, event) => {
  const order = exe as OrderLike;
  (order.applied ??= []).push(event.id); // a spawned child starts with only parentId, rootPath, context
  const effects: Effects = { trace: { status: order.status } };
  if (order.parentId !== undefined) {
    // An item child: reserve the item, report to the order.
    if (event.type === 'spawned') {
      order.status = 'reserved';
      effects.emit = [{ to: order.parentId as string, event: { type: 'reserved', sku: (order.context as { sku: string }).sku } }];
    }
    return effects;
  }
  switch (event.type) {
    case 'place':
      order.status = 'awaiting-payment';
      order.items = event.items as string[];
      order.reserved = [];
      effects.timers = [{ path: 'payment', afterMs: PAYMENT_WINDOW_MS }];
      effects.spawn = order.items.map((sku) => ({ childId: `${order.id}/${sku}`, rootPath: 'reserve', context: { sku } }));
      break;
    case 'pay':
      if (order.status !== 'awaiting-payment') break;
      order.status = 'paid';
      effects.timers = [{ path: 'payment', cancel: true }];
      maybeShip(order, effects);
      break;
    case 'reserved':
      order.reserved!.push(event.sku as string);
      maybeShip(order, effects);
      break;
    case 'timeout':
      if (order.status === 'awaiting-payment') order.status = 'cancelled';
      break;
  }
  return effects;
};

/** A harness: backends, a manual clock and scheduler, and workers on them. */
export interface Harness extends RuntimeBackends {
  clock: ManualClock;
  scheduler: ManualScheduler;
  worker(workerId: string, overrides?: Partial<RuntimeOptions>): Runtime;
}

export async function makeHarness(make: MakeRuntimeBackends, options: { maxAttempts?: number } = {}): Promise<Harness> {
  const clock = new ManualClock(1_000_000);
  const scheduler = new ManualScheduler(clock);
  const backends = await make({ clock: clock.now, ...options });
  let ids = 0;
  const newId = (): string => `evt-${++ids}`;
  return {
    ...backends,
    clock,
    scheduler,
    worker: (workerId, overrides = {}) =>
      new Runtime({
        store: backends.store,
        transport: backends.transport,
        handler: orderHandler,
        workerId,
        visibilityMs: VISIBILITY_MS,
        clock: clock.now,
        scheduler,
        backoff: { baseMs: 100, maxMs: 1_000 },
        newId,
        ...overrides,
      }),
  };
}

/** Steps the workers in turn until a whole round is idle; returns every result. */
export async function drain(workers: { step(): Promise<StepResult> }[], limit = 500): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (let round = 0; round < limit; round++) {
    let busy = false;
    for (const worker of workers) {
      const result = await worker.step();
      if (result.kind !== 'idle') {
        busy = true;
        results.push(result);
      }
    }
    if (!busy) return results;
  }
  throw new Error(`still busy after ${limit} rounds`);
}

/** The kinds of `results`, for compact assertions. */
export const kinds = (results: StepResult[]): string[] => results.map((r) => r.kind);

/** The event a handler saw, typed loosely for tests. */
export type AnyEvent = RuntimeEvent;
