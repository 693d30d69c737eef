/**
 * leasehold/schedule: cron and interval schedules that publish an event, or start a workflow,
 * once per slot however many workers run them; kept in the execution store and fired by a
 * Runtime (or `Workflows`) on the same store and transport. See docs/schedules.md.
 */
export { Schedules, SCHEDULES_FIELD, slotEventId } from './schedules.js';
export { CATCH_UP } from './types.js';
export type {
  CatchUp,
  CronTiming,
  EventTarget,
  IntervalTiming,
  ScheduledEvent,
  ScheduleSnapshot,
  ScheduleSpec,
  ScheduleTarget,
  SchedulesOptions,
  ScheduleTiming,
  SlotEventBody,
  WorkflowTarget,
} from './types.js';
