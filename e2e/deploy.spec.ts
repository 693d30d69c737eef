/**
 * Two builds of one app on one origin, as after a deploy while tabs stay open: this tree (the
 * "old" build) and the same tree with one more schema step (the "new" build, made here by
 * resolving the table migrations to a list with one more entry). Both are real Vite builds
 * served from one site, each in its own folder. In Chromium and Firefox.
 */
import { expect, type Page, test, type TestInfo } from '@playwright/test';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withBuilds } from './support/built-page.js';
import { checkRun, exposeRecorder, type Record, startConsumer } from './support/consumers.js';
import { uniqueName } from './support/lab.js';

const PAGE = `
import * as leasehold from 'leasehold/browser';
window.leasehold = leasehold;
window.ready = true;
`;

/** The table migrations of this tree plus one: what a later release of leasehold would ship. */
function newerTables(path: string): string {
  const tables = fileURLToPath(new URL('../src/sqlite/sql/tables.ts', import.meta.url));
  writeFileSync(
    path,
    `export * from ${JSON.stringify(tables)};\n` +
      `import { CORE_TABLES as released } from ${JSON.stringify(tables)};\n` +
      "export const CORE_TABLES = [...released, 'CREATE TABLE lh_next_release (id INTEGER PRIMARY KEY)'];\n",
  );
  return path;
}

async function openTab(page: Page, url: string, name: string, build?: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (window as any).ready === true);
  await page.evaluate(async ({ name, build }) => {
    const w = window as any;
    w.owners = [];
    w.outdated = [];
    addEventListener('leasehold:outdated', (event) => w.outdated.push({ event: (event as CustomEvent).detail }));
    w.db = await w.leasehold.openBrowserDatabase({ name, ...(build ? { build } : {}) });
    w.db.onOwnerChange((owner: unknown) => w.owners.push(owner));
    w.db.onOutdated((detail: unknown) => w.outdated.push({ listener: detail }));
  }, { name, build });
}

const owner = (page: Page) => page.evaluate(() => (window as any).db.owner()) as Promise<{ ownerId: string | null; isThisTab: boolean }>;
/** Publishes and says how it settled: the seq, or the error's name and code. */
const publish = (page: Page, event: unknown) =>
  page.evaluate(
    (event) =>
      (window as any).db.transport.publish('g', event).then(
        (seq: number) => ({ seq }),
        (error: { name: string; code?: string }) => ({ error: error.name, code: error.code }),
      ),
    event,
  ) as Promise<{ seq?: number; error?: string; code?: string }>;

/** This tree at `<url>old/` and the newer release at `<url>new/`, one site. */
function withOldAndNew(testInfo: TestInfo, body: (url: string) => Promise<void>): Promise<void> {
  const aliases = [{ find: /^\.\/sql\/tables\.js$/, replacement: newerTables(testInfo.outputPath('newer-tables.ts')) }];
  return withBuilds({ old: { source: PAGE }, new: { source: PAGE, aliases } }, body);
}

test('new tab first, old tab second: when the new tab closes the old one never owns, says SCHEMA_TOO_NEW, and the next new tab owns', async ({ context }, testInfo) => {
  await withOldAndNew(testInfo, async (url) => {
    const name = uniqueName('deploy');
    const first = await context.newPage();
    await openTab(first, `${url}new/`, name);
    expect(await owner(first)).toMatchObject({ isThisTab: true });
    const old = await context.newPage();
    await openTab(old, `${url}old/`, name);
    // Forwarding to the newer build works: the wire is the same.
    expect(await owner(old)).toMatchObject({ isThisTab: false, ownerId: (await owner(first)).ownerId });
    expect(await publish(old, 'from-old')).toEqual({ seq: 1 });
    // It joined under a newer build: told so, and still served.
    expect(await old.evaluate(() => (window as any).db.outdated)).toBe(true);
    const origin = await first.evaluate(() => (window as any).db.origin as string);
    expect(await old.evaluate(() => (window as any).db.origin)).toBe(origin);

    await first.close();
    // The old tab is granted the lock, cannot open the newer schema, and lets the lock go: it
    // learns that no one owns the database (it never says it is the owner).
    await expect.poll(() => old.evaluate(() => (window as any).owners.at(-1))).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
    expect(await old.evaluate(() => (window as any).owners.some((o: { isThisTab: boolean }) => o.isThisTab))).toBe(false);
    // Its calls wait a few seconds for a tab that can open the database to take over; none
    // does, so they fail with the error that says what is wrong: the schema is newer.
    expect(await publish(old, 'no-owner')).toEqual({ error: 'SchemaTooNewError', code: 'SCHEMA_TOO_NEW' });

    // A new tab opens (the lock is free: the old tab does not hold it) and owns, with the data.
    const second = await context.newPage();
    await openTab(second, `${url}new/`, name);
    expect(await owner(second)).toMatchObject({ isThisTab: true });
    expect(await second.evaluate(() => (window as any).db.origin)).toBe(origin);
    // The old tab forwards to it again; nothing was lost or applied twice.
    await expect.poll(() => owner(old)).toMatchObject({ isThisTab: false, ownerId: (await owner(second)).ownerId });
    expect(await publish(old, 'after')).toEqual({ seq: 2 });
    const events = await second.evaluate(async () => {
      const snapshot = await (window as any).db.transport.inspect();
      return snapshot.groups.flatMap((g: { messages: { event: unknown }[] }) => g.messages.map((m) => m.event));
    });
    expect(events).toEqual(['from-old', 'after']);

    // The new tab closes as well: the old tab takes the lock once more, lets it go, and stays a tab that does not own.
    await second.close();
    await expect.poll(() => old.evaluate(() => (window as any).owners.at(-1))).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
    expect(await publish(old, 'alone')).toEqual({ error: 'SchemaTooNewError', code: 'SCHEMA_TOO_NEW' });
    await old.evaluate(() => (window as any).db.close());
  });
});

test('an old tab alone with a database a newer build wrote: its open fails with SCHEMA_TOO_NEW, and a new tab opens it after', async ({ context }, testInfo) => {
  await withOldAndNew(testInfo, async (url) => {
    const name = uniqueName('deploy-alone');
    const first = await context.newPage();
    await openTab(first, `${url}new/`, name);
    await publish(first, 'kept');
    await first.evaluate(() => (window as any).db.close());
    await first.close();
    const old = await context.newPage();
    await old.goto(`${url}old/`);
    await old.waitForFunction(() => (window as any).ready === true);
    const failed = await old.evaluate((name) =>
      (window as any).leasehold.openBrowserDatabase({ name }).then(
        () => 'opened',
        (error: { name: string; code?: string; message: string }) => ({ name: error.name, code: error.code, upgrade: /upgrade leasehold/i.test(error.message) }),
      ), name);
    expect(failed).toEqual({ name: 'SchemaTooNewError', code: 'SCHEMA_TOO_NEW', upgrade: true });
    const second = await context.newPage();
    await openTab(second, `${url}new/`, name);
    expect(await owner(second)).toMatchObject({ isThisTab: true });
    expect(await second.evaluate(async () => (await (window as any).db.transport.claim('w', 1000))?.event)).toBe('kept');
  });
});

test('two builds that claim one build id: the joining tab\'s open fails with a RangeError naming both, the owner carries on', async ({ context }, testInfo) => {
  await withOldAndNew(testInfo, async (url) => {
    const name = uniqueName('deploy-same-id');
    const old = await context.newPage();
    await openTab(old, `${url}old/`, name, 'release-7');
    const newer = await context.newPage();
    await newer.goto(`${url}new/`);
    await newer.waitForFunction(() => (window as any).ready === true);
    const failed = await newer.evaluate((name) =>
      (window as any).leasehold.openBrowserDatabase({ name, build: 'release-7' }).then(
        () => 'opened',
        (error: Error) => ({ name: error.name, message: error.message }),
      ), name);
    expect(failed).toMatchObject({ name: 'RangeError', message: expect.stringMatching(/options\.build "release-7" is announced by another tab.*Give each build its own id/) });
    expect(await owner(old)).toMatchObject({ isThisTab: true });
    expect(await publish(old, 'still')).toEqual({ seq: 1 });
    expect(await old.evaluate(() => (window as any).db.outdated)).toBe(false);
  });
});

test('old tab first, new tab second: the old one hands over once, the new one migrates and owns, the old one forwards and is told it is outdated', async ({ context }, testInfo) => {
  await withOldAndNew(testInfo, async (url) => {
    const name = uniqueName('deploy-handover');
    const old = await context.newPage();
    await openTab(old, `${url}old/`, name, 'v1');
    expect(await owner(old)).toMatchObject({ isThisTab: true });
    expect(await publish(old, 'before')).toEqual({ seq: 1 });
    const origin = await old.evaluate(() => (window as any).db.origin as string);
    // A lease the old tab holds across the handover.
    const lease = await old.evaluate(() => (window as any).db.transport.claim('w', 60_000));

    const newer = await context.newPage();
    await openTab(newer, `${url}new/`, name, 'v2');
    expect(await owner(newer)).toMatchObject({ isThisTab: true });
    expect(await newer.evaluate(() => (window as any).db.outdated)).toBe(false);
    const newerId = (await owner(newer)).ownerId;
    await expect.poll(() => owner(old)).toMatchObject({ isThisTab: false, ownerId: newerId });
    // Told once, by the listener and the event, with both builds named.
    const newest = { schema: expect.any(Number), host: expect.any(Number), protocol: expect.any(Number), build: 'v2' };
    await expect.poll(() => old.evaluate(() => (window as any).outdated)).toEqual([
      { listener: { name, build: 'v1', newer: newest } },
      { event: { name, build: 'v1', newer: newest } },
    ]);
    expect(await old.evaluate(() => (window as any).db.outdated)).toBe(true);
    // Ownership moved once: to the new tab (the old tab heard no other owner).
    const moves = await old.evaluate(() => (window as any).owners.filter((o: { ownerId: string | null }) => o.ownerId !== null).map((o: { ownerId: string }) => o.ownerId));
    expect(new Set(moves)).toEqual(new Set([newerId]));
    // The old tab keeps working through the new owner: its lease acks, its publishes land; one database, one origin.
    expect(await old.evaluate((lease) => (window as any).db.transport.ack(lease).then(() => 'acked'), lease)).toBe('acked');
    expect(await publish(old, 'after')).toEqual({ seq: 2 });
    expect(await newer.evaluate(() => (window as any).db.origin)).toBe(origin);
    expect(await newer.evaluate(async () => (await (window as any).db.transport.claim('w2', 1000))?.event)).toBe('after');
  });
});

test('four tabs of two builds opened and closed in turn while every tab publishes and consumes: the new build owns, nothing lost or acked twice', async ({ context }, testInfo) => {
  test.setTimeout(180_000);
  await withOldAndNew(testInfo, async (url) => {
    const name = uniqueName('deploy-churn');
    const records: Record[] = [];
    const published: { seq: number; groupId: string; n: number }[] = [];
    const builds = ['new', 'old', 'new', 'old'] as const;
    const pages: Page[] = [];
    let tabs = 0;
    const open = async (slot: number) => {
      const page = await context.newPage();
      const tab = tabs++;
      await exposeRecorder(page, tab, records);
      await openTab(page, `${url}${builds[slot]}/`, name, builds[slot]);
      await startConsumer(page, { visibilityMs: 1_500, workMs: 60, worker: `tab${tab}` });
      await page.evaluate(() => ((window as any).loops = [(window as any).consumerDone]));
      pages[slot] = page;
    };
    let n = 0;
    const publishFrom = async (page: Page, count: number) => {
      const sent = await page.evaluate(
        async ({ from, count }) => {
          const out = [];
          for (let n = from; n < from + count; n++) out.push({ seq: (await (window as any).db.transport.publish(`g${n % 8}`, { n })) as number, groupId: `g${n % 8}`, n });
          return out;
        },
        { from: n, count },
      );
      n += count;
      published.push(...sent);
    };
    /** The tab that owns the database, among the open ones, once ownership has settled. */
    const ownerSlot = async () => {
      const owns = await Promise.all(pages.map((page) => page.evaluate(async () => (await (window as any).db.owner()).isThisTab as boolean)));
      return owns.indexOf(true);
    };

    for (let slot = 0; slot < 4; slot++) await open(slot);
    await publishFrom(pages[1]!, 24);
    for (let step = 0; step < 8; step++) {
      // Whenever a tab of the new build is open, one of them owns the database.
      await expect.poll(ownerSlot).toBeGreaterThanOrEqual(0);
      expect(builds[await ownerSlot()]).toBe('new');
      const slot = step % 4;
      await pages[slot]!.close();
      // Every other tab's calls carry on across the close (an old tab's too: another new tab stays open).
      await publishFrom(pages[(slot + 1) % 4]!, 12);
      await open(slot);
    }
    await expect.poll(ownerSlot).toBeGreaterThanOrEqual(0);
    expect(builds[await ownerSlot()]).toBe('new');
    // Drain: a last consumer in each open tab, then every loop of every open tab ends without an error.
    for (const [slot, page] of pages.entries()) {
      await startConsumer(page, { visibilityMs: 1_500, workMs: 0, worker: `last${slot}` });
      await page.evaluate(() => (window as any).loops.push((window as any).consumerDone));
    }
    for (const page of pages) await page.evaluate(() => Promise.all((window as any).loops));
    expect(checkRun(records, published)).toEqual([]);
    // No tab of the old build ever owned the database (a new one was always open).
    for (const [slot, page] of pages.entries()) {
      if (builds[slot] === 'old') expect(await page.evaluate(() => (window as any).owners.some((o: { isThisTab: boolean }) => o.isThisTab))).toBe(false);
    }
  });
});
