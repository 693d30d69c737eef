/**
 * Encoding for the SQL store: every value a write needs, as JSON, made before the transaction
 * opens so a value JSON cannot carry is refused with nothing written. The browser client uses
 * the same functions to name a value that cannot even be sent to its worker.
 * @internal
 */
import { toJson } from '../validate.js';
import type { CheckedChanges } from './checks.js';
import type { Execution } from './contract.js';

/** Everything a commit writes, encoded before the transaction opens so a bad value writes nothing. */
export interface EncodedCommit {
  executionId: string;
  body: string;
  emits: { targetId: string | null; event: string }[];
  processedEventId: string | undefined;
  timers: CheckedChanges['timers'];
  spawns: { childId: string; rootPath: string; context: string }[];
  trace: EncodedStep | undefined;
}

/** A trace entry as JSON; `explicit` when it carries its own index (see `stepIndex` in checks.ts). */
export interface EncodedStep {
  json: string;
  explicit: boolean;
}

/** Encodes a commit for storage; throws what `commit` would for a value JSON cannot carry. */
export function encodeCommit(exe: Execution, changes: CheckedChanges): EncodedCommit {
  const { version: _version, ...body } = exe;
  return {
    executionId: exe.id,
    body: toJson('exe', body),
    emits: changes.emits.map((e, i) => ({ targetId: e.targetId, event: toJson(`changes.emits[${i}].event`, e.event) })),
    processedEventId: changes.processedEventId,
    timers: changes.timers,
    spawns: changes.spawns.map((s, i) => ({ childId: s.childId, rootPath: s.rootPath, context: toJson(`changes.spawns[${i}].context`, s.context) })),
    trace: changes.trace === undefined ? undefined : encodeStep('changes.trace', changes.trace),
  };
}

/** Encodes a trace step; throws what `appendTrace` would for a value JSON cannot carry. */
export function encodeStep(name: string, entry: Record<string, unknown>): EncodedStep {
  const json = toJson(name, entry);
  // An object whose toJSON returns something else (a Date) has no place for an index.
  if (!json.startsWith('{')) throw new TypeError(`${name} must be stored as a JSON object, but it encodes as ${json.slice(0, 40)}`);
  return { json, explicit: entry.index !== undefined };
}
