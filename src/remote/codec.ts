/**
 * Call arguments as JSON that carries what plain JSON would silently change: `undefined`,
 * non-finite numbers, BigInts, functions, Maps, Sets, Dates and cycles are tagged on the way out
 * and rebuilt on the way in. The object then runs the backends' own argument checks on what the
 * caller really passed, so a remote call rejects exactly the inputs a local one does, with the
 * same errors (an event with NaN is a TypeError, not a silently stored `null`).
 *
 * Only shape is preserved, never behaviour: a function arrives as a function that throws, a
 * class instance as a plain object. Results travel as plain JSON: they come from the SQL
 * backends, which hold JSON only.
 * @internal
 */

const TAG = '$lh';
type Tagged = { [TAG]: string; v?: unknown };

/** Encodes `value` as a JSON-compatible tree (see the module comment). */
export function encodeValue(value: unknown): unknown {
  const ancestors: object[] = [];
  const walk = (v: unknown): unknown => {
    switch (typeof v) {
      case 'undefined':
        return { [TAG]: 'undefined' };
      case 'number':
        return Number.isFinite(v) ? v : { [TAG]: 'number', v: String(v) };
      case 'bigint':
        return { [TAG]: 'bigint', v: v.toString() };
      case 'function':
        return { [TAG]: 'function' };
      case 'symbol':
        return { [TAG]: 'symbol', v: v.description ?? '' };
      case 'object': {
        if (v === null) return null;
        const depth = ancestors.indexOf(v);
        if (depth !== -1) return { [TAG]: 'cycle', v: ancestors.length - depth };
        ancestors.push(v);
        try {
          if (Array.isArray(v)) return v.map(walk);
          if (v instanceof Map) return { [TAG]: 'map', v: [...v].map(walk) };
          if (v instanceof Set) return { [TAG]: 'set', v: [...v].map(walk) };
          if (v instanceof Date) return { [TAG]: 'date', v: v.getTime() };
          const out: Record<string, unknown> = {};
          for (const [key, item] of Object.entries(v)) out[key] = walk(item);
          return TAG in out ? { [TAG]: 'object', v: out } : out;
        } finally {
          ancestors.pop();
        }
      }
      default:
        return v;
    }
  };
  return walk(value);
}

/** Rebuilds what {@link encodeValue} encoded. */
export function decodeValue(encoded: unknown): unknown {
  const ancestors: unknown[] = [];
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return into([] as unknown[], (out) => v.forEach((item, i) => (out[i] = walk(item))));
    const tagged = v as Tagged;
    switch (TAG in tagged ? tagged[TAG] : undefined) {
      case undefined:
        return into({} as Record<string, unknown>, (out) => {
          for (const [key, item] of Object.entries(v)) out[key] = walk(item);
        });
      case 'object':
        return into({} as Record<string, unknown>, (out) => {
          for (const [key, item] of Object.entries(tagged.v as object)) out[key] = walk(item);
        });
      case 'undefined':
        return undefined;
      case 'number':
        return Number(tagged.v);
      case 'bigint':
        return BigInt(tagged.v as string);
      case 'function':
        return () => {
          throw new TypeError('a function passed to a remote leasehold call cannot be called');
        };
      case 'symbol':
        return Symbol(tagged.v as string);
      case 'cycle':
        return ancestors[ancestors.length - (tagged.v as number)];
      case 'map':
        return into(new Map(), (out) => (tagged.v as unknown[]).forEach((item) => out.set(...(walk(item) as [unknown, unknown]))));
      case 'set':
        return into(new Set(), (out) => (tagged.v as unknown[]).forEach((item) => out.add(walk(item))));
      case 'date':
        return new Date(tagged.v as number);
      default:
        throw new TypeError(`unknown encoded value tag ${JSON.stringify(tagged[TAG])}`);
    }
  };
  /** Registers `out` as an ancestor while its children are rebuilt, so a cycle can point at it. */
  const into = <T>(out: T, fill: (out: T) => void): T => {
    ancestors.push(out);
    try {
      fill(out);
    } finally {
      ancestors.pop();
    }
    return out;
  };
  return walk(encoded);
}
