/**
 * How the inspector's views put times, events, workers and states into words. Pure functions of
 * the snapshot, so a unit test pins each word without a page.
 */
import type { GroupSnapshot, MessageSnapshot } from '../transport/contract.js';

/** A duration or a relative time in seconds with one decimal: `4.1 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * What a view writes for a message's event: a line of plain text (shown with `textContent`, never
 * parsed as HTML). Set on `<leasehold-inspector>` as `preview`, or in the views' options.
 */
export type EventPreview = (event: unknown) => string;

/** Longest preview the default writes: about three lines of a message card. */
export const PREVIEW_MAX = 60;
/** Longest text a view keeps from an app's preview before it shortens it (the card's tooltip has it whole). */
const SHOWN_MAX = 120;
/** Longest full text a tooltip carries: an event of megabytes is not copied into an attribute. */
const TOOLTIP_MAX = 1_000;

/**
 * Fields that say what an event does, most telling first: an operator reads them before the ids
 * (a uuid first field must not hide the operation).
 */
const TELLING = ['type', 'op', 'operation', 'action', 'kind', 'event', 'method', 'command', 'status', 'name', 'label', 'title', 'text', 'message', 'body', 'note'];
const ID_KEY = /(?:^|[_-])ids?$|Ids?$|^(?:uuid|key|ref)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A long run of hex or base-36 digits with a digit in it: a random or time-based id. */
const RANDOM = /^(?=[0-9a-z]*\d)[0-9a-z]{12,}$/i;

/**
 * The default {@link EventPreview}. A small event is shown whole, as compact JSON (`{"op": "save",
 * "n": 3}`, a space between members to wrap at) when that is at most {@link PREVIEW_MAX} characters; a larger object as its fields,
 * `name: value` with ` · ` between, the telling ones first (`type`, `op`, `action`, `name`,
 * `label`, `text`…), then the other plain values, then ids and nested values (`{…}`, `[3]`),
 * long strings and the whole line shortened at a word's end with `…`. A string is shown as it
 * is. Never throws: a value JSON cannot write (a cycle, a BigInt) is shown by `String()`.
 */
export function defaultPreview(event: unknown): string {
  if (typeof event === 'string') return fit(event, PREVIEW_MAX);
  const json = spacedJson(event);
  if (json.length <= PREVIEW_MAX) return json;
  if (!event || typeof event !== 'object' || Array.isArray(event)) return fit(json, PREVIEW_MAX);
  const rank = ([name, value]: [string, unknown]): number => {
    const telling = TELLING.indexOf(name.toLowerCase());
    if (telling >= 0 && !isId(name, value)) return telling;
    if (isId(name, value)) return TELLING.length + 2;
    return value !== null && typeof value === 'object' ? TELLING.length + 1 : TELLING.length;
  };
  // A stable sort: fields of one rank keep the event's own order.
  const fields = Object.entries(event as Record<string, unknown>)
    .map((field, at) => ({ field, at, rank: rank(field) }))
    .sort((a, b) => a.rank - b.rank || a.at - b.at)
    .map(({ field: [name, value] }) => `${name}: ${fieldValue(value)}`);
  let line = '';
  for (const field of fields) {
    const next = line ? `${line} · ${field}` : field;
    if (next.length > PREVIEW_MAX - 2) return line ? `${line} …` : fit(field, PREVIEW_MAX);
    line = next;
  }
  return line;
}

/** Whether a field is an identifier: named like one, or holding a uuid or a long random token. */
function isId(name: string, value: unknown): boolean {
  if (ID_KEY.test(name)) return true;
  return typeof value === 'string' && (UUID.test(value) || RANDOM.test(value));
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return UUID.test(value) ? `${value.slice(0, 8)}…` : fit(value, 24);
  if (Array.isArray(value)) return `[${value.length}]`;
  if (value !== null && typeof value === 'object') return '{…}';
  return toJson(value);
}

/**
 * Compact JSON with a space after each `,` and `:` between members, so a card can wrap it
 * between members (`{"op": "import", "row": 1}`); strings are JSON's own, untouched.
 */
function spacedJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, 1);
  } catch {
    return String(value);
  }
  // Indented JSON has line breaks only between tokens (a string's own are escaped as \n).
  return text === undefined ? String(value) : text.replace(/([{[])\n\s*/g, '$1').replace(/\n\s*([}\]])/g, '$1').replace(/\n\s*/g, ' ');
}

function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `text` at most `max` characters: cut at the last word's end that fits (a space, `,`, `·`…) and
 * ended with `…`; cut inside a word only when that word alone is longer than the room left.
 */
export function fit(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const end = Math.max(room.lastIndexOf(' '), room.lastIndexOf(','), room.lastIndexOf('·'));
  return `${(end >= max / 2 ? room.slice(0, end) : room).trimEnd()}…`;
}

/**
 * What a view writes for `event` with the app's `preview` (or the default): the text, shortened
 * at a word's end when it is long, and the full text for the tooltip. A preview that throws
 * shows why, so a bug in it is seen where it happens and the rest of the view still draws.
 */
export function previewText(preview: EventPreview, event: unknown): { text: string; full: string } {
  let full: string;
  try {
    full = String(preview(event));
  } catch (error) {
    full = `(preview failed: ${error instanceof Error ? error.message : String(error)})`;
  }
  if (preview !== defaultPreview && full.length <= SHOWN_MAX) return { text: full, full };
  // The tooltip carries the event itself, not the preview of it, when the preview shortened it.
  const whole = preview === defaultPreview ? (typeof event === 'string' ? event : toJson(event)) : full;
  return { text: fit(full, SHOWN_MAX), full: fit(whole, TOOLTIP_MAX) };
}

/**
 * `preview` checked: a function, or null/undefined for the default.
 * @throws TypeError naming `name` for anything else.
 */
export function checkPreview(name: string, preview: unknown): EventPreview {
  if (preview === undefined || preview === null) return defaultPreview;
  if (typeof preview !== 'function') throw new TypeError(`${name} must be a function (event) => string, or null for the default; got ${preview === null ? 'null' : typeof preview}`);
  return preview as EventPreview;
}

const WORKER_UUID = /^(.*?[-_.:/@])?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const WORKER_TOKEN = /^(.*?[-_.:/@])([0-9a-z]+(?:-[0-9a-z]+)*)$/i;

/**
 * A worker id short enough for a lane or a card: a uuid keeps its first 4 characters after a
 * prefix (`consume-3f2a9c1e-…` → `consume-3f2a`; alone, its first 8), a long random tail
 * likewise; an id up to 20 characters is shown as it is, a longer one cut at 19 with `…`. The
 * same id always gives the same label; the views put the full id in a tooltip, since two
 * workers may share one (one pair in 65,536 for uuids with the same prefix).
 */
export function workerLabel(id: string): string {
  const uuid = WORKER_UUID.exec(id);
  if (uuid) return uuid[1] ? `${uuid[1]}${uuid[2]!.slice(0, 4)}` : uuid[2]!.slice(0, 8);
  if (id.length <= 20) return id;
  const token = WORKER_TOKEN.exec(id);
  if (token && token[2]!.length >= 12 && /\d/.test(token[2]!) && token[1]!.length <= 15) return `${token[1]}${token[2]!.slice(0, 4)}`;
  return `${id.slice(0, 19)}…`;
}

/**
 * A group's state in the words of `stats()`, so a group the view calls `blocked` is one
 * `stats().blocked` counts, and so on: `ready` (a claim could take its head now: free, or its
 * lease, park or delay ran out), `leased` (its head is under a live lease), `waiting` (parked,
 * delayed, in a coalescing window or paused), `blocked` (its head waits for messages it names in
 * `after`, paused or not), `held` (at a dead letter). Counting the words of a snapshot's groups
 * gives `stats()`'s counts of the same instant.
 */
export type GroupWord = 'ready' | 'leased' | 'waiting' | 'blocked' | 'held';

/** Why a `waiting` group waits, in one word. */
export type WaitReason = 'parked' | 'delayed' | 'debouncing' | 'paused';

/** A group's {@link GroupWord} and, for `waiting`, why. */
export function groupState(group: GroupSnapshot): { word: GroupWord; why: WaitReason | null } {
  if (group.heldBy !== null) return { word: 'held', why: null };
  const head: MessageSnapshot | undefined = group.messages[0];
  if (!head) return { word: 'ready', why: null };
  // A live lease reads before a pause or a block; a block before a pause (stats() counts a
  // paused group whose head waits on `after` as blocked).
  if (head.state === 'leased') return { word: 'leased', why: null };
  if (head.state === 'blocked' || head.waitsFor.length > 0) return { word: 'blocked', why: null };
  if (head.state === 'paused') return { word: 'waiting', why: 'paused' };
  if (head.state === 'parked') return { word: 'waiting', why: 'parked' };
  if (head.state === 'delayed') return { word: 'waiting', why: head.window === null ? 'delayed' : 'debouncing' };
  return { word: 'ready', why: null };
}
