/**
 * The largest event a queue takes (`maxEventBytes`, 1 MiB of JSON unless the transport says
 * otherwise): measured in UTF-8 bytes of the event's JSON, refused before anything is written,
 * the same on every backend. Called by `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import type { OutboxSuiteContext } from './transport-outbox.js';

/** An event whose JSON, `{"text":"…"}`, is exactly `bytes` bytes of UTF-8 when `fill` is one byte. */
const eventOf = (bytes: number, fill = 'x') => ({ text: fill.repeat((bytes - 11) / new TextEncoder().encode(fill).length) });

export function describeLimits(c: OutboxSuiteContext): void {
  const t = () => c.t();

  describe('maxEventBytes: the largest event a queue takes', () => {
    it('takes 1 MiB of JSON by default and refuses one byte more, naming both sizes, writing nothing', async () => {
      await t().publish('g', eventOf(1_048_576));
      await expect(t().publish('g', eventOf(1_048_577))).rejects.toThrow(/1048577 bytes of JSON, over the queue's maxEventBytes \(1048576\)/);
      expect((await t().inspect()).groups.flatMap((group) => group.messages)).toHaveLength(1);
    });

    it('counts UTF-8 bytes, not characters: an event at the limit passes, one byte over is a RangeError', async () => {
      await c.open({ maxEventBytes: 100 });
      await t().publish('g', eventOf(100));
      await expect(t().publish('g', eventOf(101))).rejects.toBeInstanceOf(RangeError);
      await t().publish('g', eventOf(99, 'é')); // 44 two-byte characters
      await expect(t().publish('g', eventOf(103, 'é'))).rejects.toThrow(/103 bytes/);
      await t().publish('g', eventOf(95, '😀')); // 21 four-byte characters, 42 UTF-16 code units
      await expect(t().publish('g', eventOf(103, '😀'))).rejects.toThrow(/103 bytes/);
      expect((await t().inspect()).groups[0]!.messages).toHaveLength(3);
    });

    it('refuses a whole publishMany when one of its events is too large, naming the item', async () => {
      await c.open({ maxEventBytes: 100 });
      await c.unchangedBy(async () => {
        await expect(t().publishMany([{ groupId: 'a', event: eventOf(50) }, { groupId: 'b', event: eventOf(101) }])).rejects.toThrow(/^items\[1\]\.event is 101 bytes/);
      });
      expect(await t().publishMany([{ groupId: 'a', event: eventOf(50) }, { groupId: 'b', event: eventOf(100) }])).toHaveLength(2);
    });

    it('refuses a maxEventBytes that is not a positive integer', async () => {
      for (const bad of [0, -1, 1.5, Number.NaN]) await expect(c.open({ maxEventBytes: bad })).rejects.toThrow(RangeError);
      await expect(c.open({ maxEventBytes: '1000' as never })).rejects.toThrow(TypeError);
    });
  });
}
