/**
 * The cron parser and next-slot finder of src/schedule/cron.ts, checked against croner (a dev
 * dependency, the well-kept library we did not ship for its size) on random expressions, time
 * zones and instants, DST changes included; plus the parser's refusals and the slot arithmetic
 * of each catch-up policy.
 */
import { Cron } from 'croner';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkTimeZone, nextCron, parseCron } from '../src/schedule/cron.js';
import { dueSlots, nextSlot, type ScheduleRecord } from '../src/schedule/spec.js';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/Sao_Paulo', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
const H = 3_600_000;

/** The wall-clock fields of `instant` in `timeZone`. */
function wall(instant: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' }).formatToParts(instant);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return { month: Number(get('month')), day: Number(get('day')), hour: Number(get('hour')), minute: Number(get('minute')), weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday')) };
}

const field = (min: number, max: number) =>
  fc.oneof(
    fc.constant('*'),
    fc.integer({ min, max }).map(String),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.integer({ min: 1, max: Math.min(max, 20) }).map((n) => `*/${n}`),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max }), fc.integer({ min: 1, max: Math.min(max, 9) })).map(([a, b, n]) => `${Math.min(a, b)}-${Math.max(a, b)}/${n}`),
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 2, maxLength: 4 }).map((values) => values.join(',')),
  );
const expression = fc.tuple(field(0, 59), field(0, 23), field(1, 28), field(1, 12), field(0, 6)).map((parts) => parts.join(' '));
/** Instants over 2026–2027, with extra weight on the days clocks change in the zones above. */
const instant = fc.oneof(
  fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 11, 31) }),
  fc.constantFrom(Date.UTC(2026, 2, 8), Date.UTC(2026, 2, 28), Date.UTC(2026, 3, 4), Date.UTC(2026, 8, 26), Date.UTC(2026, 9, 3), Date.UTC(2026, 9, 24), Date.UTC(2026, 10, 1)).chain((day) =>
    fc.integer({ min: day - 12 * H, max: day + 36 * H }),
  ),
);

describe('cron', () => {
  it('finds the same next slots as croner, in every zone, across DST changes', () => {
    fc.assert(
      fc.property(expression, fc.constantFrom(...ZONES), instant, (text, zone, from) => {
        const cron = parseCron('cron', text);
        const reference = new Cron(text, { timezone: zone });
        let [ours, theirs] = [from, from];
        for (let i = 0; i < 6; i++) {
          const a = nextCron(cron, zone, ours);
          const b = reference.nextRun(new Date(theirs))?.getTime();
          if (a !== b) {
            // croner skips some days that match by day of month OR day of week in zones east of
            // UTC (seen: the 1st of a month); ours must then be earlier and match on the wall clock.
            expect(a).toBeLessThan(b!);
            const w = wall(a!, zone);
            const [dom, dow] = [cron.daysOfMonth[w.day]!, cron.daysOfWeek[w.weekday]!];
            expect([cron.months[w.month], cron.eitherDay ? dom || dow : dom && dow, cron.hours[w.hour], cron.minutes[w.minute]]).toEqual([true, true, true, true]);
            return;
          }
          if (a === undefined) return;
          [ours, theirs] = [a, b!];
        }
      }),
      { numRuns: 300 },
    );
  });

  it('fires a fixed time once when the hour repeats, and at the jump when it is skipped', () => {
    const nightly = parseCron('cron', '30 2 * * *');
    const berlin = 'Europe/Berlin';
    expect(nextCron(nightly, berlin, Date.UTC(2026, 2, 28, 12))).toBe(Date.UTC(2026, 2, 29, 1)); // 03:00 CEST
    expect(nextCron(nightly, berlin, Date.UTC(2026, 9, 24, 12))).toBe(Date.UTC(2026, 9, 25, 0, 30)); // 02:30 CEST, not CET too
    expect(nextCron(nightly, berlin, Date.UTC(2026, 9, 25, 0, 30))).toBe(Date.UTC(2026, 9, 26, 1, 30));
    const quarter = parseCron('cron', '*/15 2 * * *');
    // Not a fixed time: nothing in the skipped hour, both passes through the repeated one.
    expect(nextCron(quarter, berlin, Date.UTC(2026, 2, 28, 12))).toBe(Date.UTC(2026, 2, 30, 0));
    const autumn: number[] = [];
    for (let t: number | undefined = Date.UTC(2026, 9, 24, 12); autumn.length < 8; ) autumn.push((t = nextCron(quarter, berlin, t!))!);
    expect(autumn.map((t) => (t - Date.UTC(2026, 9, 25)) / 60_000)).toEqual([0, 15, 30, 45, 60, 75, 90, 105]);
  });

  it('reads names, nicknames, Sunday as 7, and either day field when both are restricted', () => {
    expect(parseCron('c', '0 0 * JAN,dec MON-fri').daysOfWeek).toEqual([false, true, true, true, true, true, false]);
    expect(parseCron('c', '0 0 * * 7').daysOfWeek[0]).toBe(true);
    expect(parseCron('c', ' @Daily ')).toMatchObject({ fixedTime: true, eitherDay: false });
    expect(parseCron('c', '0 0 13 * 5').eitherDay).toBe(true);
    expect(nextCron(parseCron('c', '0 12 13 * 5'), 'UTC', Date.UTC(2026, 1, 1))).toBe(Date.UTC(2026, 1, 6, 12)); // Friday the 6th
    expect(nextCron(parseCron('c', '@yearly'), 'Asia/Kolkata', Date.UTC(2026, 5, 1))).toBe(Date.UTC(2026, 11, 31, 18, 30));
    expect(nextCron(parseCron('c', '0 0 30 2 *'), 'UTC', 0)).toBeUndefined();
  });

  it.each([
    ['* * * *', /five fields/],
    ['* * * * * *', /five fields/],
    ['60 * * * *', /minute 60 is outside 0–59/],
    ['* 24 * * *', /hour/],
    ['* * 0 * *', /day of month/],
    ['* * * 13 *', /month/],
    ['* * * * 8', /day of week/],
    ['5/15 * * * *', /\*\/n or a-b\/n/],
    ['*/0 * * * *', /step/],
    ['*/x * * * *', /step/],
    ['10-5 * * * *', /backwards/],
    ['1,,2 * * * *', /minute/],
    ['a * * * *', /not a minute/],
    ['@reboot', /five fields/],
  ])('refuses %j', (text, message) => {
    expect(() => parseCron('spec.cron', text)).toThrow(RangeError);
    expect(() => parseCron('spec.cron', text)).toThrow(message);
  });

  it('knows IANA zones and refuses others', () => {
    expect(() => checkTimeZone('tz', 'America/Argentina/Buenos_Aires')).not.toThrow();
    expect(() => checkTimeZone('spec.timeZone', 'Europe/Atlantis')).toThrow(/spec\.timeZone must be an IANA time zone/);
  });
});

describe('slots and catch-up', () => {
  const every = { everyMs: 1000, startAt: 500, catchUp: 'all' as const, graceMs: 0 };
  const record = (spec: ScheduleRecord['spec'], next: number): ScheduleRecord => ({ spec, target: { group: 'g', event: {} }, paused: false, next, last: null, fired: 0 });

  it('counts interval slots from startAt', () => {
    expect([nextSlot(every, 0), nextSlot(every, 500), nextSlot(every, 1499), nextSlot(every, 1500)]).toEqual([500, 1500, 1500, 2500]);
  });

  it('fires all, the latest, or the on-time due slots, and never more than 100 in one firing', () => {
    expect(dueSlots(record(every, 500), 3600)).toEqual({ fire: [500, 1500, 2500, 3500], next: 4500 });
    expect(dueSlots(record({ ...every, catchUp: 'once' }, 500), 3600)).toEqual({ fire: [3500], next: 4500 });
    expect(dueSlots(record({ ...every, catchUp: 'skip', graceMs: 50 }, 500), 3600)).toEqual({ fire: [], next: 4500 });
    expect(dueSlots(record({ ...every, catchUp: 'skip', graceMs: 2000 }, 500), 3600)).toEqual({ fire: [2500, 3500], next: 4500 });
    const many = dueSlots(record(every, 500), 500_000);
    expect([many.fire.length, many.fire.at(-1), many.next]).toEqual([100, 99_500, 100_500]);
    const daily = { cron: '0 6 * * *', timeZone: 'America/New_York', catchUp: 'once' as const, graceMs: 0 };
    expect(dueSlots(record(daily, Date.UTC(2026, 0, 1, 11)), Date.UTC(2026, 5, 1, 9))).toEqual({ fire: [Date.UTC(2026, 4, 31, 10)], next: Date.UTC(2026, 5, 1, 10) });
  });
});
