/**
 * Checking a schedule's arguments, and the slot arithmetic: the next slot after an instant,
 * and which due slots a firing publishes under each catch-up policy.
 * @internal
 */
import { checkDuration, checkId, checkInteger, checkJson, checkObject, checkOptions, checkTime } from '../validate.js';
import { checkTimeZone, nextCron, parseCron, type CronExpression } from './cron.js';
import { CATCH_UP, type ScheduleSnapshot, type ScheduleSpec, type ScheduleTarget } from './types.js';

/** The stored form of a schedule: its snapshot without the name. */
export type ScheduleRecord = Omit<ScheduleSnapshot, 'name'>;
export type StoredSpec = ScheduleRecord['spec'];

/** How many slots one firing publishes at most (`'all'` after a long downtime goes on in the next firing). */
export const MAX_SLOTS_PER_FIRING = 100;
const DEFAULT_GRACE_MS = 60_000;

/**
 * The spec with its defaults, checked.
 * @param now the clock now: an interval without `startAt` starts at `now + everyMs`.
 * @throws TypeError / RangeError naming the bad field (`spec.cron`, `spec.timeZone` …).
 */
export function checkSpec(spec: unknown, now: number): StoredSpec {
  checkOptions('spec', spec, ['cron', 'timeZone', 'everyMs', 'startAt', 'catchUp', 'graceMs']);
  const s = spec as ScheduleSpec & Record<string, unknown>;
  const catchUp = s.catchUp ?? 'skip';
  if (typeof catchUp !== 'string') throw new TypeError(`spec.catchUp must be one of ${CATCH_UP.join(', ')}, got ${typeof catchUp}`);
  if (!(CATCH_UP as readonly string[]).includes(catchUp)) throw new RangeError(`spec.catchUp must be one of ${CATCH_UP.join(', ')}, got ${JSON.stringify(catchUp)}`);
  const graceMs = s.graceMs ?? DEFAULT_GRACE_MS;
  checkDuration('spec.graceMs', graceMs, false);
  const timing = { catchUp: catchUp as StoredSpec['catchUp'], graceMs };
  if ((s.cron === undefined) === (s.everyMs === undefined)) throw new TypeError('spec needs exactly one of cron or everyMs');
  if (s.cron !== undefined) {
    if (s.startAt !== undefined) throw new TypeError('spec.startAt goes with everyMs, not cron');
    if (typeof s.cron !== 'string') throw new TypeError(`spec.cron must be a string, got ${typeof s.cron}`);
    parseCron('spec.cron', s.cron);
    const timeZone = s.timeZone ?? 'UTC';
    checkId('spec.timeZone', timeZone);
    checkTimeZone('spec.timeZone', timeZone);
    return { cron: s.cron, timeZone, ...timing };
  }
  if (s.timeZone !== undefined) throw new TypeError('spec.timeZone goes with cron, not everyMs');
  checkInteger('spec.everyMs', s.everyMs, 1, Number.MAX_SAFE_INTEGER);
  const startAt = s.startAt ?? now + s.everyMs;
  checkTime('spec.startAt', startAt);
  return { everyMs: s.everyMs, startAt, ...timing };
}

/**
 * The target, checked and copied as JSON keeps it.
 * @throws TypeError / RangeError naming the bad field (`target.group`, `target.event` …).
 */
export function checkTarget(target: unknown): ScheduleTarget {
  checkObject('target', target);
  if ('workflow' in target) {
    checkOptions('target', target, ['workflow', 'input']);
    checkId('target.workflow', target.workflow);
    if (target.input !== undefined) checkJson('target.input', target.input);
    const copy: ScheduleTarget = { workflow: target.workflow };
    if (target.input !== undefined) copy.input = JSON.parse(JSON.stringify(target.input)) as unknown;
    return copy;
  }
  checkOptions('target', target, ['group', 'event', 'priority']);
  checkId('target.group', target.group);
  checkObject('target.event', target.event);
  checkJson('target.event', target.event);
  if (target.priority !== undefined) checkInteger('target.priority', target.priority, 0, 4);
  const copy: ScheduleTarget = { group: target.group, event: JSON.parse(JSON.stringify(target.event)) as Record<string, unknown> };
  if (target.priority !== undefined) copy.priority = target.priority;
  return copy;
}

const parsed = new Map<string, CronExpression>();

/** The first slot of `spec` strictly after `after`, or null when there is none. */
export function nextSlot(spec: StoredSpec, after: number): number | null {
  if ('everyMs' in spec) {
    if (after < spec.startAt) return spec.startAt;
    return spec.startAt + (Math.floor((after - spec.startAt) / spec.everyMs) + 1) * spec.everyMs;
  }
  let cron = parsed.get(spec.cron);
  if (cron === undefined) {
    cron = parseCron('spec.cron', spec.cron);
    parsed.set(spec.cron, cron);
  }
  return nextCron(cron, spec.timeZone, after) ?? null;
}

/** The last slot at or before `now`, not before `from` (a due slot), or null. */
function latestSlot(spec: StoredSpec, from: number, now: number): number | null {
  if ('everyMs' in spec) return now < from ? null : spec.startAt + Math.floor((now - spec.startAt) / spec.everyMs) * spec.everyMs;
  // Look back over a window that doubles until it holds a slot, then walk forward in it.
  for (let window = 60_000; ; window *= 2) {
    const start = Math.max(from, now - window);
    let slot = nextSlot(spec, start - 1);
    if (slot !== null && slot <= now) {
      for (let after = nextSlot(spec, slot); after !== null && after <= now; after = nextSlot(spec, after)) slot = after;
      return slot;
    }
    if (start === from) return null;
  }
}

/**
 * What a firing at `now` does with the due slots of `record` (those from `record.next` up to
 * `now`): the slots to publish, oldest first, and the next slot to arm (null: none).
 */
export function dueSlots(record: ScheduleRecord, now: number): { fire: number[]; next: number | null } {
  const { spec } = record;
  const from = record.next!;
  const fire: number[] = [];
  if (spec.catchUp === 'once') {
    const latest = latestSlot(spec, from, now);
    if (latest !== null) fire.push(latest);
  } else {
    // 'skip' starts at the oldest slot still within graceMs; 'all' at the oldest due one.
    let slot: number | null = spec.catchUp === 'all' || from >= now - spec.graceMs ? from : nextSlot(spec, now - spec.graceMs - 1);
    while (slot !== null && slot <= now && fire.length < MAX_SLOTS_PER_FIRING) {
      fire.push(slot);
      slot = nextSlot(spec, slot);
    }
    if (fire.length === MAX_SLOTS_PER_FIRING) return { fire, next: slot };
  }
  return { fire, next: nextSlot(spec, Math.max(now, fire.at(-1) ?? now)) };
}
