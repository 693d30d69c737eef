/**
 * The SQL trace through the real host worker: off by default (nothing recorded), and with
 * `traceSql: true` the owner's statements of a claim and an ack come back from `sqlTrace()`.
 */
import { describe, expect, it } from 'vitest';
import { openBrowserDatabase } from 'leasehold/browser';
import { ManualClock } from '../../src/clock.js';
import { freshName, removeOpfsPool, whereOpfs } from './harness.js';

describe('openBrowserDatabase({ traceSql })', () => {
  it('records nothing unless asked', async () => {
    const db = await openBrowserDatabase({ name: freshName('untraced'), storage: 'memory' });
    await db.transport.publish('g', 1);
    await db.transport.ack((await db.transport.claim('w', 1_000))!);
    expect(await db.sqlTrace()).toEqual([]);
    await db.close();
  });

  whereOpfs(() =>
    it('returns the owner’s claim and ack, with their statements and lh_groups rows, on OPFS', async () => {
    const clock = new ManualClock(5_000);
    const name = freshName('traced');
    const db = await openBrowserDatabase({ name, clock: clock.now, traceSql: true });
    await db.transport.publish('g', 1);
    const lease = (await db.transport.claim('w', 1_000))!;
    await db.transport.ack(lease);
    const [claim, ack] = await db.sqlTrace();
    expect(claim).toMatchObject({ method: 'claim', queue: 'default', at: 5_000, error: null });
    const update = claim!.statements.find((s) => s.sql.startsWith('UPDATE OR FAIL lh_groups SET holder') && s.params.includes('w'));
    // The claim's UPDATE … RETURNING, run with all(): the one row it returned is shown too.
    expect(update).toMatchObject({ rows: 1, row: expect.objectContaining({ group_id: 'g', head_attempt: 1 }) });
    expect(claim!.groups.after).toEqual([expect.objectContaining({ group_id: 'g', holder: 'w', head_attempt: 1, locked_until: 6_000 })]);
    expect(ack).toMatchObject({ method: 'ack', error: null, groups: { after: [] } });
    await db.close();
    await removeOpfsPool(name);
  }),
  );
});
