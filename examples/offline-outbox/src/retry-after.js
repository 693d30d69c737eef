// How long a server asked us to wait: the `Retry-After` header of a 503 or a 429 (RFC 9110),
// either a number of seconds or an HTTP date. Kept apart from the outbox (no imports), so it can
// be tested on its own.

/** The longest wait taken from a header: a wrong clock or a typo must not stall the outbox for days. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * `value` (the header, or null) as milliseconds from `now`, within 0 and MAX_RETRY_AFTER_MS; null
 * when there is no header or it is neither seconds nor a date (then the caller backs off on its own).
 */
export function retryAfterMs(value, now = Date.now()) {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  let ms;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // Every HTTP-date form starts with the day's name; Date.parse alone would take "1.5" as a date.
    const at = /^[A-Za-z]{3}\b/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) return null;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
