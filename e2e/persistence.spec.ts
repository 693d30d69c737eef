import { chromium, expect, test } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumArgs, findChromium } from '../scripts/chromium.mjs';
import { chromiumOnly, launchProfile } from './support/engines.js';
import { openDb, openLab, uniqueName } from './support/lab.js';

test('a reload keeps messages, executions, outbox and timers, and a lease taken before it runs out and is claimable', async ({ page }) => {
  const name = uniqueName('reload');
  await openLab(page);
  await openDb(page, name);
  const before = await page.evaluate(async () => {
    const { db } = window as any;
    await db.transport.publish('order-1', { type: 'placed' });
    await db.transport.publish('order-1', { type: 'paid' });
    await db.transport.publish('order-2', { type: 'placed' }, { priority: 3 });
    const lease = await db.transport.claim('w1', 5_000);
    const exe = { id: 'order-1', version: 0, status: 'placed' };
    await db.store.commit(exe, { emits: [{ targetId: 'billing', event: { charge: 42 } }], timers: [{ action: 'schedule', path: 'pay', fireAt: 60_000 }], trace: { step: 'placed' } });
    return { lease, version: exe.version };
  });
  expect(before.version).toBe(1);

  await page.reload();
  await expect(page.locator('#status')).toHaveText('ready');
  await openDb(page, name);
  const after = await page.evaluate(async () => {
    const w = window as any;
    const snapshot = await w.db.transport.inspect();
    w.now = 1_000 + 5_001; // past the lease taken before the reload
    return {
      groups: snapshot.groups.map((g: any) => [g.groupId, g.priority, g.messages.map((m: any) => [m.event.type, m.state])]),
      exe: await w.db.store.load('order-1'),
      outbox: await w.db.store.pendingOutbox(),
      timers: await w.db.store.dueTimers(1e12),
      trace: await w.db.store.readTrace('order-1'),
      reclaimed: await w.db.transport.claim('w2', 5_000),
    };
  });
  expect(after.groups).toEqual([
    ['order-2', 3, [['placed', 'ready']]],
    ['order-1', 0, [['placed', 'leased'], ['paid', 'ready']]],
  ]);
  expect(after.exe).toEqual({ id: 'order-1', version: 1, status: 'placed' });
  expect(after.outbox).toEqual([{ seq: 1, targetId: 'billing', event: { charge: 42 } }]);
  expect(after.timers).toEqual([{ executionId: 'order-1', path: 'pay', fireAt: 60_000 }]);
  expect(after.trace).toEqual([{ step: 'placed', index: 0 }]);
  // order-1 was claimed last, so the never-claimed order-2 comes first; the expired lease next.
  expect(after.reclaimed).toMatchObject({ groupId: 'order-2' });
  const second = await page.evaluate(() => (window as any).db.transport.claim('w2', 5_000));
  expect(second).toMatchObject({ seq: before.lease.seq, attempt: 2, workerId: 'w2' });
});

test('closing the page in the middle of a stream of commits, again and again, loses nothing acknowledged and leaves nothing half-written', async ({ context }) => {
  test.setTimeout(120_000);
  const name = uniqueName('crash');
  const acknowledged: number[] = [];
  for (let crash = 0; crash < 6; crash++) {
    const writer = await context.newPage();
    await openLab(writer);
    await openDb(writer, name);
    await writer.exposeFunction('acknowledged', (n: number) => void acknowledged.push(n));
    // Each round: publish message n and commit execution 'stream' to version n with one outbox
    // entry: after the crash, both must be there for every acknowledged n, and in step.
    await writer.evaluate(() => {
      const w = window as any;
      void (async () => {
        const exe = (await w.db.store.load('stream')) ?? { id: 'stream', version: 0, n: 0 };
        for (let n = exe.n + 1; ; n++) {
          await w.db.transport.publish('stream', { n });
          exe.n = n;
          await w.db.store.commit(exe, { emits: [{ targetId: 'sink', event: { n } }] });
          await w.acknowledged(n); // awaited: the test has heard of n before n + 1 starts
        }
      })();
    });
    const target = acknowledged.length + 5 + ((crash * 7) % 23);
    await expect.poll(() => acknowledged.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(target);
    await writer.close({ runBeforeUnload: false });
    const lastAcknowledged = Math.max(...acknowledged);

    const reader = await context.newPage();
    await openLab(reader);
    await openDb(reader, name);
    const found = await reader.evaluate(async () => {
      const { db } = window as any;
      const snapshot = await db.transport.inspect();
      const exe = await db.store.load('stream');
      const outbox = await db.store.pendingOutbox();
      return { published: snapshot.groups[0].messages.map((m: any) => m.event.n), exe, outbox: outbox.map((e: any) => e.event.n) };
    });
    await reader.close();
    // Every acknowledged call is there; at most the one in flight when the page died went further.
    expect(found.exe.n).toBeGreaterThanOrEqual(lastAcknowledged);
    expect(found.exe.n).toBeLessThanOrEqual(lastAcknowledged + 1);
    expect(found.exe.version).toBe(found.exe.n);
    // The outbox holds exactly one entry per committed version: no commit landed half.
    expect(found.outbox).toEqual(Array.from({ length: found.exe.n }, (_, i) => i + 1));
    // Every acknowledged publish is queued, in order. A publish in flight when a page died may
    // have landed without its commit, and the next writer publishes that n again: the only
    // repeats allowed, one per crash.
    const published: number[] = found.published;
    for (let n = 1; n <= lastAcknowledged; n++) expect(published).toContain(n);
    expect(published).toEqual([...published].sort((a, b) => a - b));
    expect(published.length - new Set(published).size).toBeLessThanOrEqual(crash);
    expect(Math.max(...published)).toBeLessThanOrEqual(found.exe.n + 1);
    // The next writer continues after what is there: the acknowledgement log follows the database.
    acknowledged.push(...Array.from({ length: found.exe.n - lastAcknowledged }, (_, i) => lastAcknowledged + i + 1));
  }
});

test('a browser restart with a persistent profile keeps the database', async ({ baseURL, browserName }) => {
  const profile = mkdtempSync(join(tmpdir(), 'leasehold-profile-'));
  const launch = () => launchProfile(browserName, profile, baseURL);
  try {
    let context = await launch();
    let page = context.pages()[0] ?? (await context.newPage());
    await openLab(page);
    await openDb(page, 'restart', { durability: 'full' });
    await page.evaluate(async () => {
      const { db } = window as any;
      await db.transport.publish('g', { kept: true });
      await db.store.save({ id: 'exe', version: 0, kept: true });
    });
    await context.close();

    context = await launch();
    page = context.pages()[0] ?? (await context.newPage());
    await openLab(page);
    await openDb(page, 'restart');
    const found = await page.evaluate(async () => {
      const { db } = window as any;
      return { snapshot: await db.transport.inspect(), exe: await db.store.load('exe') };
    });
    expect(found.snapshot.groups[0].messages[0].event).toEqual({ kept: true });
    expect(found.exe).toEqual({ id: 'exe', version: 1, kept: true });
    await context.close();
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});

test('a page that is not a secure context gets a clear error, not a hang', async ({ baseURL, browserName }) => {
  chromiumOnly(browserName, "--host-resolver-rules (a host name that reaches 127.0.0.1 without being localhost)");
  const executablePath = await findChromium();
  // insecure.test resolves to this machine, but it is not localhost: not a secure context.
  const browser = await chromium.launch({ executablePath, args: [...chromiumArgs, '--host-resolver-rules=MAP insecure.test 127.0.0.1'] });
  try {
    const page = await browser.newPage();
    await page.goto(baseURL!.replace('127.0.0.1', 'insecure.test') + '/lab.html');
    await expect(page.locator('#status')).toHaveText('ready');
    const outcome = await page.evaluate(async () => {
      const w = window as any;
      return {
        secure: window.isSecureContext,
        error: await w.leasehold.openBrowserDatabase({ name: 'insecure' }).then(
          () => null,
          (e: any) => ({ name: e.name, code: e.code, message: e.message, isLeasehold: e instanceof w.leasehold.LeaseholdError }),
        ),
      };
    });
    expect(outcome.secure).toBe(false);
    expect(outcome.error).toMatchObject({ name: 'StorageError', code: 'STORAGE_UNAVAILABLE', isLeasehold: true });
    expect(outcome.error.message).toMatch(/secure context/);
    // The in-memory database works anywhere.
    const memory = await page.evaluate(async () => {
      const db = await (window as any).leasehold.openBrowserDatabase({ name: 'insecure', storage: 'memory' });
      await db.transport.publish('g', 1);
      return (await db.transport.claim('w', 1000)).event;
    });
    expect(memory).toBe(1);
  } finally {
    await browser.close();
  }
});
