/**
 * A five-field cron parser and "next slot" finder, with IANA time zones through `Intl`.
 *
 * Why not a library: croner, the well-kept one with time zones and DST rules, weighs 9.5 kB
 * gzipped on its own (one class, nothing to tree-shake) — more than the whole workflow entry —
 * and cron-schedule (2.6 kB) has no time zones. This file is the subset schedules need: minute,
 * hour, day of month, month, day of week; `*`, lists, ranges, `*​/n` and `a-b/n` steps, month
 * and day names, `@hourly`-style nicknames. The tests check it against croner (a dev
 * dependency) on random expressions, zones and instants, DST changes included.
 *
 * DST, as croner and Vixie cron do it. A wall time that occurs twice (clocks go back) fires
 * once, at its first occurrence, when the expression names one fixed minute and hour
 * (`30 2 * * *`); an expression with `*`, a step, a list or a range in those fields fires on
 * both occurrences (`*​/15 * * * *` keeps firing every 15 real minutes). A wall time that does
 * not exist (clocks go forward) fires at the instant the clocks jump for a fixed-time
 * expression (`30 2 * * *` fires at 03:00 that day), and not at all otherwise.
 * @internal
 */

const DAY_MS = 86_400_000;
/** How far ahead `nextCron` looks before it gives up (an expression like `0 0 30 2 *` never fires). */
const HORIZON_DAYS = 366 * 9;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** A parsed expression: for each field, which values match. */
export interface CronExpression {
  minutes: boolean[];
  hours: boolean[];
  /** Index 1–31. */
  daysOfMonth: boolean[];
  /** Index 1–12. */
  months: boolean[];
  /** Index 0–6, Sunday 0. */
  daysOfWeek: boolean[];
  /** Day of month and day of week are both restricted (not `*`): a day matching either fires (Vixie). */
  eitherDay: boolean;
  /** One minute and one hour, no `*` or step: see the DST rule in this file's header. */
  fixedTime: boolean;
}

interface Field {
  name: string;
  min: number;
  max: number;
  names?: string[];
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: DAYS },
];

function value(field: Field, text: string, where: string): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d+$/.test(text)) throw new RangeError(`${where}: ${JSON.stringify(text)} is not a ${field.name}`);
  const n = Number(text);
  if (n < field.min || n > field.max) throw new RangeError(`${where}: ${field.name} ${n} is outside ${field.min}–${field.max}`);
  return n;
}

/** The values `text` (one field) matches, as a boolean array indexed by value. */
function parseField(field: Field, text: string, where: string): boolean[] {
  const set: boolean[] = new Array<boolean>(field.max + 1).fill(false);
  for (const item of text.split(',')) {
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined || range === '' || stepText === '') throw new RangeError(`${where}: ${JSON.stringify(item)} is not a ${field.name} item`);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [field.min, field.max === 7 ? 6 : field.max];
    else {
      const [a, b, more] = range!.split('-');
      if (more !== undefined || a === '' || b === '') throw new RangeError(`${where}: ${JSON.stringify(range)} is not a ${field.name} range`);
      from = value(field, a!, where);
      to = b === undefined ? from : value(field, b, where);
      if (to < from) throw new RangeError(`${where}: the range ${JSON.stringify(range)} runs backwards`);
      // `5/15` means "from 5 to the end" in some crons and nothing in others: refused, as croner does.
      if (stepText !== undefined && b === undefined) throw new RangeError(`${where}: write a step as */n or a-b/n, not ${JSON.stringify(item)}`);
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1 || step > field.max || !/^\d+$/.test(stepText ?? '1')) {
      throw new RangeError(`${where}: the step in ${JSON.stringify(item)} must be an integer from 1 to ${field.max}`);
    }
    for (let v = from; v <= to; v += step) set[v] = true;
  }
  return set;
}

/**
 * Parses a five-field cron expression (or a nickname such as `@daily`).
 * @throws RangeError naming `name` and what is wrong.
 */
export function parseCron(name: string, text: string): CronExpression {
  const trimmed = text.trim();
  const expanded = NICKNAMES[trimmed.toLowerCase()] ?? trimmed;
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) {
    throw new RangeError(`${name} must have five fields (minute hour day-of-month month day-of-week) or be a nickname such as @daily, got ${JSON.stringify(text)}`);
  }
  const [minutes, hours, daysOfMonth, months, weekdays] = parts.map((part, i) => parseField(FIELDS[i]!, part, `${name} (${FIELDS[i]!.name})`)) as [
    boolean[],
    boolean[],
    boolean[],
    boolean[],
    boolean[],
  ];
  if (weekdays[7]) weekdays[0] = true;
  const single = (part: string, set: boolean[]) => !/[*/]/.test(part) && set.filter(Boolean).length === 1;
  return {
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek: weekdays.slice(0, 7),
    eitherDay: parts[2] !== '*' && parts[4] !== '*',
    fixedTime: single(parts[0]!, minutes) && single(parts[1]!, hours),
  };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * Checks that `timeZone` is an IANA zone name this host knows (`UTC`, `Europe/Berlin`).
 * @throws RangeError naming `name`.
 */
export function checkTimeZone(name: string, timeZone: string): void {
  try {
    formatter(timeZone);
  } catch {
    throw new RangeError(`${name} must be an IANA time zone this runtime knows (such as "UTC" or "Europe/Berlin"), got ${JSON.stringify(timeZone)}`);
  }
}

/** The wall clock of `instant` in `timeZone`, as the UTC time with the same fields (whole seconds). */
function wallOf(instant: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return Date.UTC(fields.year!, fields.month! - 1, fields.day!, fields.hour! % 24, fields.minute!, fields.second!);
}

/** The zone's offset from UTC at `instant`, in ms. */
function offsetAt(instant: number, timeZone: string): number {
  const whole = Math.floor(instant / 1000) * 1000;
  return wallOf(whole, timeZone) - whole;
}

/** The first instant (to the second) after `from` at which the offset differs from the offset at `from`. */
function transitionAfter(from: number, to: number, timeZone: string): number {
  const before = offsetAt(from, timeZone);
  let [lo, hi] = [from, to];
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (offsetAt(mid, timeZone) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The instants at which wall time `wall` (UTC fields) fires in `timeZone`, earliest first:
 * one normally, two in a repeated hour (one for a fixed-time expression), none or the jump's
 * instant in a skipped hour (see the header).
 */
function instantsOf(wall: number, timeZone: string, fixedTime: boolean): number[] {
  const offsets = [offsetAt(wall - DAY_MS, timeZone), offsetAt(wall + DAY_MS, timeZone)];
  const found = [...new Set(offsets.map((o) => wall - o))].filter((t) => wallOf(t, timeZone) === wall).sort((a, b) => a - b);
  if (found.length > 0) return fixedTime ? found.slice(0, 1) : found;
  if (!fixedTime) return [];
  const [a, b] = [wall - offsets[1]!, wall - offsets[0]!].sort((x, y) => x - y) as [number, number];
  const jump = transitionAfter(a, b, timeZone);
  // Only when the jump happens on the slot's own date.
  return Math.floor(wallOf(jump, timeZone) / DAY_MS) === Math.floor(wall / DAY_MS) ? [jump] : [];
}

function dayMatches(cron: CronExpression, day: number): boolean {
  const date = new Date(day);
  if (!cron.months[date.getUTCMonth() + 1]) return false;
  const dom = cron.daysOfMonth[date.getUTCDate()]!;
  const dow = cron.daysOfWeek[date.getUTCDay()]!;
  return cron.eitherDay ? dom || dow : dom && dow;
}

/**
 * The first slot of `cron` in `timeZone` strictly after `after` (ms), or undefined if there is
 * none within nine years (an expression such as `0 0 30 2 *`).
 */
export function nextCron(cron: CronExpression, timeZone: string, after: number): number | undefined {
  const startDay = Math.floor(wallOf(after, timeZone) / DAY_MS) * DAY_MS - DAY_MS;
  for (let i = 0; i <= HORIZON_DAYS; i++) {
    const day = startDay + i * DAY_MS;
    if (!dayMatches(cron, day)) continue;
    // A day without an offset change maps wall times to instants one to one, in order.
    const steady = offsetAt(day - DAY_MS / 2, timeZone) === offsetAt(day + DAY_MS * 1.5, timeZone);
    const offset = offsetAt(day, timeZone);
    let best: number | undefined;
    for (let h = 0; h < 24; h++) {
      if (!cron.hours[h]) continue;
      for (let m = 0; m < 60; m++) {
        if (!cron.minutes[m]) continue;
        const wall = day + h * 3_600_000 + m * 60_000;
        if (steady) {
          if (wall - offset > after) return wall - offset;
          continue;
        }
        for (const t of instantsOf(wall, timeZone, cron.fixedTime)) if (t > after && (best === undefined || t < best)) best = t;
      }
    }
    if (best !== undefined) return best;
  }
  return undefined;
}
