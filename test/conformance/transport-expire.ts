/**
 * `expireLeases(workerId)`: a worker restarted under the same id ends its old leases at once,
 * as if they had run out — the same fencing, the attempt counted. Called by
 * `describeTransport`, so every backend runs it.
 */
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/errors.js';
import type { OutboxSuiteContext } from './transport-outbox.js';

export function describeExpireLeases(c: OutboxSuiteContext): void {
  const t = () => c.t();

  describe('expireLeases: a restarted worker takes its groups back at once', () => {
    it("ends that worker's live leases only, as if they ran out, and counts the attempt", async () => {
      for (const group of ['a', 'b', 'c']) await t().publish(group, { group });
      const [first, second] = await t().claimMany('crashed', 30_000, { max: 2 });
      const other = (await t().claim('alive', 30_000))!;
      expect(await t().expireLeases('crashed')).toBe(2);
      const again = (await t().claimMany('crashed', 30_000, { max: 3 })).sort((x, y) => x.seq - y.seq);
      expect(again.map((lease) => [lease.seq, lease.attempt])).toEqual([first!, second!].sort((x, y) => x.seq - y.seq).map((lease) => [lease.seq, 2]));
      // Fenced as any lease that ran out: the old ones are lost once claimed again.
      await expect(t().ack(first!)).rejects.toBeInstanceOf(LeaseLostError);
      await t().ack(other); // another worker's lease is untouched
      for (const lease of again) await t().ack(lease);
      expect((await t().stats()).queued).toBe(0);
    });

    it('leaves a lease that ran out or is another worker\'s alone, and answers 0', async () => {
      await t().publish('a', 1);
      await t().claim('w', 100);
      await c.tick(101);
      expect(await t().expireLeases('w')).toBe(0);
      expect(await t().expireLeases('nobody')).toBe(0);
    });

    it('lets an old lease settle until a claim takes its message', async () => {
      await t().publish('a', 1);
      const old = (await t().claim('w', 30_000))!;
      expect(await t().expireLeases('w')).toBe(1);
      await t().ack(old);
      expect(await t().claim('w', 30_000)).toBeNull();
    });

    it('spends an attempt: at maxAttempts the message goes to the dead letters', async () => {
      await c.open({ maxAttempts: 1 });
      await t().publish('a', 1);
      await t().claim('w', 30_000);
      await t().expireLeases('w');
      expect(await t().claim('w', 30_000)).toBeNull();
      expect(await t().deadLetters()).toHaveLength(1);
    });

    it('refuses a bad worker id before reading anything', async () => {
      await expect(t().expireLeases('')).rejects.toThrow(RangeError);
      await expect(t().expireLeases(7 as never)).rejects.toThrow(TypeError);
    });
  });
}
