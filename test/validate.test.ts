/**
 * checkJson (the in-memory transport's event check) must refuse exactly what toJson (the SQL
 * backends' encoding) refuses, with the same error, for any value: the fast walk may only vouch
 * for values toJson accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJson, checkJsonBytes, toJson } from '../src/validate.js';

const outcome = (check: () => unknown) => {
  try {
    check();
    return 'accepted';
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
};

describe('checkJson', () => {
  it('refuses what toJson refuses, with the same error, for any value', () => {
    const values = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    });
    fc.assert(
      fc.property(values, (value) => {
        expect(outcome(() => checkJson('event', value))).toBe(outcome(() => toJson('event', value)));
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('refuses the values JSON would change, deep inside too', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = { next: deep };
    for (const value of [undefined, () => 1, Symbol('s'), 1n, Number.NaN, { a: [1, Infinity] }, { m: new Map() }, [1, undefined], cyclic, { list: [new Set()] }]) {
      expect(() => checkJson('event', value)).toThrow(TypeError);
      expect(outcome(() => checkJson('event', value))).toBe(outcome(() => toJson('event', value)));
    }
    // Accepted as toJson accepts them: deep nesting, toJSON, a dropped undefined property, a class instance.
    class Point {
      constructor(readonly x: number) {}
    }
    for (const value of [deep, { at: new Date(0) }, { gone: undefined, kept: 1 }, new Point(1), Object.create(null)]) expect(() => checkJson('event', value)).not.toThrow();
  });
});

describe('maxEventBytes: checkJson and checkJsonBytes', () => {
  /** The verdict a limit of `max` bytes should give `value`, from its real UTF-8 encoding. */
  const expected = (value: unknown, max: number) => {
    const json = outcome(() => toJson('event', value));
    if (json !== 'accepted') return json;
    const bytes = Buffer.byteLength(toJson('event', value));
    return bytes <= max ? 'accepted' : `RangeError: event is ${bytes} bytes of JSON, over the queue's maxEventBytes (${max}): publish a reference to a large payload instead`;
  };

  it('measures exactly the UTF-8 bytes of the JSON, for any value and limit, walked or encoded', () => {
    const values = fc.anything({ withDate: true, withNullPrototype: true, withUnicodeString: true, withBigInt: true, withMap: true });
    fc.assert(
      fc.property(values, fc.integer({ min: 1, max: 400 }), (value, max) => {
        expect(outcome(() => checkJson('event', value, max))).toBe(expected(value, max));
        const json = outcome(() => toJson('event', value)) === 'accepted' ? toJson('event', value) : null;
        if (json !== null) expect(outcome(() => checkJsonBytes('event', json, max))).toBe(expected(value, max));
      }),
      { numRuns: 3000, seed: 11 },
    );
  });

  it('counts escapes, multi-byte characters and surrogate pairs as UTF-8 does', () => {
    for (const text of ['\u0000\u001f"\\', 'é'.repeat(30), '€'.repeat(30), '😀'.repeat(30), '\ud800 lone', 'a\u2028b']) {
      const value = { text };
      const bytes = Buffer.byteLength(JSON.stringify(value));
      expect(() => checkJson('event', value, bytes)).not.toThrow();
      expect(() => checkJson('event', value, bytes - 1)).toThrow(`event is ${bytes} bytes`);
      expect(() => checkJsonBytes('event', JSON.stringify(value), bytes - 1)).toThrow(`event is ${bytes} bytes`);
    }
  });
});
