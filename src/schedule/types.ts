/**
 * The public types of schedules.
 *
 * Terminology
 * - **slot**: one instant (ms) at which a schedule fires, by its cron expression in its time
 *   zone or every `everyMs` from its `startAt`. Each slot fires at most once, whoever fires it.
 * - **missed slot**: one whose time passed more than `graceMs` before any worker could fire it
 *   (every worker was down, or the schedule's timer waited behind other work).
 * - **catch-up**: what firing does with missed slots: `'skip'` drops them, `'once'` fires only
 *   the latest of the due slots, `'all'` fires every one of them, oldest first.
 */
import type { Execution, ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';

/** What a schedule does with the slots it missed; see the file's terminology. */
export type CatchUp = 'skip' | 'once' | 'all';

/** The frozen list of {@link CatchUp} values. */
export const CATCH_UP = Object.freeze(['skip', 'once', 'all'] as const);

/** How a schedule fires, and what it does after downtime. */
export interface ScheduleTiming {
  /** Default `'skip'`. */
  catchUp?: CatchUp;
  /** How late a slot may fire and still count as on time (not missed): ms ≥ 0, default 60 000. */
  graceMs?: number;
}

/**
 * A cron expression: five fields (minute hour day-of-month month day-of-week) with `*`, lists,
 * ranges, `*​/n` and `a-b/n` steps, month and day names, or a nickname (`@hourly`, `@daily`,
 * `@weekly`, `@monthly`, `@yearly`). When both day fields are restricted, a day matching either
 * fires (as in Vixie cron).
 */
export interface CronTiming extends ScheduleTiming {
  cron: string;
  /** An IANA time zone (`'Europe/Berlin'`), default `'UTC'`. See docs/schedules.md for DST. */
  timeZone?: string;
}

/** Every `everyMs` milliseconds (a positive integer), the first slot at `startAt` (default: now + everyMs). */
export interface IntervalTiming extends ScheduleTiming {
  everyMs: number;
  /** The instant (ms) of one slot; the others are `startAt + k·everyMs`. */
  startAt?: number;
}

/** When a schedule fires: exactly one of `cron` or `everyMs`. */
export type ScheduleSpec = CronTiming | IntervalTiming;

/**
 * What each slot publishes: `event` to transport group `group` (an execution's id, for a
 * Runtime), as a copy with `id` set to the slot's id and `schedule` and `slot` fields added.
 */
export interface EventTarget<E = unknown> {
  group: string;
  /**
   * JSON-safe. Its own `id`, `schedule` and `slot` are overwritten. Typed by the transport's
   * event type: with `Transport<ScheduledEvent<Tick>>`, a `Tick` without those three fields.
   */
  event: SlotEventBody<E>;
  /** 0–4, default 0: the priority of a group the publish creates. */
  priority?: number;
}

/**
 * What each slot starts: workflow `workflow` (registered with the `Workflows` that runs the
 * schedules) with `input`, as execution `<schedule name>@<slot in ms>`.
 */
export interface WorkflowTarget {
  workflow: string;
  /** JSON-safe; default `undefined`. */
  input?: unknown;
}

/** What a slot does. `E` is the event type of the schedules' transport. */
export type ScheduleTarget<E = unknown> = EventTarget<E> | WorkflowTarget;

/**
 * An event as a slot publishes it: the target's event with the slot's id, the schedule's name
 * and the slot's instant (ms). Declare the transport as `Transport<ScheduledEvent<Tick> | …>`
 * and a handler reads `event.slot` as a number.
 */
export type ScheduledEvent<E> = E & { id: string; schedule: string; slot: number };

/** What a target's `event` may be for a transport of `E`s: each member of `E` without the fields a slot sets. */
export type SlotEventBody<E> = unknown extends E ? Record<string, unknown> : E extends object ? Omit<E, 'id' | 'schedule' | 'slot'> : never;

/** A schedule as `get` and `list` report it: copies, safe to keep. */
export interface ScheduleSnapshot {
  name: string;
  /** The timing as stored, with its defaults filled in. */
  spec: Required<Pick<ScheduleTiming, 'catchUp' | 'graceMs'>> & ({ cron: string; timeZone: string } | { everyMs: number; startAt: number });
  target: ScheduleTarget;
  paused: boolean;
  /** The next slot (ms), or null when paused or when the expression has no slot left. */
  next: number | null;
  /** The last slot fired, or null. */
  last: number | null;
  /** How many slots this schedule has fired. */
  fired: number;
}

/** Options of `Schedules`. */
export interface SchedulesOptions<E = unknown> {
  /** Where the schedules live: one execution (`id`) holds them all, so `list` is one read. */
  store: ExecutionStore<Execution>;
  /** The transport the Runtime claims from: slot events are published on it; its event type checks each target's event. */
  transport: Transport<E>;
  /** ms; the same clock as the Runtime's. Default `Date.now`. */
  clock?: () => number;
  /** The execution that holds the schedules; default `'$schedules'`. */
  id?: string;
}
