/**
 * The owner's SQL trace (the demo's SQL panel), in Node on a real sqlite-wasm database: a claim
 * and an ack are recorded with their statements, parameters and the lh_groups rows they changed;
 * calls that are not claims, acks or nacks are not; without a tracer nothing is wrapped.
 */
import { describe, expect, it } from 'vitest';
import { HostCore } from '../src/browser/core.js';
import { SqlTracer } from '../src/browser/trace.js';
import type { CallMessage } from '../src/browser/protocol.js';
import { LeaseLostError } from '../src/errors.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';

let ids = 0;
const call = (method: string, args: unknown[], now: number): CallMessage => ({ kind: 'call', id: `t${++ids}`, target: 'transport', method, args, now });

describe('SqlTracer', () => {
  it('records a claim: its UPDATE of lh_groups with the bound parameters, and the row before and after', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    await core.serve(call('publish', ['busy', 'a', undefined], 0));
    await core.serve(call('publish', ['quiet', 'b', undefined], 0));
    expect(tracer.entries()).toEqual([]);
    // As the owner's own page calls: not journaled (a forwarded call also shows the journal's SQL).
    // With a read queued alongside, the two share a batch and the claim runs under a savepoint.
    await Promise.all([core.serve(call('claim', ['w1', 5_000, undefined], 100), false), core.serve(call('stats', [], 100), false)]);

    const [claim] = tracer.entries();
    expect(claim).toMatchObject({ method: 'claim', queue: 'default', at: 100, transaction: 'batch', error: null });
    const sql = claim!.statements.map((s) => s.sql);
    expect(sql[0]).toBe('SAVEPOINT lh_call');
    expect(sql.at(-1)).toBe('RELEASE lh_call');
    const update = claim!.statements.find((s) => s.sql.startsWith('UPDATE OR FAIL lh_groups SET holder'))!;
    // worker, expiresAt, the queue's id (four times: the next claim order, the group's queue),
    // floor, now, the queue's id (is it paused?), maxAttempts (unlimited: the largest safe
    // integer), the queue's id (twice: the head, the low-water mark)
    expect(update.params).toEqual(['w1', 5_100, 1, 1, 1, 1, 0, 100, 1, Number.MAX_SAFE_INTEGER, 1, 1]);
    // The one row its RETURNING gave: the group, its delivery count, and the leased head as [seq, counter, revision, event].
    expect(update).toMatchObject({ rows: 1, row: { group_id: 'busy', head_attempt: 1 } });
    expect(JSON.parse(update.row!.head as string)).toEqual([1, expect.any(Number), 0, 'a']);
    expect(claim!.groups.total).toBe(2);
    expect(claim!.groups.before[0]).toMatchObject({ group_id: 'busy', holder: null, head_attempt: 0, claim_order: 0, locked_until: null });
    // The claimed group moved to the back of the claim order, leased by w1.
    expect(claim!.groups.after.map((g) => g.group_id)).toEqual(['quiet', 'busy']);
    expect(claim!.groups.after[1]).toMatchObject({ holder: 'w1', head_attempt: 1, claim_order: 1, locked_until: 5_100 });
  });

  it('records a call that came alone in its own BEGIN IMMEDIATE \u2026 COMMIT, with no savepoint', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    await core.serve(call('publish', ['g', 'x', undefined], 0));
    await core.serve(call('claim', ['w1', 5_000, undefined], 0), false);
    const [claim] = tracer.entries();
    expect(claim).toMatchObject({ method: 'claim', transaction: 'own', error: null });
    const sql = claim!.statements.map((s) => s.sql);
    expect([sql[0], sql.at(-1)]).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
    expect(sql.some((s) => s.includes('lh_call;') || s.startsWith('SAVEPOINT'))).toBe(false);
  });

  it('shows a forwarded call\u2019s journal write inside its transaction', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    await core.serve(call('publish', ['g', 'x', undefined], 0));
    await core.serve(call('claim', ['w1', 5_000, undefined], 0), true);
    const sql = tracer.entries()[0]!.statements.map((s) => s.sql);
    expect(sql[0]).toBe('SELECT result FROM lh_calls WHERE id = ?');
    expect(sql.at(-2)).toMatch(/^INSERT INTO lh_calls/);
  });

  it('records a refused late ack: the DELETE changed no row, the rows stay as they were, and the error is kept', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    await core.serve(call('publish', ['g', 'x', undefined], 0));
    const stale = await core.serve(call('claim', ['w1', 1_000, undefined], 0));
    await core.serve(call('claim', ['w2', 1_000, undefined], 2_000));
    await expect(core.serve(call('ack', [stale], 2_500))).rejects.toBeInstanceOf(LeaseLostError);

    const ack = tracer.entries().at(-1)!;
    expect(ack.method).toBe('ack');
    expect(ack.error).toMatchObject({ name: 'LeaseLostError' });
    const del = ack.statements.find((s) => s.sql.startsWith('DELETE FROM lh_messages'))!;
    expect(del.changes).toBe(0);
    // It came alone, so it ran in its own transaction (in a batch: ROLLBACK TO its savepoint).
    expect(ack.statements.at(-1)!.sql).toBe('ROLLBACK');
    expect(ack.groups.after).toEqual(ack.groups.before);
    expect(ack.groups.after[0]).toMatchObject({ holder: 'w2', head_attempt: 2 });
  });

  it('shows the rows an ack changed through the trigger, and a group that went away', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    await core.serve(call('publish', ['g', 'x', undefined], 0));
    const lease = await core.serve(call('claim', ['w1', 1_000, undefined], 0));
    await core.serve(call('ack', [lease], 10));
    const ack = tracer.entries().at(-1)!;
    expect(ack.groups.before.map((g) => g.group_id)).toEqual(['g']);
    expect(ack.groups.after).toEqual([]);
  });

  it('records an ackAndClaimMany as one entry: its acks\' DELETE, then its claims\' UPDATE, at its one clock reading', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    for (const event of ['a1', 'a2', 'b1']) await core.serve(call('publish', [event[0], event, undefined], 0));
    const leases = await core.serve(call('claimMany', ['w1', 1_000, { max: 2 }], 0));
    await core.serve(call('ackAndClaimMany', [leases, 'w2', 1_000, { max: 2 }], 10));
    const entry = tracer.entries().at(-1)!;
    expect(entry).toMatchObject({ method: 'ackAndClaimMany', at: 10, error: null });
    const sql = entry.statements.map((s) => s.sql);
    const deleted = sql.findIndex((s) => s.includes('DELETE FROM lh_messages'));
    expect(deleted).toBeGreaterThan(0);
    expect(sql.findIndex((s) => s.includes('UPDATE OR FAIL lh_groups SET claim_order'))).toBeGreaterThan(deleted);
    // a's next message is leased by w2 in the same call; b is gone.
    expect(entry.groups.before.map((g) => [g.group_id, g.holder])).toEqual([
      ['a', 'w1'],
      ['b', 'w1'],
    ]);
    expect(entry.groups.after).toMatchObject([{ group_id: 'a', holder: 'w2', head_attempt: 1, locked_until: 1_010 }]);
  });

  it('keeps a bounded record and ignores reads and publishes', async () => {
    const tracer = new SqlTracer();
    const core = new HostCore(await openWasmDatabase(), { trace: tracer });
    for (let i = 0; i < 30; i++) {
      await core.serve(call('publish', [`g${i}`, i, undefined], i));
      await core.serve(call('claim', ['w', 1_000, undefined], i));
      await core.serve(call('inspect', [], i));
    }
    const entries = tracer.entries();
    expect(entries).toHaveLength(24);
    expect(entries.every((e) => e.method === 'claim')).toBe(true);
    expect(entries.at(-1)!.at).toBe(29);
  });

  it('leaves the database unwrapped when no tracer is given', async () => {
    const db = await openWasmDatabase();
    const prepare = db.prepare;
    let prepared = 0;
    db.prepare = (sql) => {
      prepared++;
      return prepare.call(db, sql);
    };
    const core = new HostCore(db);
    const before = prepared;
    await core.serve(call('publish', ['g', 'x', undefined], 0));
    await core.serve(call('claim', ['w', 1_000, undefined], 0));
    // The backends prepared their statements once, at construction; serving prepares nothing.
    expect(prepared).toBe(before);
  });
});
