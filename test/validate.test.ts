/**
 * checkJson (the in-memory transport's event check) must refuse exactly what toJson (the SQL
 * backends' encoding) refuses, with the same error, for any value: the fast walk may only vouch
 * for values toJson accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJson, toJson } from '../src/validate.js';

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
