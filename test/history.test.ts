/** The history checker must catch each kind of violation, or the torture tests prove nothing. */
import { describe, expect, it } from 'vitest';
import { checkHistory, type HistoryEntry, isClean } from './support/history.js';

const pub = (seq: number, groupId = 'g', t = 0): HistoryEntry => ({ op: 'publish', seq, groupId, t });
const claim = (seq: number, attempt: number, t: number, expiresAt: number, groupId = 'g', worker = 'w'): HistoryEntry => ({ op: 'claim', seq, groupId, attempt, worker, t, expiresAt });
const ack = (seq: number, attempt: number, t: number, ok = true): HistoryEntry => ({ op: 'ack', seq, attempt, worker: 'w', t, ok });

describe('queue history checker', () => {
  it('passes a clean history', () => {
    const v = checkHistory([pub(1), pub(2), claim(1, 1, 1, 10), ack(1, 1, 2), claim(2, 1, 3, 10), ack(2, 1, 4)], []);
    expect(isClean(v)).toBe(true);
  });

  it('accepts a redelivery after a lease ran out, and the stale ack being refused', () => {
    const v = checkHistory([pub(1), claim(1, 1, 1, 10), claim(1, 2, 11, 20), ack(1, 1, 12, false), ack(1, 2, 13)], []);
    expect(isClean(v)).toBe(true);
  });

  it('reports a message that is neither acked nor left as lost', () => {
    expect(checkHistory([pub(1), pub(2), claim(1, 1, 1, 10), ack(1, 1, 2)], []).lost).toEqual([2]);
    expect(checkHistory([pub(1), pub(2), claim(1, 1, 1, 10), ack(1, 1, 2)], [2]).lost).toEqual([]);
  });

  it('reports messages nobody published', () => {
    expect(checkHistory([claim(9, 1, 1, 10), ack(9, 1, 2)], []).unexpected).toContain(9);
    expect(checkHistory([], [5]).unexpected).toEqual([5]);
  });

  it('reports a message acked twice', () => {
    expect(checkHistory([pub(1), claim(1, 1, 1, 10), ack(1, 1, 2), ack(1, 1, 3)], []).duplicated).toEqual([1]);
  });

  it('reports two leases of one group held at once, including at the inclusive expiry instant', () => {
    expect(checkHistory([pub(1), pub(2), claim(1, 1, 1, 10), claim(2, 1, 5, 15)], [1, 2]).overlapping).toHaveLength(1);
    expect(checkHistory([pub(1), claim(1, 1, 1, 10), claim(1, 2, 10, 20)], [1]).overlapping).toHaveLength(1);
    expect(checkHistory([pub(1), claim(1, 1, 1, 10), claim(1, 2, 11, 20)], [1]).overlapping).toEqual([]);
  });

  it('reports one lease handed to two workers, and judges leases by history order, not by the times of acks', () => {
    const twice = checkHistory([pub(1), claim(1, 1, 1, 10, 'g', 'a'), claim(1, 1, 2, 11, 'g', 'b')], [1]);
    expect(twice.overlapping).toHaveLength(1);
    // Commit order from concurrent clients: the ack committed before the next claim, though the
    // claim read its clock earlier. The lease had ended; the history is clean.
    expect(isClean(checkHistory([pub(1), pub(2), claim(1, 1, 5, 10), ack(1, 1, 9), claim(2, 1, 8, 13)], [2]))).toBe(true);
  });

  it('reports a claim that jumps ahead of an older message of its group', () => {
    expect(checkHistory([pub(1), pub(2), claim(2, 1, 1, 10)], [1, 2]).fifoBreaks).toHaveLength(1);
    expect(checkHistory([pub(1, 'a'), pub(2, 'b'), claim(2, 1, 1, 10, 'b')], [1, 2]).fifoBreaks).toEqual([]);
  });

  it('reports an ack accepted from a lease whose message was claimed again', () => {
    const v = checkHistory([pub(1), claim(1, 1, 1, 10), claim(1, 2, 11, 20), ack(1, 1, 12, true)], []);
    expect(v.staleAccepted).toHaveLength(1);
  });
});
