/**
 * Group commit under a crash: 4 consumers across 2 tabs (2 in the owner tab, 2 forwarding from
 * the other), the owner tab's renderer crashed while batches are being committed. The survivor
 * takes over, its forwarded calls are retried there (the journal answers those already applied),
 * the crashed tab's leases run out and are claimed again, and the queue history checker
 * (test/support/history.ts) finds nothing lost, duplicated, overlapping, out of order or stale.
 */
import { expect, test } from '@playwright/test';
import { checkHistory, type HistoryEntry } from '../test/support/history.js';
import { openShared } from './support/consumers.js';
import { openLab, uniqueName } from './support/lab.js';

const MESSAGES = 400;
const GROUPS = 16;
const VISIBILITY_MS = 3_000;

type AckEntry = Extract<HistoryEntry, { op: 'ack' | 'nack' }>;

test('4 consumers across 2 tabs, the owner tab crashed mid-batch: the history checker finds nothing wrong', async ({ context }) => {
  test.setTimeout(120_000);
  const name = uniqueName('crash-batch');
  // The history is kept in the order this process heard of each step, which is an order the
  // database could have had: a consumer reports a claim (and waits for the report to land)
  // after the claim took effect, and reports an ack before sending it. So an ack is placed where
  // it was sent, ahead of any claim its effect made possible, and its outcome is filled in when
  // the answer comes. Timestamps (milliseconds, often equal) only meet lease expiries.
  const history: HistoryEntry[] = [];
  /** Acks a tab sent and has not heard back about, by seq: applied or not, the tab does not know. */
  const sent = new Map<number, Map<number, AckEntry>>();
  const pages = [];
  for (let tab = 0; tab < 2; tab++) {
    const page = await context.newPage();
    await openLab(page);
    await page.exposeFunction('record', (entry: Exclude<HistoryEntry, { op: 'pause' | 'resume' }> & { op: string }) => {
      if ((entry.op as string) === 'ack-sent') {
        const ack = { ...entry, op: 'ack', ok: true } as AckEntry;
        sent.get(tab)!.set(entry.seq, ack);
        history.push(ack);
      } else if (entry.op === 'ack') {
        const ack = sent.get(tab)!.get(entry.seq)!;
        ack.ok = entry.ok;
        sent.get(tab)!.delete(entry.seq);
      } else history.push(entry);
    });
    sent.set(tab, new Map());
    await openShared(page, name);
    pages.push(page);
  }
  const [owner, other] = pages as [typeof pages[0], typeof pages[0]];
  expect(await owner!.evaluate(async () => (await (window as any).db.owner()).isThisTab)).toBe(true);

  // Published before any consumer starts, from the forwarding tab (8 at a time: group commit).
  const published: { seq: number; groupId: string }[] = await other.evaluate(
    async ({ messages, groups }) => {
      const { db } = window as any;
      const out: { seq: number; groupId: string }[] = [];
      for (let n = 0; n < messages; n += 8) {
        const batch = Array.from({ length: 8 }, (_, i) => ({ groupId: `g${(n + i) % groups}`, n: n + i }));
        const seqs = await Promise.all(batch.map((m) => db.transport.publish(m.groupId, { n: m.n })));
        batch.forEach((m, i) => out.push({ seq: seqs[i], groupId: m.groupId }));
      }
      return out;
    },
    { messages: MESSAGES, groups: GROUPS },
  );
  for (const p of published) history.push({ op: 'publish', seq: p.seq, groupId: p.groupId, t: 0 });

  // Times: a claim's t is when its answer arrived (after it took effect), on the clock the
  // leases are measured with, so a lease counts as held at t.
  for (const [tab, page] of pages.entries()) {
    await page.evaluate(
      ({ tab, visibilityMs }) => {
        const w = window as any;
        const consumer = async (worker: string) => {
          for (;;) {
            const lease = await w.db.transport.claim(worker, visibilityMs);
            if (!lease) {
              if ((await w.db.transport.inspect()).groups.length === 0) return;
              await new Promise((resolve) => setTimeout(resolve, 25));
              continue;
            }
            const base = { seq: lease.seq, attempt: lease.attempt, worker };
            await w.record({ op: 'claim', ...base, groupId: lease.groupId, t: Date.now(), expiresAt: lease.expiresAt });
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
            const t = Date.now();
            await w.record({ op: 'ack-sent', ...base, t });
            const ok = await w.db.transport.ack(lease).then(
              () => true,
              (error: any) => {
                if (error?.name !== 'LeaseLostError') throw error;
                return false;
              },
            );
            await w.record({ op: 'ack', ...base, t, ok });
          }
        };
        w.consumersDone = Promise.all([consumer(`tab${tab}-a`), consumer(`tab${tab}-b`)]);
      },
      { tab, visibilityMs: VISIBILITY_MS },
    );
  }

  await expect.poll(() => history.filter((e) => e.op === 'ack').length, { timeout: 30_000 }).toBeGreaterThan(MESSAGES / 4);
  // Batches are being committed all the time now: crash the owner's renderer (page and worker).
  const cdp = await context.newCDPSession(owner);
  const crashedAt = Date.now();
  void cdp.send('Page.crash').catch(() => undefined);
  await expect.poll(() => other.evaluate(async () => (await (window as any).db.owner()).isThisTab)).toBe(true);
  await other.evaluate(() => (window as any).consumersDone);

  const remaining = await other.evaluate(async () => (await (window as any).db.transport.inspect()).groups.flatMap((g: any) => g.messages.map((m: any) => m.seq)));
  expect(remaining).toEqual([]);
  // The crashed tab's acks that never got an answer: one took effect if its message is gone and
  // nobody else acked it (then the next holder of its group came after it). The survivor heard
  // back about all of its own (retried on the new owner, answered from the journal if applied).
  expect(sent.get(1)!.size).toBe(0);
  const unanswered = new Set<HistoryEntry>(sent.get(0)!.values());
  const ackedByOthers = new Set(history.filter((e): e is AckEntry => e.op === 'ack' && e.ok && !unanswered.has(e)).map((e) => e.seq));
  for (const [seq, ack] of sent.get(0)!) ack.ok = !ackedByOthers.has(seq) && !remaining.includes(seq);
  expect(checkHistory(history, remaining)).toEqual({ lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] });
  // The crash came in the middle of the work: both tabs acked before it, the survivor after it.
  const ackedBy = (tab: string, after: number) => history.some((e) => e.op === 'ack' && e.ok && e.worker.startsWith(tab) && e.t > after);
  expect([ackedBy('tab0', 0), ackedBy('tab1', 0), ackedBy('tab1', crashedAt)]).toEqual([true, true, true]);
  await other.evaluate(() => (window as any).db.close());
});
