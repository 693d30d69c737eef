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
