/**
 * The link broker (a SharedWorker) lives in the renderer of the tab that started it: when that tab
 * crashes the broker goes with it. Three tabs consume one database; the first one opened started
 * the broker and owns the database, and it is crashed mid-run. The survivors must fail over as
 * after a close (nothing lost, every message acked once) and the forwarding one must be back on a
 * port to the new owner, not left on the BroadcastChannel until it reloads.
 */
import { expect, type Page, test } from '@playwright/test';
import { checkRun, exposeRecorder, openShared, publishNumbered, type Record, startConsumer, via } from './support/consumers.js';
import { openLab, uniqueName } from './support/lab.js';

test('the tab that started the link broker crashes: the others fail over, nothing is lost, and forwarding is back on a port', async ({ context }) => {
  test.setTimeout(120_000);
  const name = uniqueName('crash-broker');
  const records: Record[] = [];
  const pages: Page[] = [];
  for (let i = 0; i < 3; i++) {
    const page = await context.newPage();
    await openLab(page);
    await exposeRecorder(page, i, records);
    await openShared(page, name);
    pages.push(page);
  }
  // Tab 0 opened first: it started the broker and holds the lock.
  expect(await pages[0]!.evaluate(async () => (await (window as any).db.owner()).isThisTab)).toBe(true);
  for (const page of pages.slice(1)) await expect.poll(() => via(page)).toBe('port');
  const published = await publishNumbered(pages[0]!, 90, 9);
  // Leases of 1.5 s: the crashed tab's leases run out and go to the survivors.
  for (const [i, page] of pages.entries()) await startConsumer(page, { visibilityMs: 1_500, workMs: 40, worker: `tab${i}` });
  await expect.poll(() => records.filter((r) => r.kind === 'acked').length).toBeGreaterThan(15);

  const cdp = await context.newCDPSession(pages[0]!);
  const crashed = new Promise((resolve) => pages[0]!.once('crash', resolve));
  const crashedAt = Date.now();
  void cdp.send('Page.crash').catch(() => undefined);
  await crashed;
  const survivors = pages.slice(1);
  await expect.poll(() => records.some((r) => r.kind === 'acked' && r.tab !== 0 && r.at > crashedAt)).toBe(true);
  await Promise.all(survivors.map((p) => p.evaluate(() => (window as any).consumerDone)));
  expect(checkRun(records, published)).toEqual([]);

  const owners = await Promise.all(survivors.map((p) => p.evaluate(() => (window as any).db.owner())));
  expect(owners.filter((o) => o.isThisTab)).toHaveLength(1);
  const forwarding = survivors[owners.findIndex((o) => !o.isThisTab)]!;
  await expect.poll(() => via(forwarding)).toBe('port');
  // And the calls really take it: a listener on the database's BroadcastChannel (in the owner's
  // tab) hears none of the forwarding tab's calls.
  const ownerPage = survivors.find((p) => p !== forwarding)!;
  await ownerPage.evaluate((name) => {
    const w = window as any;
    w.channelCalls = 0;
    w.spy = new BroadcastChannel(`leasehold:${name}`);
    w.spy.onmessage = (event: MessageEvent<{ kind: string }>) => void (event.data.kind === 'call' && w.channelCalls++);
  }, name);
  const seqs = await forwarding.evaluate(async () => {
    const { db } = window as any;
    const out = [];
    for (let n = 0; n < 20; n++) out.push(await db.transport.publish('after', { n }));
    return out;
  });
  expect(new Set(seqs).size).toBe(20);
  expect(await ownerPage.evaluate(() => (window as any).channelCalls)).toBe(0);
});

test('the tab that started the link broker crashes while another owns the database: a tab opened later still gets a port', async ({ context }) => {
  test.setTimeout(60_000);
  const name = uniqueName('crash-broker-fwd');
  const open = async (db: string) => {
    const page = await context.newPage();
    await openLab(page);
    await openShared(page, db);
    return page;
  };
  // The broker starts in the first tab (for another database), which then forwards to the owner.
  const starter = await open(`${name}-other`);
  const owner = await open(name);
  await openShared(starter, name);
  await expect.poll(() => via(starter)).toBe('port');
  const cdp = await context.newCDPSession(starter);
  const crashed = new Promise((resolve) => starter.once('crash', resolve));
  void cdp.send('Page.crash').catch(() => undefined);
  await crashed;
  // The owner did not change; it registers with a new broker, where the later tab finds it.
  const later = await open(name);
  await expect.poll(() => via(later)).toBe('port');
  expect(await owner.evaluate(async () => (await (window as any).db.owner()).isThisTab)).toBe(true);
  const seq = await later.evaluate(() => (window as any).db.transport.publish('g', { n: 1 }));
  const claimed = await owner.evaluate(async () => {
    const { db } = window as any;
    const lease = await db.transport.claim('w', 60_000);
    await db.transport.ack(lease);
    return lease.seq;
  });
  expect(claimed).toBe(seq);
});
