/**
 * Argument checks shared by every backend, so the in-memory and SQL backends reject exactly
 * the same inputs with exactly the same errors. Each throws before anything is written.
 * @internal
 */

function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/** A high surrogate not followed by a low one, or a low one without a high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A non-empty string of well-formed Unicode (group ids, worker ids, execution ids, event ids,
 * keys, paths). SQLite and PostgreSQL store text as UTF-8, where a lone UTF-16 surrogate becomes
 * U+FFFD: two different ids would become one (two groups sharing one lease) and come back
 * changed, so such an id is refused on every backend alike.
 */
export function checkId(name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a non-empty string, got ${describe(value)}`);
  if (value.length === 0) throw new RangeError(`${name} must be a non-empty string, got ""`);
  const lone = LONE_SURROGATE.exec(value);
  if (lone) throw new RangeError(`${name} must be well-formed Unicode: it has a lone surrogate (U+${lone[0].charCodeAt(0).toString(16).toUpperCase()}) at index ${lone.index}`);
}

/** Whether `value` passes {@link checkId}. */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && !LONE_SURROGATE.test(value);
}

/** Longest reason kept with a failed or dead message: an error message, not a log. */
export const MAX_REASON = 1000;

/**
 * What a thrown value says, as a reason a transport takes: its message (or the value as text),
 * lone surrogates replaced, cut at {@link MAX_REASON}; undefined when it says nothing.
 */
export function reasonFrom(thrown: unknown): string | undefined {
  let text: string;
  try {
    text = thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return undefined; // a value with no text (a null-prototype object, a throwing toString)
  }
  const cut = text.length > MAX_REASON ? text.slice(0, MAX_REASON - 1) + '…' : text;
  const whole = cut.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
  return whole === '' ? undefined : whole;
}

/** An integer in [min, max] (priorities, attempts). */
export function checkInteger(name: string, value: unknown, min: number, max: number): asserts value is number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be an integer, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
}

/** One of `choices`, or `fallback` when undefined: TypeError for a non-string, RangeError for another string. */
export function checkChoice<C extends string>(name: string, value: unknown, choices: readonly C[], fallback: C): C {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new TypeError(`${name} must be one of ${choices.join(', ')}, got ${describe(value)}`);
  if (!(choices as readonly string[]).includes(value)) throw new RangeError(`${name} must be one of ${choices.join(', ')}, got ${describe(value)}`);
  return value as C;
}

/** A finite number of milliseconds; `> 0` when `positive`, else `≥ 0`. */
export function checkDuration(name: string, value: unknown, positive: boolean): asserts value is number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number of milliseconds, got ${describe(value)}`);
  if (!Number.isFinite(value) || (positive ? value <= 0 : value < 0)) {
    throw new RangeError(`${name} must be a finite number ${positive ? '> 0' : '≥ 0'}, got ${describe(value)}`);
  }
}

/** A finite number (absolute times such as a timer's `fireAt`). */
export function checkTime(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, got ${describe(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${describe(value)}`);
}

/** A plain object (an options bag or a record), or undefined when `optional`. */
export function checkObject(name: string, value: unknown, optional = false): asserts value is Record<string, unknown> {
  if (value === undefined && optional) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object, got ${describe(value)}`);
  }
}

/**
 * An options object (or undefined, when `optional`) whose own keys are all in `known`: a
 * misspelt option (`{ visibilty: 1000 }`) is a TypeError naming it and the nearest known key,
 * instead of an option silently left at its default.
 */
export function checkOptions(name: string, value: unknown, known: readonly string[], optional = false): void {
  checkObject(name, value, optional);
  if (value === undefined) return;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const nearest = nearestKey(key, known);
    const hint = nearest === undefined ? `; it takes ${known.map((k) => JSON.stringify(k)).join(', ')}` : `; did you mean ${JSON.stringify(nearest)}?`;
    throw new TypeError(`${name} has no option ${JSON.stringify(key)}${hint}`);
  }
}

/** The key of `known` closest to `key` by edit distance (case aside), if close enough to be a slip. */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** Reads the clock and checks it returned a usable time. */
export function readClock(clock: () => number): number {
  const now = clock();
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new RangeError(`the clock returned ${describe(now)}; it must return a finite number of milliseconds`);
  }
  return now;
}

/**
 * Refuses, as {@link toJson} refuses it and with the same error, a value JSON would change, but
 * without encoding it: a walk that vouches for plain data (strings, finite numbers, booleans,
 * null, arrays and plain objects of them) and hands anything else — toJSON, a collection, a
 * cycle, a nesting deeper than 64 — to toJson itself, which throws or accepts it. For the
 * in-memory transport, which keeps the very object: encoding a 10 KB event to check it cost
 * more than the publish. With `maxBytes`, also refuses a value whose JSON is larger, as
 * {@link checkJsonBytes} does.
 * @throws TypeError as {@link toJson}; RangeError for a value over `maxBytes`.
 */
export function checkJson(name: string, value: unknown, maxBytes = Infinity): void {
  const bound = plainJsonBound(value, false, []);
  // The bound vouches for the size too: only an event near the limit is encoded to be measured.
  if (bound >= 0 && bound <= maxBytes) return;
  checkJsonBytes(name, toJson(name, value), maxBytes);
}

/**
 * An upper bound on the UTF-8 bytes of `value`'s JSON when the walk vouches for it as plain
 * data, else -1. A string is counted at 6 bytes a code unit (`\u0000`), a number at 24.
 */
function plainJsonBound(value: unknown, isProperty: boolean, parents: object[]): number {
  switch (typeof value) {
    case 'string':
      return 2 + 6 * value.length;
    case 'boolean':
      return 5;
    case 'number':
      return Number.isFinite(value) ? 24 : -1;
    case 'undefined':
      return isProperty ? 0 : -1; // dropped from an object; refused at the top or in an array
    case 'object': {
      if (value === null) return 4;
      if (parents.length >= 64 || parents.includes(value)) return -1;
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return -1;
      parents.push(value);
      let bound = 2;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length && bound >= 0; i++) {
          const item = plainJsonBound(value[i], false, parents);
          bound = item < 0 ? -1 : bound + item + 1;
        }
      } else {
        const proto = Object.getPrototypeOf(value) as unknown;
        if (proto !== Object.prototype && proto !== null) bound = -1;
        else {
          for (const key of Object.keys(value)) {
            const item = plainJsonBound((value as Record<string, unknown>)[key], true, parents);
            if (item < 0) {
              bound = -1;
              break;
            }
            bound += 4 + 6 * key.length + item;
          }
        }
      }
      parents.pop();
      return bound;
    }
    default:
      return -1;
  }
}

/**
 * Refuses an event whose JSON (`json`, as {@link toJson} made it) is more than `maxBytes` bytes
 * of UTF-8, counted without encoding it.
 * @throws RangeError naming `name`, its size and the limit.
 */
export function checkJsonBytes(name: string, json: string, maxBytes: number): void {
  if (json.length * 3 <= maxBytes) return; // a UTF-16 code unit is at most 3 bytes of UTF-8
  let bytes = 0;
  for (let i = 0; i < json.length; i++) {
    const unit = json.charCodeAt(i);
    // A surrogate pair is 4 bytes: 2 for each half. JSON.stringify escapes a lone surrogate.
    bytes += unit < 0x80 ? 1 : unit < 0x800 || (unit >= 0xd800 && unit < 0xe000) ? 2 : 3;
  }
  if (bytes > maxBytes) {
    throw new RangeError(`${name} is ${bytes} bytes of JSON, over the queue's maxEventBytes (${maxBytes}): publish a reference to a large payload instead`);
  }
}

/**
 * Encodes `value` as JSON, refusing anything JSON would silently change: functions, symbols,
 * `undefined` at the top level or inside arrays, NaN and ±Infinity, Map/Set and other
 * collections (they stringify to `{}`), cycles and BigInts. Objects with `toJSON` (Date) are
 * stored as what `toJSON` returns, as JSON.stringify does. Properties whose value is
 * `undefined` are dropped, as JSON.stringify does.
 *
 * @throws TypeError naming `name` and the path of the offending value.
 */
export function toJson(name: string, value: unknown): string {
  // The replacer runs for every value in the tree (after toJSON), so every check lives here.
  function replacer(this: unknown, key: string, v: unknown): unknown {
    const where = key === '' ? name : `${name} at key ${JSON.stringify(key)}`;
    switch (typeof v) {
      case 'function':
      case 'symbol':
        throw new TypeError(`${where} is a ${typeof v}, which JSON cannot store`);
      case 'bigint':
        throw new TypeError(`${where} is a BigInt, which JSON cannot store; convert it to a string`);
      case 'number':
        if (!Number.isFinite(v)) throw new TypeError(`${where} is ${String(v)}, which JSON cannot store`);
        return v;
      case 'undefined':
        if (key === '' || Array.isArray(this)) throw new TypeError(`${where} is undefined, which JSON cannot store`);
        return v;
      case 'object':
        if (v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
          throw new TypeError(`${where} is a ${Object.prototype.toString.call(v).slice(8, -1)}, which JSON would store as {}; convert it to a plain object or array`);
        }
        return v;
      default:
        return v;
    }
  }
  try {
    return JSON.stringify(value, replacer) as string;
  } catch (error) {
    if (error instanceof TypeError && error.message.startsWith(name)) throw error;
    // Native failures: a cycle ("Converting circular structure") or a throwing toJSON.
    throw new TypeError(`${name} cannot be stored as JSON: ${(error as Error).message}`, { cause: error });
  }
}
