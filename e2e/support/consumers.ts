/**
 * Consumers that run inside lab pages against one shared database and report every claim and
 * ack to the test process as it happens (so a tab that is closed mid-run has already told).
 */
import type { Page } from '@playwright/test';

export interface Record {
  /** 'sending': an ack is about to be sent (reported first, so a tab closed before its answer came has told). */
  kind: 'claimed' | 'sending' | 'acked' | 'lost';
  tab: number;
  seq: number;
  groupId: string;
  n: number;
  attempt: number;
  /** Date.now() when the claim resolved, or when the ack was sent: inside the true lease. */
  at: number;
}

export async function exposeRecorder(page: Page, tab: number, records: Record[]): Promise<void> {
  await page.exposeFunction('record', (r: Omit<Record, 'tab'>) => void records.push({ ...r, tab }));
}

/** Opens `name` on the system clock in `page` as `window.db`. */
export async function openShared(page: Page, name: string, options: { broker?: boolean } = {}): Promise<void> {
  await page.evaluate(
    async ({ name, broker }) => {
      const w = window as any;
      // Without the link broker, calls are forwarded over the BroadcastChannel only: this page
      // becomes a browser with no SharedWorker (as Chrome for Android), so none is started.
      if (broker === false) delete w.SharedWorker;
      w.db = await w.leasehold.openBrowserDatabase({ name });
    },
    { name, broker: options.broker },
  );
}

/** Publishes `{ n }` for n = 0…messages-1 to groups g0…g(groups-1) in turn, one call at a time, from `page`. */
export async function publishNumbered(page: Page, messages: number, groups: number): Promise<{ seq: number; groupId: string; n: number }[]> {
  return page.evaluate(
    async ({ messages, groups }) => {
      const { db } = window as any;
      const out = [];
      for (let n = 0; n < messages; n++) out.push({ seq: await db.transport.publish(`g${n % groups}`, { n }), groupId: `g${n % groups}`, n });
      return out;
    },
    { messages, groups },
  );
}

/** How a tab's calls reach the owner right now (`owner().via`). */
export async function via(page: Page): Promise<string> {
  return page.evaluate(async () => (await (window as any).db.owner()).via);
}

/**
 * Starts a consumer loop in the page: claim, (optionally) work for `workMs`, ack; when nothing is
 * claimable, wait for a change notice or 25 ms. Stops once the queue is empty.
 */
export async function startConsumer(page: Page, options: { visibilityMs: number; workMs: number; worker: string }): Promise<void> {
  await page.evaluate((o) => {
    const w = window as any;
    w.consumerDone = (async () => {
      const wait = (ms: number) =>
        new Promise<void>((resolve) => {
          const off = w.db.transport.onChange(() => {
            off();
            resolve();
          });
          setTimeout(() => {
            off();
            resolve();
          }, ms);
        });
      for (;;) {
        const lease = await w.db.transport.claim(o.worker, o.visibilityMs);
        if (!lease) {
          const snapshot = await w.db.transport.inspect();
          if (snapshot.groups.length === 0) return;
          await wait(25);
          continue;
        }
        const base = { seq: lease.seq, groupId: lease.groupId, n: lease.event.n, attempt: lease.attempt };
        await w.record({ kind: 'claimed', ...base, at: Date.now() });
        if (o.workMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * o.workMs));
        const sentAt = Date.now();
        await w.record({ kind: 'sending', ...base, at: sentAt });
        try {
          await w.db.transport.ack(lease);
          await w.record({ kind: 'acked', ...base, at: sentAt });
        } catch (error: any) {
          if (error?.name !== 'LeaseLostError') throw error;
          await w.record({ kind: 'lost', ...base, at: sentAt });
        }
      }
    })();
  }, options);
}

/** Checks a finished run: returns a list of violations (empty when all is well). */
export function checkRun(records: Record[], published: { seq: number; groupId: string; n: number }[]): string[] {
  const problems: string[] = [];
  // An ack sent by a tab that was closed before the answer came took effect if its message is
  // gone (every run ends with an empty queue) and nobody else acked it.
  const answered = new Set(records.filter((r) => r.kind === 'acked' || r.kind === 'lost').map((r) => `${r.tab} ${r.seq}#${r.attempt}`));
  const unanswered = records.filter((r) => r.kind === 'sending' && !answered.has(`${r.tab} ${r.seq}#${r.attempt}`));
  const ackedByAnswer = new Set(records.filter((r) => r.kind === 'acked').map((r) => r.seq));
  const acked = [...records.filter((r) => r.kind === 'acked'), ...unanswered.filter((r) => !ackedByAnswer.has(r.seq)).map((r) => ({ ...r, kind: 'acked' as const }))];
  const ackCount = new Map<number, number>();
  for (const r of acked) ackCount.set(r.seq, (ackCount.get(r.seq) ?? 0) + 1);
  for (const p of published) {
    const count = ackCount.get(p.seq) ?? 0;
    if (count !== 1) problems.push(`message ${p.seq} (${p.groupId} #${p.n}) was acked ${count} times`);
  }
  if (acked.length !== published.length) problems.push(`${acked.length} acks for ${published.length} messages`);
  // Per group: the leases that ended in an ack never overlap, and acks follow publish order.
  const byGroup = new Map<string, Record[]>();
  for (const r of [...records.filter((r) => r.kind === 'claimed'), ...acked]) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
  for (const [groupId, rs] of byGroup) {
    const intervals = rs
      .filter((r) => r.kind === 'acked')
      .map((ack) => {
        const claim = rs.find((c) => c.kind === 'claimed' && c.seq === ack.seq && c.attempt === ack.attempt)!;
        return { from: claim.at, to: ack.at, n: ack.n };
      })
      .sort((a, b) => a.from - b.from);
    for (let i = 1; i < intervals.length; i++) {
      if (intervals[i]!.from < intervals[i - 1]!.to) problems.push(`group ${groupId}: two leases at once (#${intervals[i - 1]!.n} and #${intervals[i]!.n})`);
      if (intervals[i]!.n < intervals[i - 1]!.n) problems.push(`group ${groupId}: #${intervals[i]!.n} acked after #${intervals[i - 1]!.n}`);
    }
  }
  return problems;
}
