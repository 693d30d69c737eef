/**
 * Argument checks of the execution store, shared by every backend so that they reject exactly
 * the same inputs with exactly the same messages, before anything is written.
 * @internal
 */
import { checkId, checkInteger, checkObject, checkOptions, checkTime } from '../validate.js';
import { DEFAULT_TRACE_MAX, type EmitChange, type Execution, type SpawnChange, type TimerChange } from './contract.js';

/** `CommitChanges` after validation: every list present (possibly empty). */
export interface CheckedChanges {
  emits: readonly EmitChange[];
  processedEventId: string | undefined;
  timers: readonly TimerChange[];
  spawns: readonly SpawnChange[];
  trace: Record<string, unknown> | undefined;
}

const NONE: readonly never[] = Object.freeze([]);

/** An execution: an object with a non-empty string `id` and a non-negative integer `version`. */
export function checkExecution(value: unknown): asserts value is Execution {
  checkObject('exe', value);
  checkId('exe.id', value.id);
  checkInteger('exe.version', value.version, 0, Number.MAX_SAFE_INTEGER);
}

/** An optional read limit: a positive integer. */
export function checkLimit(limit: unknown): void {
  if (limit !== undefined) checkInteger('limit', limit, 1, Number.MAX_SAFE_INTEGER);
}

/** An outbox or spawn seq: a positive integer. */
export function checkSeq(seq: unknown): asserts seq is number {
  checkInteger('seq', seq, 1, Number.MAX_SAFE_INTEGER);
}

/** The store options; returns the trace ring size. */
export function checkStoreOptions(options: unknown, extra: readonly string[] = []): number {
  checkOptions('options', options, ['traceMax', ...extra], true);
  const traceMax = (options as { traceMax?: unknown } | undefined)?.traceMax ?? DEFAULT_TRACE_MAX;
  checkInteger('options.traceMax', traceMax, 0, Number.MAX_SAFE_INTEGER);
  return traceMax;
}

function checkList(name: string, value: unknown): readonly unknown[] {
  if (value === undefined) return NONE;
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array, got ${value === null ? 'null' : typeof value}`);
  // A dense copy: forEach passes over a hole (an index never set), which a store would then meet
  // midway through its writes (InMemoryStore had written the execution); here it is undefined,
  // and refused as an element.
  return Array.from(value as unknown[]);
}

/** Validates the second argument of `commit`, element by element, naming the offending path. */
export function checkChanges(changes: unknown): CheckedChanges {
  checkObject('changes', changes, true);
  if (changes === undefined) return { emits: NONE, processedEventId: undefined, timers: NONE, spawns: NONE, trace: undefined };

  const emits = checkList('changes.emits', changes.emits);
  emits.forEach((emit, i) => {
    checkObject(`changes.emits[${i}]`, emit);
    if (emit.targetId !== null) checkId(`changes.emits[${i}].targetId`, emit.targetId);
  });

  const processedEventId = changes.processedEventId;
  if (processedEventId !== undefined) checkId('changes.processedEventId', processedEventId);

  const timers = checkList('changes.timers', changes.timers);
  timers.forEach((timer, i) => {
    const name = `changes.timers[${i}]`;
    checkObject(name, timer);
    if (typeof timer.action !== 'string') throw new TypeError(`${name}.action must be 'schedule' or 'cancel', got ${typeof timer.action}`);
    if (timer.action !== 'schedule' && timer.action !== 'cancel') {
      throw new RangeError(`${name}.action must be 'schedule' or 'cancel', got ${JSON.stringify(timer.action)}`);
    }
    checkId(`${name}.path`, timer.path);
    if (timer.action === 'schedule') checkTime(`${name}.fireAt`, timer.fireAt);
  });

  const spawns = checkList('changes.spawns', changes.spawns);
  spawns.forEach((spawn, i) => {
    checkObject(`changes.spawns[${i}]`, spawn);
    checkId(`changes.spawns[${i}].childId`, spawn.childId);
    checkId(`changes.spawns[${i}].rootPath`, spawn.rootPath);
    checkObject(`changes.spawns[${i}].context`, spawn.context);
  });

  checkObject('changes.trace', changes.trace, true);

  return {
    emits: emits as EmitChange[],
    processedEventId,
    timers: timers as TimerChange[],
    spawns: spawns as SpawnChange[],
    trace: changes.trace,
  };
}

/**
 * The `index` a trace step gets: the entry's own when defined (the seed honours an explicit
 * index), else the next step number. `undefined` counts as absent because JSON cannot keep it,
 * so the SQL and in-memory stores agree.
 */
export function stepIndex(entry: Record<string, unknown>, next: number): unknown {
  return entry.index === undefined ? next : entry.index;
}
