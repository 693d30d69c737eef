import { describe, expect, it } from 'vitest';
import { InMemoryTransport, ManualClock } from '../src/index.js';
import { TimelineModel } from '../src/inspector/timeline/model.js';

describe('TimelineModel', () => {
  it('draws a new bar for a lease taken after a release, which gave the attempt back', async () => {
    const clock = new ManualClock(0);
    const transport = new InMemoryTransport({ clock: clock.now });
    const model = new TimelineModel();
    await transport.publish('note-7', { text: 'milk' });
    const first = (await transport.claim('w1', 5_000))!;
    model.claimed(first, 5_000);
    clock.advance(1_000);
    await transport.release(first, 2_000);
    model.ended(first, clock.now(), 'parked', 2_000);
    clock.advance(2_001);
    const second = (await transport.claim('w2', 5_000))!;
    // Not a failure, so not a new attempt: the key the model used to tell leases apart.
    expect(second.attempt).toBe(first.attempt);
    model.claimed(second, 5_000);
    clock.advance(1_000);
    model.ended(second, clock.now(), 'acked');

    expect(model.leases.map((l) => [l.worker, l.start, l.end, l.how])).toEqual([
      ['w1', 0, 1_000, 'parked'],
      ['w2', 3_001, 4_001, 'acked'],
    ]);
  });

  it('keeps one bar for a lease a snapshot saw before its claim answered', () => {
    const model = new TimelineModel();
    const lease = { seq: 1, groupId: 'g', attempt: 1, workerId: 'w1', expiresAt: 5_000, event: null };
    model.claimed(lease, 4_000, false);
    model.claimed(lease, 5_000);
    model.ended(lease, 2_000, 'acked');
    expect(model.leases.map((l) => [l.start, l.end, l.how, l.local])).toEqual([[0, 2_000, 'acked', true]]);
  });
});
