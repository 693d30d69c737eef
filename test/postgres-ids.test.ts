/** How ids are stored on PostgreSQL: escaped where text cannot hold them, and limited where they are index keys. */
import { describe, expect, it } from 'vitest';
import { checkIndexedId, decodeId, encodeId, PG_MAX_ID_BYTES } from '../src/postgres/ids.js';

describe('PostgreSQL ids', () => {
  it('escapes NUL and backslash, and only ids that hold one', () => {
    for (const id of ['plain', 'a\u0000b', 'back\\slash', '\\0', '\u0000\\\u0000', 'é😀']) expect(decodeId(encodeId(id))).toBe(id);
    expect(encodeId('plain/id:7')).toBe('plain/id:7');
  });

  it('counts an indexed id in UTF-8 bytes as stored: 1024 pass, 1025 are refused naming the argument', () => {
    expect(PG_MAX_ID_BYTES).toBe(1024);
    const fits = ['x'.repeat(1024), 'é'.repeat(512), '😀'.repeat(256), '€'.repeat(341) + 'x', '\u0000'.repeat(512), 'x'.repeat(1022) + '\\'];
    for (const id of fits) expect(() => checkIndexedId('groupId', id)).not.toThrow();
    const over = ['x'.repeat(1025), 'é'.repeat(512) + 'x', '😀'.repeat(256) + 'x', '€'.repeat(342), '\u0000'.repeat(513), 'x'.repeat(1023) + '\\', '\ud800'.repeat(342)];
    for (const id of over) expect(() => checkIndexedId('groupId', id)).toThrow(RangeError);
    expect(() => checkIndexedId('options.key', 'x'.repeat(1 << 20))).toThrow('options.key must be at most 1024 bytes of UTF-8 on PostgreSQL (it is part of an index key there), got 1048576 bytes');
  });
});
