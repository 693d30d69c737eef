/** How the inspector's views put times and events into words. */

/** A duration or a relative time in seconds with one decimal: `4.1 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A short label for an event: its `label` or `type` field if it has one, else its JSON cut to
 * 40 characters. Always plain text, shown with `textContent`.
 */
export function eventLabel(event: unknown): string {
  if (event && typeof event === 'object') {
    const { label, type } = event as { label?: unknown; type?: unknown };
    if (typeof label === 'string') return label;
    if (typeof type === 'string') return type;
  }
  const json = JSON.stringify(event) ?? String(event);
  return json.length > 40 ? `${json.slice(0, 39)}…` : json;
}
