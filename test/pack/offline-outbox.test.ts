/**
 * examples/offline-outbox, as a user runs it: copied out of the package installed from the
 * packed tarball, installed in its own folder, built with `vite build` and leasehold/vite, served
 * by its own `node server.mjs` (leasehold/receiver on better-sqlite3), used in Chromium with a
 * profile on disk (what users have; OPFS and the service worker's cache survive reloads and
 * crashes there). The network is cut with Playwright's `setOffline`.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../../scripts/pack.mjs';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';
import { addTask, createNote, edit, type ExampleServer, installExample, openTab, readText, row, SHIPPED, type StoredMutation, startServer, waitForText, watch } from './outbox-support.ts';
import { node } from './scratch.ts';

let app = '';
let files: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  const packed = inject('packed');
  files = packed.files;
  app = await installExample(packed.scratch, packed.tarball);
  const build = await node(app, ['node_modules/vite/bin/vite.js', 'build']);
  expect(build.code, build.stdout + build.stderr).toBe(0);
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function server(args: string[]): Promise<ExampleServer> {
  const started = await startServer(app, args);
  cleanups.push(() => started.stop());
  return started;
}

async function browser(url: string): Promise<BrowserContext> {
  const profile = mkdtempSync(join(app, 'profile-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: await findChromium(), args: chromiumArgs, baseURL: url });
  cleanups.push(() => context.close());
  // The blank first tab of a persistent context is not used.
  await Promise.all(context.pages().map((page) => page.close()));
  return context;
}

/** The reason of a create refused for its length (`--max-length 20`), as httpDelivery keeps it. */
const REFUSED = '422 Unprocessable Entity: text is longer than 20 characters';

/** Waits until the page's one word for its sync (syncState) is `word`. */
const waitForSync = (page: Page, word: string) => page.waitForSelector(`body[data-sync="${word}"]`, { timeout: 30_000 });

/** Polls `read` until the assertion holds, for up to 30 s. */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 50 });

/** Per record, `op text` of each mutation the server stored, in the order it stored them. */
function byEntity(mutations: StoredMutation[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of mutations) (out[m.entity] ??= []).push(`${m.op} ${m.text}`);
  return out;
}

/** Where in the server's arrival order the mutations of `entity` are. */
function arrivals(mutations: StoredMutation[], entity: string): number[] {
  return mutations.flatMap((m, i) => (m.entity === entity ? [i] : []));
}

/** Whether `version` is in the caret range `range` (`^0.2.0`: 0.2.x from 0.2.0 on; `^1.2.0`: 1.x from 1.2.0 on). */
function inCaret(range: string, version: string): boolean {
  const [want, have] = [/^\^(\d+)\.(\d+)\.(\d+)$/.exec(range), /^(\d+)\.(\d+)\.(\d+)$/.exec(version)].map((m) => m?.slice(1).map(Number));
  if (!want || !have) return false;
  const fixed = want[0] === 0 ? 2 : 1; // below 1.0 the minor is the breaking number
  return want.slice(0, fixed).every((n, i) => n === have[i]) && have.join('.').localeCompare(want.join('.'), undefined, { numeric: true }) >= 0;
}

describe('examples/offline-outbox', () => {
  it('ships in the package, whole and clean: a copy depends on leasehold by a range the package is in, and on the same sqlite-wasm and better-sqlite3 the repository tests', () => {
    const shipped = files.filter((f) => f.startsWith(`${SHIPPED}/`)).map((f) => f.slice(SHIPPED.length + 1));
    expect(shipped).toEqual(expect.arrayContaining(['README.md', 'package.json', 'server.mjs', 'index.html', 'vite.config.js', 'precache.js', 'service-worker.js', 'src/main.js', 'src/outbox.js', 'src/records.js']));
    // Nothing a run in the repository leaves behind (installs, builds, the server's data).
    expect(shipped.filter((f) => /^(node_modules|dist)\/|package-lock\.json$|\.(db|jsonl)$/.test(f))).toEqual([]);
    const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
    const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(inCaret(manifest.dependencies.leasehold!, root.version), `leasehold ${manifest.dependencies.leasehold} must take ${root.version}`).toBe(true);
    for (const dep of ['@sqlite.org/sqlite-wasm', 'better-sqlite3']) expect(manifest.dependencies[dep], dep).toBe(root.devDependencies[dep]);
    const installed = JSON.parse(readFileSync(join(app, 'node_modules/leasehold/package.json'), 'utf8')) as { version: string };
    expect(installed.version).toBe(root.version);
  });

  it('builds as copied: no path out of its folder, a service worker that precaches page, worker and wasm', () => {
    const sources = ['src/main.js', 'src/outbox.js', 'src/records.js', 'server.mjs', 'vite.config.js', 'precache.js', 'index.html'].map((f) => readFileSync(join(app, f), 'utf8'));
    for (const source of sources) expect(source).not.toMatch(/\.\.\/\.\.\/|\/src\/(index|browser)/);
    const assets = readdirSync(join(app, 'dist/assets'));
    const sw = readFileSync(join(app, 'dist/sw.js'), 'utf8');
    const precached = JSON.parse(/const PRECACHE = (\[.*\]);/.exec(sw)![1]!) as string[];
    expect(precached).toEqual(expect.arrayContaining(['./', './index.html', ...assets.map((f) => `./assets/${f}`)]));
    expect(assets.some((f) => f.endsWith('.wasm'))).toBe(true);
    expect(assets.some((f) => f.startsWith('host.worker'))).toBe(true);
  });

  it('its server (the receiver) applies a delivery once and answers a repeat from the receipt, applies a merged edit and not a stale one, refuses invalid mutations and ones out of order, answers outages, reports gaps, and keeps it all across a restart', async () => {
    const data = join(app, 'server-raw.db');
    let api = await server(['--port', '0', '--data', data, '--max-length', '10']);
    const origin = 'ab'.repeat(16);
    /** Delivers `body` as httpDelivery does: message number `n` of the origin's queue, at `revision`. */
    const deliver = async (n: number, body: unknown, { revision = 0, attempt = 1 } = {}) => {
      const headers = { 'idempotency-key': `"${origin}/mutations/${n}/${revision}"`, 'leasehold-low-water': '1', 'leasehold-attempt': String(attempt) };
      const response = await fetch(`${api.url}/api/outbox`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers });
      return [response.status, await response.json(), response.headers.get('leasehold-repeat')] as const;
    };
    const create = { id: 'm-1', op: 'create', entity: 'note-a1', text: 'hello', at: 1 };
    const update = { id: 'm-2', op: 'update', entity: 'note-b2', text: 'hi', at: 2 };
    const task = { id: 'm-3', op: 'create', entity: 'task-c3', note: 'note-b2', text: 'do it', at: 3 };
    // Out of order: an update of a note, or a task under a note, the server does not have.
    expect(await deliver(1, update)).toEqual([409, { error: 'there is no note-b2: its create has not arrived' }, null]);
    expect((await deliver(2, task))[0]).toBe(409);
    expect(await deliver(3, create, { attempt: 2 })).toEqual([201, { stored: true }, null]);
    // The same delivery again (an answer lost on its way back): the receipt's answer, nothing applied.
    expect(await deliver(3, create)).toEqual([201, { stored: true }, '1']);
    expect((await deliver(4, { ...create, id: 'm-4' }))[0]).toBe(409); // a second create of note-a1
    expect(await deliver(5, { ...create, id: 'm-5', text: 'far too long' })).toEqual([422, { error: 'text is longer than 10 characters' }, null]);
    expect((await deliver(6, { ...create, id: 'm-6', entity: '../etc' }))[0]).toBe(422);
    expect((await deliver(7, { ...create, id: '' }))[0]).toBe(422);
    expect((await deliver(8, { ...create, id: 'm-7', op: 'delete' }))[0]).toBe(422);
    expect((await deliver(9, '{not json'))[0]).toBe(400);
    // An outage: the next answers are a 503 and a 429, with the Retry-After asked for.
    await api.outage({ count: 1, retryAfter: 7 });
    await api.outage({ count: 1, status: 429 });
    const busy = await fetch(`${api.url}/api/outbox`, { method: 'POST', body: '{}', headers: { 'idempotency-key': `"${origin}/mutations/10/0"`, 'leasehold-low-water': '1' } });
    expect([busy.status, busy.headers.get('retry-after')]).toEqual([503, '7']);
    const limited = await fetch(`${api.url}/api/outbox`, { method: 'POST', body: '{}', headers: { 'idempotency-key': `"${origin}/mutations/10/0"`, 'leasehold-low-water': '1' } });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, null]);
    expect(await deliver(10, { ...create, id: 'm-8', entity: 'note-b2' })).toEqual([201, { stored: true }, null]);
    expect(await deliver(11, update)).toEqual([201, { stored: true }, null]);
    // An edit merged into a queued one is a new revision of the same number: new content, applied.
    expect(await deliver(11, { ...update, id: 'm-9', text: 'hi again' }, { revision: 1 })).toEqual([201, { stored: true }, null]);
    // The late request of a lease that was lost, with the older content: never applied over the newer.
    expect(await deliver(11, update)).toEqual([201, { stored: true }, 'stale']);
    expect(await deliver(12, task)).toEqual([201, { stored: true }, null]);
    const state = await api.state();
    expect(state).toMatchObject({ mutations: [{ ...create, attempt: 2, origin }, { id: 'm-8' }, { ...update, attempt: 1 }, { id: 'm-9', text: 'hi again' }, task], duplicates: 2, rejected: 8, unavailable: 2 });
    // Number 9 (the body that was not JSON) is the one never received; the outage answers received nothing.
    expect(await api.gaps(origin)).toEqual({ origin, lost: false, queues: [{ queue: 'mutations', received: 11, highest: 12, lowWater: 1, removed: [], stillToCome: [[9, 9]], lost: [] }] });
    expect(await api.gaps('cd'.repeat(16))).toBeNull();

    await api.stop();
    api = await server(['--port', '0', '--data', data]);
    expect((await api.state()).mutations.map((m) => m.id)).toEqual(['m-1', 'm-8', 'm-2', 'm-9', 'm-3']);
    expect(await deliver(3, create)).toEqual([201, { stored: true }, '1']); // the receipt outlived the restart
    expect((await deliver(13, { ...update, id: 'm-10' }))[0]).toBe(201); // it still knows note-b2
  });

  it('offline: 5 notes created and edited 35 times across a reload and a crash of the owner tab, two tabs open — one pending edit per note; back online, the server gets each create and the last edit once, in order', async () => {
    const api = await server(['--port', '0', '--data', join(app, 'server-run.db')]);
    const context = await browser(api.url);
    const errors: string[] = [];
    let a = await openTab(context, errors);
    let b = await openTab(context, errors);
    expect(await readText(a, 'opened')).toBe('new');
    await poll(() => readText(b, 'opened')).toBe('existing');

    await waitForSync(a, 'delivered');
    await context.setOffline(true);
    await waitForSync(a, 'offline');
    expect(await readText(a, 'sync')).toBe('offline: changes are kept in this browser (the browser is offline); sent when the network is back');
    const notes: string[] = [];
    for (let i = 1; i <= 5; i++) notes.push(await createNote(a, `note ${i}`));
    const last: Record<string, string> = {};
    let n = 0;
    const editNote = async (page: Page) => {
      n += 1;
      const note = notes[(n * 3 + (n >> 3)) % 5]!;
      const text = `edit ${n} of ${note}`;
      await edit(page, note, text);
      last[note] = text;
    };
    for (let i = 0; i < 25; i++) await editNote(a);
    // Typing offline leaves one pending edit per note: 5 creates and 5 edits, whatever the count.
    await waitForText(b, 'pending-total', '10');

    // A reload while offline: the page comes from the service worker's cache, the edits from OPFS.
    const reloaded = await a.reload();
    expect(reloaded?.fromServiceWorker()).toBe(true);
    await a.waitForSelector('body[data-ready="true"]');
    await waitForText(a, 'pending-total', '10');
    expect(await row(a, notes[0]!).getByTestId('text').inputValue()).toBe(last[notes[0]!]); // the local copy, from localStorage
    for (let i = 0; i < 10; i++) await editNote(i % 2 === 0 ? a : b);
    await waitForText(a, 'pending-total', '10');
    for (const note of notes) await poll(() => row(a, note).getByTestId('pending').textContent()).toBe('2');

    // Crash the tab that owns the database file (its renderer, page and host worker die at once).
    const owners = await Promise.all([a, b].map((page) => page.evaluate(() => document.body.dataset.owner)));
    expect(owners.sort()).toEqual(['other-tab', 'this-tab']);
    const owner = owners[0] === 'this-tab' ? a : b;
    const crashed = owner.waitForEvent('crash');
    void (await context.newCDPSession(owner)).send('Page.crash').catch(() => undefined);
    await crashed;
    await owner.close();
    const survivor = owner === a ? b : a;
    const reopened = await context.newPage();
    watch(reopened, errors);
    expect((await reopened.goto('/'))?.fromServiceWorker()).toBe(true);
    await reopened.waitForSelector('body[data-ready="true"]');
    [a, b] = [survivor, reopened];
    await waitForText(a, 'pending-total', '10');
    await waitForText(b, 'pending-total', '10');
    // Nothing left the browser while it was offline.
    expect((await api.state()).mutations).toEqual([]);

    await context.setOffline(false);
    await expect.poll(async () => (await api.state()).mutations.length, { timeout: 60_000, interval: 100 }).toBe(10);
    await waitForText(a, 'pending-total', '0');
    await waitForText(b, 'pending-total', '0');
    for (const page of [a, b]) await waitForSync(page, 'delivered');

    const state = await api.state();
    expect(new Set(state.mutations.map((m) => m.id)).size).toBe(10);
    // Per note, in order: its create, then one edit with the last text typed.
    expect(byEntity(state.mutations)).toEqual(Object.fromEntries(notes.map((note, i) => [note, [`create note ${i + 1}`, `update ${last[note]}`]])));
    // No delivery was repeated (the receiver would have answered from a receipt), none refused.
    expect({ duplicates: state.duplicates, rejected: state.rejected }).toEqual({ duplicates: 0, rejected: 0 });
    // Offline, every try was a release (no attempt spent); only the crash can have cost one: a
    // message the crashed tab held (between a claim and its release) comes back as attempt 2
    // once that lease runs out. On a loaded machine that was each note's create.
    for (const m of state.mutations) expect(m.attempt, m.id).toBeOneOf([1, 2]);
    // Both open tabs sent; between them, each mutation exactly once.
    const sentBy = await Promise.all([a, b].map(async (page) => Number(await readText(page, 'sent-total'))));
    expect(sentBy[0]! + sentBy[1]!).toBe(10);
    expect(await readText(a, 'dead-total')).toBe('0');
    expect(errors).toEqual([]);
  });

  /**
   * A note whose create the server refuses (its text is too long for today's server), two edits
   * of it, a task under it, and after them a note that is fine. Returns once the fine note is at
   * the server: by then the consumer had every chance to send what the hold keeps back.
   */
  async function refusedCreate(page: Page, api: ExampleServer) {
    const long = 'a note too long for the server of today';
    const note = await createNote(page, long);
    await waitForText(page, 'held-total', '1');
    await poll(() => row(page, note).getByTestId('held').textContent()).toContain(`held: the server refused its create (${REFUSED})`);
    await waitForSync(page, 'held');
    await edit(page, note, 'first edit');
    await edit(page, note, 'second edit');
    const task = await addTask(page, note, 'a task');
    await poll(() => row(page, task, true).getByTestId('task-state').textContent()).toBe('waits for its note to reach the server');
    const fine = await createNote(page, 'fine');
    await expect.poll(async () => byEntity((await api.state()).mutations), { timeout: 30_000, interval: 100 }).toEqual({ [fine]: ['create fine'] });
    // Held: the edits (merged into one) wait behind the dead letter; nothing of the note went out.
    await poll(() => row(page, note).getByTestId('pending').textContent()).toBe('1');
    expect(await readText(page, 'dead-total')).toBe('1');
    expect(await page.getByTestId('dead-letter').textContent()).toContain(`${note}: create “${long.slice(0, 40)}”: ${REFUSED}`);
    expect((await api.state()).rejected).toBe(1); // refused once, at once: no retries, no 409 for the edits or the task
    return { note, task, long };
  }

  it('a create the server refuses holds its note: its edits and a task under it wait; after the server is fixed, Retry sends the create, then the edit and the task', async () => {
    const data = join(app, 'server-retry.db');
    let api = await server(['--port', '0', '--data', data, '--max-length', '20']);
    const context = await browser(api.url);
    const errors: string[] = [];
    const page = await openTab(context, errors);
    const { note, task, long } = await refusedCreate(page, api);

    // The fix: the server is deployed again with a larger limit (same port, same data file).
    await api.stop();
    api = await server(['--port', String(api.port), '--data', data, '--max-length', '140']);
    await row(page, note).getByTestId('retry').click();
    await expect.poll(async () => (await api.state()).mutations.length, { timeout: 30_000, interval: 100 }).toBe(4);
    const { mutations, rejected } = await api.state();
    expect(byEntity(mutations)).toMatchObject({ [note]: [`create ${long}`, 'update second edit'], [task]: ['create a task'] });
    // The task went after its note's create (its own record, but `after` the create).
    expect(arrivals(mutations, task)[0]).toBeGreaterThan(arrivals(mutations, note)[0]!);
    expect(rejected).toBe(0);
    await waitForText(page, 'pending-total', '0');
    await waitForText(page, 'dead-total', '0');
    await waitForText(page, 'held-total', '0');
    await poll(() => row(page, note).getByTestId('head').textContent()).toBe('in sync');
    expect(errors).toEqual([]);
  });

  it('a create the server refuses holds its note; Discard drops the note, its edits and its task, and nothing of it reaches the server', async () => {
    const api = await server(['--port', '0', '--data', join(app, 'server-discard.db'), '--max-length', '20']);
    const context = await browser(api.url);
    const errors: string[] = [];
    const page = await openTab(context, errors);
    const { note } = await refusedCreate(page, api);

    await row(page, note).getByTestId('discard').click();
    await poll(() => row(page, note).count()).toBe(0);
    await waitForText(page, 'pending-total', '0');
    await waitForText(page, 'dead-total', '0');
    await waitForText(page, 'held-total', '0');
    // A fence: a note made now reaches the server; by then the dropped ones would have too.
    const after = await createNote(page, 'after');
    await expect.poll(async () => (await api.state()).mutations.map((m) => m.entity), { timeout: 30_000, interval: 100 }).toContain(after);
    const state = await api.state();
    expect(state.mutations.map((m) => `${m.op} ${m.text}`)).toEqual(['create fine', 'create after']);
    expect(state.rejected).toBe(1);
    expect(errors).toEqual([]);
  });

  it('an outage spends no attempt: 503s and a 429 with Retry-After are waited out as asked, the server down for many more waits than maxAttempts — each edit arrives on attempt 1, no dead letter', async () => {
    const data = join(app, 'server-outage.db');
    let api = await server(['--port', '0', '--data', data]);
    const context = await browser(api.url);
    const errors: string[] = [];
    // A short, fixed wait after a try that got no answer, or a 503 without Retry-After (100 ms; the
    // page's own starts at 3 s and doubles).
    const page = await openTab(context, errors, '/?outage-ms=100');
    const note = await createNote(page, 'before the outage');
    await poll(async () => (await api.state()).mutations.length).toBe(1);

    // Busy: two 503s asking for 1 s each, then a 429 asking for a time 5 s ahead (an HTTP date,
    // whole seconds: 4–5 s, so its wait outlasts the two 503s' by 2 s or more, time enough to read
    // the note's status during it on a loaded machine).
    await api.outage({ count: 2, retryAfter: 1 });
    await api.outage({ count: 1, status: 429, retryAfter: new Date(Date.now() + 5_000).toUTCString() });
    const editedAt = Date.now();
    await edit(page, note, 'while it is busy');
    // The page says why it waits and until when: the consumer's status, and the note's own.
    await waitForSync(page, 'retrying');
    expect(await readText(page, 'sync')).toMatch(/^the server is busy \((503 Service Unavailable|429 Too Many Requests): retry in \d+ ms\); (next try in \d+ s|trying again now)$/);
    await poll(() => row(page, note).getByTestId('head').textContent()).toMatch(/^not sent: 429 Too Many Requests: retry in \d+ ms; (next try in \d+ s|trying again now)$/);
    await poll(async () => (await api.state()).mutations.length).toBe(2);
    const busy = (await api.state()).mutations[1]!;
    expect(busy).toMatchObject({ op: 'update', entity: note, text: 'while it is busy', attempt: 1 });
    // Retry-After was honoured: the page's own wait (100 ms) would have sent it far sooner.
    expect(busy.receivedAt - editedAt).toBeGreaterThanOrEqual(2_000);
    expect((await api.state()).unavailable).toBe(3);

    // The server goes away (a deploy): fetch fails, the page stays "online", the outbox waits.
    await api.stop();
    const before = Number(await readText(page, 'retried'));
    await edit(page, note, 'during the outage');
    await waitForSync(page, 'offline');
    expect(await readText(page, 'sync')).toMatch(/^offline: changes are kept in this browser \(unreachable: .+\); (next try in \d+ s|trying again now)$/);
    // The database's maxAttempts is 5: three times as many waits, and still no dead letter.
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="retried"]')?.textContent) >= n, before + 15, { timeout: 30_000, polling: 50 });
    expect(await readText(page, 'dead-total')).toBe('0');
    await poll(() => row(page, note).getByTestId('pending').textContent()).toBe('1');

    api = await server(['--port', String(api.port), '--data', data]);
    await poll(async () => (await api.state()).mutations.length).toBe(3);
    expect((await api.state()).mutations[2]).toMatchObject({ op: 'update', text: 'during the outage', attempt: 1 });
    await waitForText(page, 'pending-total', '0');
    await waitForSync(page, 'delivered');
    expect(await readText(page, 'dead-total')).toBe('0');
    expect(errors).toEqual([]);
  });

  it('a database that vanished (OPFS cleared) is reported as lost on the page, not shown as an empty outbox, and the server names the changes it lost', async () => {
    const api = await server(['--port', '0', '--max-length', '20']);
    const context = await browser(api.url);
    const errors: string[] = [];
    let page = await openTab(context, errors);
    expect(await readText(page, 'opened')).toBe('new');
    expect(await page.getByTestId('lost').isHidden()).toBe(true);
    // Counters 1 (the refused create: a dead letter), 2 (its note's edits, merged: held), 3 (a
    // task waiting for that create) and 4 (a note that reached the server, its lease's low-water
    // mark 2): the server got 1 and 4, and knows 2–3 are still to come.
    await refusedCreate(page, api);
    const { origin } = (await api.state()).mutations[0]!;
    expect(await api.gaps(origin)).toEqual({ origin, lost: false, queues: [{ queue: 'mutations', received: 2, highest: 4, lowWater: 2, removed: [], stillToCome: [[2, 3]], lost: [] }] });
    // The page asks the receiver the same of its own database.
    await page.getByTestId('check-gaps').click();
    await waitForText(page, 'gaps', 'received 2 (up to #4); still to come: #2–3; removed here on purpose: none');
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    expect(await readText(page, 'opened')).toBe('existing');
    await page.close();

    // With no tab of the app open, clear the origin private file system from a page of the origin that is not the app.
    const cleaner = await context.newPage();
    await cleaner.goto('/api/mutations');
    const removed = await cleaner.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const names: string[] = [];
      for await (const name of (root as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
      // The closed tab's database worker may take a moment to let go of its files.
      for (let tries = 0; ; tries++) {
        try {
          for (const name of names) await root.removeEntry(name, { recursive: true }).catch((error: unknown) => (error as DOMException).name === 'NotFoundError' || Promise.reject(error));
          return names;
        } catch (error) {
          if (tries === 50) throw error;
          await new Promise((wake) => setTimeout(wake, 100));
        }
      }
    });
    expect(removed.length).toBeGreaterThan(0);
    await cleaner.close();

    page = await openTab(context, errors);
    expect(await readText(page, 'opened')).toBe('lost');
    expect(await page.getByTestId('lost').isVisible()).toBe(true);
    // The page told the server which database it lost: what was still to come is lost.
    await waitForText(page, 'lost-report', 'The server never received changes #2–3 of the lost database.');
    expect(await api.gaps(origin)).toEqual({ origin, lost: true, queues: [{ queue: 'mutations', received: 2, highest: 4, lowWater: 2, removed: [], stillToCome: [], lost: [[2, 3]] }] });
    // The new database is a new origin: its first change is number 1 again.
    const fresh = await createNote(page, 'again');
    await expect.poll(async () => (await api.state()).mutations.find((m) => m.entity === fresh)?.origin, { timeout: 30_000, interval: 100 }).toMatch(/^[0-9a-f]{32}$/);
    const renewed = (await api.state()).mutations.find((m) => m.entity === fresh)!.origin;
    expect(renewed).not.toBe(origin);
    expect(await api.gaps(renewed)).toEqual({ origin: renewed, lost: false, queues: [{ queue: 'mutations', received: 1, highest: 1, lowWater: 1, removed: [], stillToCome: [], lost: [] }] });
    expect(errors).toEqual([]);
  });
});
