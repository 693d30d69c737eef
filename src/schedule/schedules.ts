/**
 * Schedules on the execution store, fired by a Runtime: every schedule lives in one execution
 * (`$schedules` by default), each armed as one store timer at its next slot. The Runtime sweeps
 * due timers like any other; the timeout reaches `Schedules.handler`, which publishes the due
 * slots and re-arms the timer in the one commit of that event.
 *
 * Why a slot is published once, whoever fires it: the timeout is one message of the transport,
 * handled under a lease by one worker at a time, and the commit that records the slot also marks
 * the timeout processed (CAS), so the slot is decided once. The slot's event is published by the
 * handler with the slot's id as its key and `after` the timeout's own seq: it is not delivered
 * until that timeout is acked, which happens only after the commit landed. A worker that dies
 * before its commit leaves the event queued and held; the next worker to take the timeout
 * publishes it again, which the key turns into the same message; its commit and ack release it.
 */
import { LeaseholdError, StoreConflictError } from '../errors.js';
import { ownedBy, ownersOf, readControl, writeControl } from '../runtime/control.js';
import type { Effects, EventBase, Handler, HandlerInfo, RuntimeEvent } from '../runtime/types.js';
import type { Execution, ExecutionStore, TimerChange } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import { checkId, checkOptions, readClock } from '../validate.js';
import { checkSpec, checkTarget, dueSlots, nextSlot, type ScheduleRecord } from './spec.js';
import type { ScheduleSnapshot, ScheduleSpec, ScheduleTarget, SchedulesOptions } from './types.js';

/** The execution field that holds the schedules, by name. */
export const SCHEDULES_FIELD = 'schedules';
/** How often a change reloads and retries when a firing commits under it. */
const RETRIES = 20;
/** The owner the schedules' execution names: only a handler wrapped by `handler()` runs it. */
const OWNER = 'leasehold/schedule';
/** The `rootPath` under which `Workflows` starts a spawned child as a workflow. */
const WORKFLOW_ROOT = 'workflow';

type Records = Record<string, ScheduleRecord>;

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const part = (text: string): string => encodeURIComponent(text);

/** The id of the event slot `slot` of schedule `name` publishes; also its publish key. */
export function slotEventId(name: string, slot: number): string {
  return `schedule:${part(name)}:${slot}`;
}

/**
 * Schedules: cron or interval timings that publish an event, or start a workflow, once per slot
 * however many workers, processes or tabs run them. Kept in the store with everything else;
 * fired by any Runtime (or `Workflows`) whose handler is wrapped with {@link Schedules.handler},
 * on the same store and transport. See docs/schedules.md.
 *
 * Guarantees: each slot is decided once (one CAS commit records it and re-arms the timer) and
 * published as one message (see this file's header); a slot fires at or after its time, when a
 * worker steps; missed slots follow the schedule's catch-up policy. Changes (`schedule`,
 * `pause`, `resume`, `remove`) are CAS writes: once one resolves, every later firing sees it; a
 * firing already running when it lands loses its commit, but the events it published may still
 * be delivered (at most that one firing's slots).
 *
 * @throws TypeError / RangeError from the constructor, naming the first bad option.
 */
export class Schedules<E = unknown> {
  readonly #store: ExecutionStore<Execution>;
  readonly #transport: Transport<unknown>;
  readonly #clock: () => number;
  readonly #id: string;

  constructor(options: SchedulesOptions<E>) {
    checkOptions('options', options, ['store', 'transport', 'clock', 'id']);
    for (const [name, methods] of [
      ['store', ['load', 'commit']],
      ['transport', ['publish']],
    ] as const) {
      const value = (options as unknown as Record<string, Record<string, unknown> | undefined>)[name];
      if (typeof value !== 'object' || value === null || methods.some((m) => typeof value[m] !== 'function')) {
        throw new TypeError(`options.${name} must be ${name === 'store' ? 'an ExecutionStore' : 'a Transport'}`);
      }
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') throw new TypeError('options.clock must be a function');
    if (options.id !== undefined) checkId('options.id', options.id);
    this.#store = options.store;
    this.#transport = options.transport as Transport<unknown>;
    this.#clock = options.clock ?? Date.now;
    this.#id = options.id ?? '$schedules';
  }

  /** The id of the execution that holds the schedules. */
  get id(): string {
    return this.#id;
  }

  /**
   * Creates schedule `name`, or replaces its spec and target. Its next slot is the first after
   * now by the new spec (a slot it already fired never fires again); a paused schedule stays
   * paused. Resolves the schedule as stored.
   * @throws TypeError / RangeError for a bad name, spec (a cron expression that does not parse,
   *   an unknown time zone) or target (an event JSON cannot keep), before anything is written.
   * @throws StoreConflictError if the schedules kept changing under 20 attempts.
   */
  async schedule(name: string, spec: ScheduleSpec, target: ScheduleTarget<E>): Promise<ScheduleSnapshot> {
    checkId('name', name);
    const now = readClock(this.#clock);
    const stored = checkSpec(spec, now);
    const checkedTarget = checkTarget(target as ScheduleTarget);
    return this.#change(name, (records, now) => {
      const old = records[name];
      const record: ScheduleRecord = { spec: stored, target: checkedTarget, paused: old?.paused ?? false, next: null, last: old?.last ?? null, fired: old?.fired ?? 0 };
      if (!record.paused) record.next = nextSlot(stored, Math.max(now, record.last ?? -Infinity));
      records[name] = record;
      return true;
    });
  }

  /**
   * Pauses schedule `name`: once this resolves, no slot of it is decided until `resume`; slots
   * that pass meanwhile are not fired, not even by `resume`. Pausing a paused schedule does nothing.
   * Resolves the schedule as stored.
   * @throws TypeError / RangeError for a bad name, before anything is read.
   * @throws LeaseholdError NOT_FOUND if there is no such schedule.
   * @throws StoreConflictError if the schedules kept changing under 20 attempts.
   */
  async pause(name: string): Promise<ScheduleSnapshot> {
    checkId('name', name);
    return this.#change(name, (records) => {
      const record = this.#existing(records, name);
      if (record.paused) return false;
      record.paused = true;
      record.next = null;
      return true;
    });
  }

  /**
   * Resumes schedule `name`: its next slot is the first after now. Resuming a running schedule
   * does nothing. Resolves the schedule as stored.
   * @throws as {@link pause}.
   */
  async resume(name: string): Promise<ScheduleSnapshot> {
    checkId('name', name);
    return this.#change(name, (records, now) => {
      const record = this.#existing(records, name);
      if (!record.paused) return false;
      record.paused = false;
      record.next = nextSlot(record.spec, Math.max(now, record.last ?? -Infinity));
      return true;
    });
  }

  /**
   * Removes schedule `name` and disarms its timer. Resolves whether it existed. Scheduling the
   * name again starts afresh (its old slots may fire again).
   * @throws TypeError / RangeError for a bad name; StoreConflictError as {@link pause}.
   */
  async remove(name: string): Promise<boolean> {
    checkId('name', name);
    let existed = false;
    await this.#change(name, (records) => {
      existed = name in records;
      if (!existed) return false;
      delete records[name];
      return true;
    });
    return existed;
  }

  /**
   * Schedule `name` as stored (a copy), or undefined.
   * @throws TypeError / RangeError for a bad name.
   */
  async get(name: string): Promise<ScheduleSnapshot | undefined> {
    checkId('name', name);
    const record = this.#records(await this.#store.load(this.#id))[name];
    return record === undefined ? undefined : { name, ...copy(record) };
  }

  /** Every schedule, sorted by name (copies). */
  async list(): Promise<ScheduleSnapshot[]> {
    const records = this.#records(await this.#store.load(this.#id));
    return Object.keys(records)
      .sort()
      .map((name) => ({ name, ...copy(records[name]!) }));
  }

  /**
   * A Runtime handler that fires the schedules and hands every other execution's events to
   * `inner` (default: none; such events are then marked processed and dropped). Give it as the
   * `handler` of every Runtime on this store and transport, or as the `schedules` option of
   * `Workflows`. A Runtime whose handler is not wrapped that takes a schedule's timer gives it
   * back (step result `foreign`, no attempt spent, for its back-off) to a runtime whose handler
   * is: only runtimes with a wrapped handler fire schedules. Its events are typed by the
   * schedules' transport (`Transport<ScheduledEvent<Tick>>`: `event.slot` is a number).
   */
  handler<X extends Execution, H extends EventBase = [E] extends [EventBase] ? E : RuntimeEvent>(inner?: Handler<X, H>): Handler<X, H> {
    const handler: Handler<X, H> = (exe, event, info) => {
      if (exe.id === this.#id) return this.#fire(exe, event as RuntimeEvent, info) as Promise<Effects | void>;
      return inner?.(exe, event, info);
    };
    return ownedBy(handler, [...ownersOf(inner), OWNER]);
  }

  async #fire(exe: Execution, event: RuntimeEvent, info: HandlerInfo): Promise<Effects | undefined> {
    // Only the timers of schedules; a workflow a slot started tells its end here too (ignored).
    if (event.type !== 'timeout' || typeof event.path !== 'string') return undefined;
    const records = this.#records(exe);
    const record = records[event.path];
    const name = event.path;
    if (record === undefined || record.paused || record.next !== event.fireAt) return undefined;
    // The timer is due by the clock of the worker that swept it; one whose clock runs behind must
    // still fire it, or the re-armed timer would repeat this timeout's id and never be handled.
    const { fire, next } = dueSlots(record, Math.max(info.now, event.fireAt as number));
    const effects: Effects = { spawn: [], trace: { schedule: name, slots: fire } };
    const target = record.target;
    for (const slot of fire) {
      if ('workflow' in target) {
        // A child execution per slot: the spawn relay creates it only if absent.
        effects.spawn!.push({ childId: `${name}@${slot}`, rootPath: WORKFLOW_ROOT, context: target.input === undefined ? { workflow: target.workflow } : { workflow: target.workflow, input: target.input } });
      } else {
        const id = slotEventId(name, slot);
        await this.#transport.publish(target.group, { ...target.event, id, schedule: name, slot }, { key: id, after: info.seq, priority: target.priority ?? 0 });
      }
    }
    record.next = next;
    record.last = fire.at(-1) ?? record.last;
    record.fired += fire.length;
    exe[SCHEDULES_FIELD] = records;
    if (next !== null) effects.timers = [{ path: name, at: next }];
    return effects;
  }

  #records(exe: Execution | undefined): Records {
    const records = exe?.[SCHEDULES_FIELD];
    return typeof records === 'object' && records !== null ? copy(records as Records) : {};
  }

  #existing(records: Records, name: string): ScheduleRecord {
    const record = records[name];
    if (record === undefined) throw new LeaseholdError('NOT_FOUND', `schedule ${JSON.stringify(name)} does not exist`);
    return record;
  }

  /**
   * Load → change → commit with the timer of `name` re-armed or disarmed, retried on conflict.
   * `change` returns whether to write. Resolves the schedule after the change.
   */
  async #change(name: string, change: (records: Records, now: number) => boolean): Promise<ScheduleSnapshot> {
    const snapshot = (records: Records): ScheduleSnapshot => ({ name, ...copy(records[name] ?? ({} as ScheduleRecord)) });
    for (let attempt = 1; ; attempt++) {
      const stored = await this.#store.load(this.#id);
      const exe: Execution = stored === undefined ? { id: this.#id, version: 0 } : copy(stored);
      const records = this.#records(exe);
      const now = readClock(this.#clock);
      if (!change(records, now)) return snapshot(records);
      const control = readControl(exe);
      // A Runtime whose handler is not wrapped gives this execution's timers back, not eats them.
      control.owner = OWNER;
      const next = records[name]?.next ?? null;
      let timer: TimerChange;
      if (next === null) {
        delete control.timers[name];
        timer = { action: 'cancel', path: name };
      } else {
        control.timers[name] = next;
        timer = { action: 'schedule', path: name, fireAt: next };
      }
      writeControl(exe, control);
      exe[SCHEDULES_FIELD] = records;
      try {
        await this.#store.commit(exe, { timers: [timer], trace: { schedule: name, change: records[name] === undefined ? 'removed' : 'changed' } });
        return snapshot(records);
      } catch (error) {
        if (!(error instanceof StoreConflictError) || attempt >= RETRIES) throw error;
      }
    }
  }
}
