/**
 * PostgreSQL `text` cannot hold U+0000, which a group id, key or worker id may contain (the
 * contract allows any non-empty string). Ids are stored escaped: backslash doubled, NUL as
 * `\0`. An id with neither (nearly all) is stored as it is, so operators read them plainly.
 * @internal
 */
export function encodeId(id: string): string {
  if (!id.includes('\\') && !id.includes('\0')) return id;
  return id.replaceAll('\\', '\\\\').replaceAll('\0', '\\0');
}

/** The inverse of {@link encodeId}. @internal */
export function decodeId(stored: string): string {
  if (!stored.includes('\\')) return stored;
  return stored.replace(/\\([\\0])/g, (_, c: string) => (c === '0' ? '\0' : '\\'));
}

/**
 * The longest id, in bytes of UTF-8 as stored (after the escaping above), that the PostgreSQL
 * backends accept where an id is part of an index key: group ids and idempotency keys (the
 * transport), execution ids, processed event ids and timer paths (the store). A btree entry must
 * fit in a third of a page (about 2.7 kB), and a key and its group share one entry; longer ids
 * are refused up front with a RangeError, never by the server halfway through a call.
 */
export const PG_MAX_ID_BYTES = 1024;

/** @throws RangeError naming `name` when `id` is longer than {@link PG_MAX_ID_BYTES} as stored. @internal */
export function checkIndexedId(name: string, id: string): void {
  // Every UTF-16 unit takes at most 3 bytes, escaped or not: short ids need no counting.
  if (id.length * 3 <= PG_MAX_ID_BYTES) return;
  const stored = encodeId(id);
  let bytes = 0;
  for (let i = 0; i < stored.length; i++) {
    const unit = stored.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit < 0xdc00 && (stored.charCodeAt(i + 1) & 0xfc00) === 0xdc00) (bytes += 4), i++;
    else bytes += 3; // the rest of the BMP (a lone surrogate never gets here: checkId refuses it)
  }
  if (bytes > PG_MAX_ID_BYTES) {
    throw new RangeError(`${name} must be at most ${PG_MAX_ID_BYTES} bytes of UTF-8 on PostgreSQL (it is part of an index key there), got ${bytes} bytes`);
  }
}
