/**
 * Turns what a handler returned into the store's `CommitChanges`, checking every part, and
 * keeps the execution's armed-timer map in step with the timer changes.
 * @internal
 */
import type { CommitChanges, EmitChange, SpawnChange, TimerChange } from '../store/contract.js';
import { checkDuration, checkId, checkObject, checkTime } from '../validate.js';
import type { ControlState } from './control.js';
import type { Effects } from './types.js';

function list(name: string, value: unknown): readonly unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array, got ${value === null ? 'null' : typeof value}`);
  return value;
}

/**
 * The commit for `effects`, with `control.timers` updated in place.
 * @param now the clock after the handler returned: `afterMs` counts from there.
 * @param newId gives an emitted event without an id its id here, before the commit, so every
 *   relay of that outbox entry carries the same id and the recipient's dedupe recognises repeats.
 * @throws TypeError / RangeError naming the bad part (`effects.emit[2].to` …): a handler bug,
 *   reported like a handler throw.
 */
export function toChanges(effects: Effects | void, control: ControlState, now: number, newId: () => string): CommitChanges {
  if (effects === undefined) return {};
  checkObject('effects', effects);

  const emits: EmitChange[] = list('effects.emit', effects.emit).map((raw, i) => {
    const name = `effects.emit[${i}]`;
    checkObject(name, raw);
    if (raw.to !== null) checkId(`${name}.to`, raw.to);
    checkObject(`${name}.event`, raw.event);
    const event = raw.event;
    if (event.id !== undefined) checkId(`${name}.event.id`, event.id);
    return { targetId: raw.to as string | null, event: event.id === undefined ? { ...event, id: newId() } : event };
  });

  const timers: TimerChange[] = list('effects.timers', effects.timers).map((raw, i) => {
    const name = `effects.timers[${i}]`;
    checkObject(name, raw);
    checkId(`${name}.path`, raw.path);
    const path = raw.path;
    if (raw.cancel === true) {
      delete control.timers[path];
      return { action: 'cancel', path };
    }
    let fireAt: number;
    if (raw.at !== undefined) {
      checkTime(`${name}.at`, raw.at);
      fireAt = raw.at;
    } else {
      if (raw.afterMs === undefined) throw new TypeError(`${name} needs one of at, afterMs or cancel: true`);
      checkDuration(`${name}.afterMs`, raw.afterMs, false);
      fireAt = now + raw.afterMs;
    }
    control.timers[path] = fireAt;
    return { action: 'schedule', path, fireAt };
  });

  const spawns: SpawnChange[] = list('effects.spawn', effects.spawn).map((raw, i) => {
    const name = `effects.spawn[${i}]`;
    checkObject(name, raw);
    checkId(`${name}.childId`, raw.childId);
    if (raw.rootPath !== undefined) checkId(`${name}.rootPath`, raw.rootPath);
    checkObject(`${name}.context`, raw.context, true);
    return { childId: raw.childId, rootPath: (raw.rootPath as string | undefined) ?? '/', context: raw.context ?? {} };
  });

  checkObject('effects.trace', effects.trace, true);
  const changes: CommitChanges = { emits, timers, spawns };
  if (effects.trace !== undefined) changes.trace = effects.trace;
  return changes;
}
