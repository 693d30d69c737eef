/**
 * examples/offline-outbox, as a user runs it: installed from the packed tarball in a scratch
 * folder, built with `vite build` and leasehold/vite, served by its own `node server.mjs`, used
 * in Chromium with a profile on disk (what users have; OPFS and the service worker's cache
 * survive reloads and crashes there). The network is cut with Playwright's `setOffline`.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chromiumArgs, findChromium } from '../../scripts/chromium.mjs';
import { edit, EXAMPLE, type ExampleServer, installExample, openTab, readText, startServer, waitForText, watch } from './outbox-support.ts';
import { node } from './scratch.ts';

let app = '';
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  const { scratch, tarball } = inject('packed');
  app = await installExample(scratch, tarball);
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

/** Per note, the texts the server stored, in the order it stored them. */
function byEntity(mutations: { entity: string; text: string }[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of mutations) (out[m.entity] ??= []).push(m.text);
  return out;
}

describe('examples/offline-outbox', () => {
  it('builds from the package as published: no path into the repository, a service worker that precaches page, worker and wasm', () => {
    const sources = ['src/main.js', 'src/outbox.js', 'vite.config.js', 'precache.js', 'index.html'].map((f) => readFileSync(join(EXAMPLE, f), 'utf8'));
    for (const source of sources) expect(source).not.toMatch(/\.\.\/\.\.\/|\/src\/(index|browser)/);
    const assets = readdirSync(join(app, 'dist/assets'));
    const sw = readFileSync(join(app, 'dist/sw.js'), 'utf8');
    const precached = JSON.parse(/const PRECACHE = (\[.*\]);/.exec(sw)![1]!) as string[];
    expect(precached).toEqual(expect.arrayContaining(['./', './index.html', ...assets.map((f) => `./assets/${f}`)]));
    expect(assets.some((f) => f.endsWith('.wasm'))).toBe(true);
    expect(assets.some((f) => f.startsWith('host.worker'))).toBe(true);
  });

  it('its server stores a mutation once by id, refuses invalid ones, and keeps what it stored across a restart', async () => {
    const data = join(app, 'mutations-server.jsonl');
    let api = await server(['--port', '0', '--data', data, '--max-length', '10']);
    const post = (body: string) => fetch(`${api.url}/api/mutations`, { method: 'POST', body }).then(async (r) => [r.status, await r.json()] as const);
    const m = { id: 'm-1', entity: 'note-1', text: 'hello', at: 1 };
    expect(await post(JSON.stringify(m))).toEqual([201, { stored: true }]);
    expect(await post(JSON.stringify({ ...m, text: 'changed' }))).toEqual([200, { stored: false, duplicate: true }]);
    expect((await post(JSON.stringify({ ...m, id: 'm-2', text: 'far too long' })))[0]).toBe(422);
    expect((await post(JSON.stringify({ ...m, id: 'm-3', entity: '../etc' })))[0]).toBe(422);
    expect((await post(JSON.stringify({ ...m, id: '' })))[0]).toBe(422);
    expect((await post('{not json'))[0]).toBe(400);
    expect(await api.state()).toMatchObject({ mutations: [m], duplicates: 1, rejected: 3 });
    await api.stop();
    api = await server(['--port', '0', '--data', data]);
    expect((await api.state()).mutations).toMatchObject([m]);
    expect(await post(JSON.stringify(m))).toEqual([200, { stored: false, duplicate: true }]);
  });

  it('offline: 40 edits of 5 notes across a reload and a crash of the owner tab, two tabs open — back online, the server gets each once, in order per note', async () => {
    const api = await server(['--port', '0', '--data', join(app, 'mutations-run.jsonl')]);
    const context = await browser(api.url);
    const errors: string[] = [];
    let a = await openTab(context, errors);
    let b = await openTab(context, errors);
    const expected: Record<string, string[]> = {};
    let n = 0;
    const editNote = async (page: Page) => {
      n += 1;
      const entity = `note-${1 + ((n * 3 + (n >> 3)) % 5)}`;
      const text = `edit ${n} of ${entity}`;
      await edit(page, entity, text);
      (expected[entity] ??= []).push(text);
    };

    await context.setOffline(true);
    for (let i = 0; i < 30; i++) await editNote(a);
    await waitForText(b, 'pending-total', '30');

    // A reload while offline: the page comes from the service worker's cache, the edits from OPFS.
    const reloaded = await a.reload();
    expect(reloaded?.fromServiceWorker()).toBe(true);
    await a.waitForSelector('body[data-ready="true"]');
    await waitForText(a, 'pending-total', '30');
    for (let i = 0; i < 10; i++) await editNote(i % 2 === 0 ? a : b);
    await waitForText(a, 'pending-total', '40');

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
    await waitForText(a, 'pending-total', '40');
    await waitForText(b, 'pending-total', '40');
    // Nothing left the browser while it was offline.
    expect((await api.state()).mutations).toEqual([]);

    await context.setOffline(false);
    await expect.poll(async () => (await api.state()).mutations.length, { timeout: 60_000, interval: 100 }).toBe(40);
    await waitForText(a, 'pending-total', '0');
    await waitForText(b, 'pending-total', '0');

    const state = await api.state();
    expect(new Set(state.mutations.map((m) => m.id)).size).toBe(40);
    expect(byEntity(state.mutations)).toEqual(expected);
    expect(Object.keys(expected)).toHaveLength(5);
    // No delivery was repeated (the server would have answered 200, not 201) and none refused.
    expect({ duplicates: state.duplicates, rejected: state.rejected }).toEqual({ duplicates: 0, rejected: 0 });
    // Both open tabs sent; between them, each mutation exactly once.
    const sentBy = await Promise.all([a, b].map(async (page) => Number(await readText(page, 'sent-total'))));
    expect(sentBy[0]! + sentBy[1]!).toBe(40);
    expect(await readText(a, 'dead-total')).toBe('0');
    expect(errors).toEqual([]);
  });

  it('a mutation the server refuses becomes a dead letter, its note carries on, and after the server is fixed a redrive delivers it', async () => {
    const data = join(app, 'mutations-refused.jsonl');
    let api = await server(['--port', '0', '--data', data, '--max-length', '20']);
    const context = await browser(api.url);
    const errors: string[] = [];
    const page = await openTab(context, errors);
    const long = 'a note too long for the server of today';
    await edit(page, 'note-2', 'before');
    await edit(page, 'note-2', long);
    await edit(page, 'note-2', 'after');

    // 5 refusals (back-off 0.25 s, 0.5 s, 1 s, 2 s, 2 s), then a dead letter; 'after' goes next.
    await waitForText(page, 'dead-total', '1', 60_000);
    await waitForText(page, 'pending-total', '0');
    expect(byEntity((await api.state()).mutations)).toEqual({ 'note-2': ['before', 'after'] });
    expect((await api.state()).rejected).toBe(5);
    expect(await page.getByTestId('dead-letter').textContent()).toContain(`note-2: “${long}”, refused 5 times`);

    // The fix: the server is deployed again with a larger limit (same port, same data file).
    await api.stop();
    api = await server(['--port', String(api.port), '--data', data, '--max-length', '140']);
    await page.getByTestId('redrive').click();
    await waitForText(page, 'dead-total', '0');
    await expect.poll(async () => byEntity((await api.state()).mutations), { timeout: 30_000, interval: 100 }).toEqual({ 'note-2': ['before', 'after', long] });
    await waitForText(page, 'pending-total', '0');
    expect(errors).toEqual([]);
  });
});
