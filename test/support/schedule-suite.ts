/**
 * Schedules on one store + transport pair: slots fired once each at their times (interval and
 * cron, a time zone across both DST changes), catch-up after downtime, pause, resume, remove,
 * list, changing a spec, a worker dying before its commit, workflow targets, and bad input
 * refused with nothing written. A manual clock throughout. Imports nothing of Node's, so the
 * browser project runs it through the browser host too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClosedError, LeaseholdError } from '../../src/errors.js';
import { ManualClock } from '../../src/clock.js';
import { Runtime } from '../../src/runtime/runtime.js';
import type { Handler, StepResult } from '../../src/runtime/types.js';
import { Schedules } from '../../src/schedule/schedules.js';
import type { ScheduleSpec } from '../../src/schedule/types.js';
import type { Transport } from '../../src/transport/contract.js';
import { defineWorkflow, Workflows } from '../../src/workflow/workflows.js';
import type { MakeRuntimeBackends, RuntimeBackends } from './runtime-backends.js';
import { drain } from './runtime-workflows.js';
import { storeWithFault } from './workflow-faults.js';

const VISIBILITY_MS = 30_000;
const MINUTE = 60_000;
/** 2026-03-27T12:00Z: two days before Europe/Berlin moves its clocks forward. */
const START = Date.UTC(2026, 2, 27, 12);

/** The target execution's handler: records each slot event it applies. */
const record: Handler = (exe, event, info) => {
  (exe.seen as unknown[]).push({ id: event.id, slot: event.slot, seq: info.seq });
};

interface Harness extends RuntimeBackends {
  clock: ManualClock;
  schedules: Schedules;
  /** The seqs each event id was published under (a second message for one slot would show here). */
  published: Map<string, Set<number>>;
  worker(id: string, overrides?: { store?: RuntimeBackends['store']; clock?: () => number }): Runtime;
  /** The slots the target execution applied. */
  seen(): Promise<number[]>;
}

export function describeSchedules(name: string, make: MakeRuntimeBackends): void {
  describe(`Schedules on ${name}`, () => {
    let h: Harness;
    beforeEach(async () => {
      const clock = new ManualClock(START);
      const backends = await make({ clock: clock.now });
      const published = new Map<string, Set<number>>();
      // Every publish seen, by event id: the queue's history of slot messages.
      const transport = new Proxy(backends.transport, {
        get(target, key) {
          if (key !== 'publish') {
            const value = Reflect.get(target, key, target) as unknown;
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          }
          return async (group: string, event: { id: string }, options: object) => {
            const seq = await target.publish(group, event, options);
            if (!published.has(event.id)) published.set(event.id, new Set());
            published.get(event.id)!.add(seq);
            return seq;
          };
        },
      }) as Transport;
      const schedules = new Schedules({ store: backends.store, transport, clock: clock.now });
      let ids = 0;
      h = {
        ...backends,
        transport,
        clock,
        schedules,
        published,
        worker: (id, overrides = {}) =>
          new Runtime({
            store: overrides.store ?? backends.store,
            transport,
            handler: schedules.handler(record),
            workerId: id,
            visibilityMs: VISIBILITY_MS,
            clock: overrides.clock ?? clock.now,
            backoff: { baseMs: 100, maxMs: 1_000 },
            newId: () => `evt-${++ids}`,
          }),
        seen: async () => ((await backends.store.load('ticks'))!.seen as { slot: number }[]).map((s) => s.slot),
      };
      await h.worker('setup').createExecution('ticks', { seen: [] });
    });
    afterEach(() => h.dispose());

    const tick = { group: 'ticks', event: { type: 'tick' } };
    const everyMinute: ScheduleSpec = { everyMs: MINUTE, startAt: START + MINUTE };
    /** Two workers stepping in turn until quiet. */
    const run = async (): Promise<StepResult[]> => drain([h.worker('w1'), h.worker('w2')]);
    const expectOnePublishPerSlot = () => {
      for (const [id, seqs] of h.published) if (id.startsWith('schedule:')) expect([id, seqs.size]).toEqual([id, 1]);
    };

    it('fires each slot once, at its time, however many workers step', async () => {
      const created = await h.schedules.schedule('minutely', everyMinute, tick);
      expect(created).toMatchObject({ name: 'minutely', paused: false, next: START + MINUTE, last: null, fired: 0 });
      await run();
      expect(await h.seen()).toEqual([]);
      h.clock.advance(MINUTE - 1);
      await run();
      expect(await h.seen()).toEqual([]);
      for (let k = 1; k <= 3; k++) {
        h.clock.set(START + k * MINUTE);
        await run();
        expect(await h.seen()).toEqual(Array.from({ length: k }, (_, i) => START + (i + 1) * MINUTE));
      }
      const event = ((await h.store.load('ticks'))!.seen as { id: string }[])[0];
      expect(event).toMatchObject({ id: `schedule:minutely:${START + MINUTE}` });
      expect(await h.schedules.get('minutely')).toMatchObject({ next: START + 4 * MINUTE, last: START + 3 * MINUTE, fired: 3 });
      expectOnePublishPerSlot();
      expect((await h.transport.inspect()).groups).toEqual([]);
    });

    it("gives a schedule's timer back from a Runtime whose handler is not wrapped, for one that is", async () => {
      await h.schedules.schedule('minutely', everyMinute, tick);
      const plain = new Runtime({ store: h.store, transport: h.transport, handler: record, workerId: 'plain', visibilityMs: VISIBILITY_MS, clock: h.clock.now, backoff: { baseMs: 100, maxMs: 1_000 } });
      h.clock.set(START + MINUTE);
      const refused = await drain([plain]);
      expect(refused.filter((r) => r.kind === 'foreign')).toEqual([expect.objectContaining({ executionId: h.schedules.id, owner: 'leasehold/schedule', retryInMs: 100, attempt: 1 })]);
      expect(await h.seen()).toEqual([]);
      h.clock.advance(101);
      const fired = await run();
      // Given back unspent: the wrapped worker's delivery of the timer is attempt 1 again.
      expect(fired.filter((r) => r.kind === 'handled' && r.executionId === h.schedules.id)).toEqual([expect.objectContaining({ attempt: 1 })]);
      expect(await h.seen()).toEqual([START + MINUTE]);
      expect(await h.schedules.get('minutely')).toMatchObject({ fired: 1 });
      expectOnePublishPerSlot();
    });

    it('fires a cron schedule in its time zone, across the spring and autumn DST changes', async () => {
      await h.worker('setup').createExecution('halves', { seen: [] });
      const slotsOf = async (id: string) => ((await h.store.load(id))!.seen as { slot: number }[]).map((s) => s.slot);
      await h.schedules.schedule('nightly', { cron: '30 2 * * *', timeZone: 'Europe/Berlin' }, tick);
      // 02:30 on 29 March does not exist in Berlin: the fixed-time slot fires as the clocks jump (03:00 CEST).
      const spring = [Date.UTC(2026, 2, 28, 1, 30), Date.UTC(2026, 2, 29, 1, 0), Date.UTC(2026, 2, 30, 0, 30)];
      for (const slot of spring) {
        h.clock.set(slot - 1);
        await run();
        h.clock.set(slot);
        await run();
      }
      expect(await h.seen()).toEqual(spring);
      // 02:00–02:59 happens twice on 25 October: the fixed-time slot fires once, the every-30-minutes one on both.
      h.clock.set(Date.UTC(2026, 9, 24, 23, 59));
      await h.schedules.schedule('half-hourly', { cron: '*/30 * * * *', timeZone: 'Europe/Berlin' }, { group: 'halves', event: { type: 'half' } });
      const autumn = [Date.UTC(2026, 9, 25, 0, 30), Date.UTC(2026, 9, 26, 1, 30)];
      for (const time of [Date.UTC(2026, 9, 24, 23, 59), ...[0, 30, 60, 90, 120].map((m) => Date.UTC(2026, 9, 25, 0, m)), autumn[1]!]) {
        h.clock.set(time);
        await run();
      }
      expect((await h.seen()).slice(spring.length)).toEqual(autumn);
      // 02:00 and 02:30 CEST, then 02:00 and 02:30 CET, then 03:00 CET.
      expect((await slotsOf('halves')).slice(0, 5)).toEqual([0, 30, 60, 90, 120].map((m) => Date.UTC(2026, 9, 25, 0, m)));
      expectOnePublishPerSlot();
    });

    it.each([
      ['skip', []],
      ['once', [10]],
      ['all', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    ] as const)('after downtime, catch-up %s fires %j of the missed minutes', async (catchUp, expected) => {
      await h.schedules.schedule('minutely', { ...everyMinute, catchUp, graceMs: 20_000 }, tick);
      // Every worker is down for ten slots and 30 s more (beyond the 20 s grace).
      h.clock.set(START + 10 * MINUTE + 30_000);
      await run();
      expect(await h.seen()).toEqual(expected.map((k) => START + k * MINUTE));
      expect(await h.schedules.get('minutely')).toMatchObject({ next: START + 11 * MINUTE, fired: expected.length });
      h.clock.set(START + 11 * MINUTE);
      await run();
      expect((await h.seen()).at(-1)).toBe(START + 11 * MINUTE);
      expectOnePublishPerSlot();
    });

    it('fires a slot late within its grace under skip', async () => {
      await h.schedules.schedule('minutely', { ...everyMinute, catchUp: 'skip', graceMs: 30_000 }, tick);
      h.clock.set(START + MINUTE + 20_000);
      await run();
      expect(await h.seen()).toEqual([START + MINUTE]);
      h.clock.set(START + 2 * MINUTE + 40_000);
      await run();
      expect(await h.seen()).toEqual([START + MINUTE]);
    });

    it('pauses, resumes, lists and removes', async () => {
      await h.schedules.schedule('b', everyMinute, tick);
      await h.schedules.schedule('a', { cron: '0 * * * *' }, tick);
      expect((await h.schedules.list()).map((s) => [s.name, s.next])).toEqual([
        ['a', START + 60 * MINUTE],
        ['b', START + MINUTE],
      ]);
      expect(await h.schedules.pause('b')).toMatchObject({ name: 'b', paused: true, next: null });
      expect(await h.schedules.pause('b')).toMatchObject({ paused: true });
      h.clock.set(START + 5 * MINUTE);
      await run();
      expect(await h.seen()).toEqual([]);
      // Slots passed while paused are not fired by resume; the next one is.
      expect(await h.schedules.resume('b')).toMatchObject({ paused: false, next: START + 6 * MINUTE });
      h.clock.set(START + 6 * MINUTE);
      await run();
      expect(await h.seen()).toEqual([START + 6 * MINUTE]);
      expect(await h.schedules.remove('b')).toBe(true);
      expect(await h.schedules.remove('b')).toBe(false);
      expect(await h.schedules.get('b')).toBeUndefined();
      h.clock.set(START + 30 * MINUTE);
      await run();
      expect(await h.seen()).toEqual([START + 6 * MINUTE]);
      expect((await h.schedules.list()).map((s) => s.name)).toEqual(['a']);
      await expect(h.schedules.pause('b')).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(h.schedules.resume('nope')).rejects.toBeInstanceOf(LeaseholdError);
      expectOnePublishPerSlot();
    });

    it('changes a schedule: the new spec and target apply from the next slot, fired slots never repeat', async () => {
      await h.schedules.schedule('s', everyMinute, tick);
      h.clock.set(START + MINUTE);
      await run();
      const changed = await h.schedules.schedule('s', { everyMs: 5 * MINUTE, startAt: START }, { group: 'ticks', event: { type: 'slow' } });
      expect(changed).toMatchObject({ next: START + 5 * MINUTE, last: START + MINUTE, fired: 1, spec: { everyMs: 5 * MINUTE } });
      h.clock.set(START + 4 * MINUTE);
      await run();
      expect(await h.seen()).toEqual([START + MINUTE]);
      h.clock.set(START + 5 * MINUTE);
      await run();
      expect(await h.seen()).toEqual([START + MINUTE, START + 5 * MINUTE]);
      const types = ((await h.store.load('ticks'))!.seen as { id: string }[]).map((s) => s.id);
      expect(types).toEqual([`schedule:s:${START + MINUTE}`, `schedule:s:${START + 5 * MINUTE}`]);
      // A spec whose next slot is one already fired moves past it.
      expect(await h.schedules.schedule('s', { everyMs: 5 * MINUTE, startAt: START }, tick)).toMatchObject({ next: START + 10 * MINUTE });
    });

    it('fires a slot whose timer a worker with a clock ahead swept, on a worker whose clock is behind', async () => {
      await h.schedules.schedule('minutely', everyMinute, tick);
      h.clock.set(START + MINUTE - 2_000);
      const ahead = h.worker('ahead', { clock: () => h.clock.now() + 5_000 });
      expect((await ahead.step()).kind).toBe('timers');
      await drain([h.worker('behind')]);
      expect(await h.seen()).toEqual([START + MINUTE]);
      expect(await h.schedules.get('minutely')).toMatchObject({ next: START + 2 * MINUTE, fired: 1 });
    });

    it('publishes one message for a slot whose first firing died before its commit', async () => {
      await h.schedules.schedule('minutely', everyMinute, tick);
      let dying = true;
      const dead = h.worker('dead', {
        store: storeWithFault(h.store, (exe) => {
          if (exe.id === '$schedules' && dying && exe.$runtime !== undefined && (exe.schedules as { minutely?: { fired: number } }).minutely?.fired === 1) {
            dying = false;
            throw new ClosedError('store (the worker died before its commit)');
          }
        }),
      });
      h.clock.set(START + MINUTE);
      await expect(drain([dead])).rejects.toThrow(ClosedError);
      // The slot's event is queued, held behind the timeout the dead worker leased.
      expect(h.published.get(`schedule:minutely:${START + MINUTE}`)?.size).toBe(1);
      await run();
      expect(await h.seen()).toEqual([]);
      h.clock.advance(VISIBILITY_MS + 1);
      await run();
      expect(await h.seen()).toEqual([START + MINUTE]);
      expectOnePublishPerSlot();
      expect(await h.schedules.get('minutely')).toMatchObject({ fired: 1, next: START + 2 * MINUTE });
    });

    it('starts one workflow run per slot', async () => {
      const hello = defineWorkflow('hello', async (input: { who: string }, step) => step.run('greet', () => `hello ${input.who}`));
      const workflows = new Workflows({ store: h.store, transport: h.transport, workerId: 'wf', workflows: [hello], schedules: h.schedules, clock: h.clock.now, visibilityMs: VISIBILITY_MS });
      await h.schedules.schedule('greeter', everyMinute, { workflow: 'hello', input: { who: 'world' } });
      h.clock.set(START + MINUTE);
      await drain([workflows, workflows]);
      expect(await workflows.get(`greeter@${START + MINUTE}`)).toMatchObject({ status: 'completed', result: 'hello world' });
      h.clock.set(START + 2 * MINUTE);
      await drain([workflows]);
      expect(await workflows.get(`greeter@${START + 2 * MINUTE}`)).toMatchObject({ status: 'completed' });
      expect(await h.schedules.get('greeter')).toMatchObject({ fired: 2 });
    });

    it('refuses bad input with an error naming it, writing nothing', async () => {
      const bad: [unknown, unknown, unknown, RegExp][] = [
        ['', everyMinute, tick, /name/],
        [7, everyMinute, tick, /name/],
        ['s', null, tick, /spec/],
        ['s', {}, tick, /exactly one of cron or everyMs/],
        ['s', { cron: '* * * *' }, tick, /spec\.cron.*five fields/],
        ['s', { cron: '61 * * * *' }, tick, /spec\.cron \(minute\)/],
        ['s', { cron: '*/0 * * * *' }, tick, /spec\.cron.*step/],
        ['s', { cron: '5 4 * * funday' }, tick, /spec\.cron \(day of week\)/],
        ['s', { cron: '0 0 * * *', timeZone: 'Mars/Olympus' }, tick, /spec\.timeZone/],
        ['s', { cron: '0 0 * * *', everyMs: 5 }, tick, /exactly one/],
        ['s', { everyMs: 0 }, tick, /spec\.everyMs/],
        ['s', { everyMs: 1.5 }, tick, /spec\.everyMs/],
        ['s', { everyMs: 5, startAt: Number.NaN }, tick, /spec\.startAt/],
        ['s', { everyMs: 5, timeZone: 'UTC' }, tick, /spec\.timeZone/],
        ['s', { everyMs: 5, catchUp: 'sometimes' }, tick, /spec\.catchUp/],
        ['s', { everyMs: 5, graceMs: -1 }, tick, /spec\.graceMs/],
        ['s', { everyMs: 5, every: 3 }, tick, /spec has no option "every"/],
        ['s', everyMinute, null, /target/],
        ['s', everyMinute, { group: '', event: {} }, /target\.group/],
        ['s', everyMinute, { group: 'g', event: { n: 10n } }, /target\.event/],
        ['s', everyMinute, { group: 'g', event: {}, priority: 9 }, /target\.priority/],
        ['s', everyMinute, { workflow: '' }, /target\.workflow/],
        ['s', everyMinute, { workflow: 'w', input: () => 1 }, /target\.input/],
      ];
      for (const [name, spec, target, message] of bad) {
        const error = await h.schedules.schedule(name as string, spec as ScheduleSpec, target as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect([String(error), error instanceof TypeError || error instanceof RangeError]).toEqual([expect.stringMatching(message), true]);
      }
      expect(await h.store.load('$schedules')).toBeUndefined();
      expect(await h.store.dueTimers(Number.MAX_SAFE_INTEGER)).toEqual([]);
      // A bad change leaves an existing schedule as it was.
      const before = await h.schedules.schedule('s', everyMinute, tick);
      await expect(h.schedules.schedule('s', { cron: 'nope' }, tick)).rejects.toThrow(RangeError);
      await expect(h.schedules.pause('')).rejects.toThrow(RangeError);
      expect(await h.schedules.get('s')).toEqual(before);
      expect(() => new Schedules({ store: h.store, transport: h.transport, clok: Date.now } as never)).toThrow(/did you mean "clock"/);
    });
  });
}
