/**
 * leasehold/react in a real browser with real React: pages built here (Vite's own API) render
 * usePendingCount, useGroupMessages and useDeadLetters over an in-memory transport, and the
 * counts follow publishes and acks; and useSyncStatus / useGroupStatus over a consumer, from
 * offline to delivered, and held for a refused record. React is an optional peer of leasehold and
 * a devDependency of the project, so the tests always run.
 */
import { expect, type Page, test } from '@playwright/test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, preview } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const PAGE = `
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { InMemoryTransport } from 'leasehold';
import { useDeadLetters, useGroupMessages, usePendingCount } from 'leasehold/react';

const transport = new InMemoryTransport();
window.transport = transport;

function App() {
  const pending = usePendingCount(transport);
  const inNote = usePendingCount(transport, 'note-1');
  const messages = useGroupMessages(transport, 'note-1');
  const { deadLetters, redrive } = useDeadLetters(transport);
  return h('main', null,
    h('p', { id: 'pending' }, pending === null ? 'loading' : pending + ' pending'),
    h('p', { id: 'note' }, String(inNote) + ' in note-1: ' + messages.map((m) => m.state).join(',')),
    h('ul', null, deadLetters.map((d) => h('li', { key: d.seq }, h('button', { id: 'redrive-' + d.seq, onClick: () => void redrive(d.seq) }, 'retry ' + d.groupId)))));
}
createRoot(document.getElementById('root')).render(h(StrictMode, null, h(App)));
`;

/** Builds `source` as a page's script, serves it on a free port, opens it in `page`, runs `body`. */
async function withPage(page: Page, source: string, body: () => Promise<void>): Promise<void> {
  // Inside the repository (.tmp/ is ignored), so the page's imports of react resolve to the project's own.
  mkdirSync(here('../.tmp'), { recursive: true });
  const dir = mkdtempSync(join(here('../.tmp'), 'react-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="./main.js"></script></body></html>\n');
  writeFileSync(join(dir, 'main.js'), source);
  const alias = { 'leasehold/react': here('../src/react/index.ts'), leasehold: here('../src/index.ts') };
  await build({ configFile: false, root: dir, logLevel: 'warn', resolve: { alias }, build: { outDir: join(dir, 'dist') } });
  const server = await preview({ configFile: false, root: dir, logLevel: 'warn', build: { outDir: join(dir, 'dist') }, preview: { port: 0, host: '127.0.0.1' } });
  try {
    await page.goto(server.resolvedUrls!.local[0]!);
    await body();
  } finally {
    await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
}

test('React hooks render pending counts that follow publishes and acks', async ({ page }) => {
  await withPage(page, PAGE, async () => {
    await expect(page.locator('#pending')).toHaveText('0 pending');
    await page.evaluate(async () => {
      const { transport } = window as any;
      await transport.publish('note-1', { text: 'a' });
      await transport.publish('note-1', { text: 'b' });
      await transport.publish('note-2', { text: 'c' });
    });
    await expect(page.locator('#pending')).toHaveText('3 pending');
    await expect(page.locator('#note')).toHaveText('2 in note-1: ready,ready');
    await page.evaluate(async () => {
      const { transport } = window as any;
      await transport.ack(await transport.claim('w', 60_000));
    });
    await expect(page.locator('#pending')).toHaveText('2 pending');
    await page.evaluate(async () => {
      const { transport } = window as any;
      await transport.reject(await transport.claim('w', 60_000), 'refused');
    });
    await expect(page.getByRole('button', { name: /retry/ })).toHaveCount(1);
    await page.getByRole('button', { name: /retry/ }).click();
    await expect(page.getByRole('button', { name: /retry/ })).toHaveCount(0);
    await expect(page.locator('#pending')).toHaveText('2 pending');
  });
});

// A consumer on a manual clock and scheduler (advance() fires what is due), whose handler is
// offline while `window.mode` says so and refuses an event whose text is 'bad'.
const STATUS_PAGE = `
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { consume, InMemoryTransport, ManualClock, RejectError, RetryLaterError } from 'leasehold';
import { useGroupStatus, useSyncStatus } from 'leasehold/react';

const clock = new ManualClock(1000);
const timers = new Set();
const scheduler = {
  setTimeout(callback, ms) { const timer = { due: clock.now() + ms, callback }; timers.add(timer); return timer; },
  clearTimeout(timer) { timers.delete(timer); },
};
window.advance = (ms) => {
  clock.advance(ms);
  for (const timer of [...timers]) if (timer.due <= clock.now()) { timers.delete(timer); timer.callback(); }
};
window.mode = 'ok';
const transport = new InMemoryTransport({ clock: clock.now, onDeadLetter: 'hold' });
window.transport = transport;
const consumer = consume(transport, async (event) => {
  if (window.mode === 'offline') throw new RetryLaterError({ afterMs: 5000, offline: true }, 'server unreachable');
  if (event.text === 'bad') throw new RejectError('HTTP 422: title is required');
}, { clock: clock.now, scheduler, idleMinMs: 60000, idleMaxMs: 60000 });

function Note({ id }) {
  const status = useGroupStatus(transport, id);
  if (status === null) return h('p', { id }, 'loading');
  const why = status.heldBy ? ' by ' + status.heldBy.seq + ': ' + status.heldBy.reason : status.lastError ? ' (' + status.lastError + ')' : '';
  return h('p', { id }, status.state + why);
}

function App() {
  const sync = useSyncStatus(transport, consumer);
  const own = sync.consumer;
  const detail = own && own.nextTryAt !== null ? ': ' + own.lastError + ', next try at ' + own.nextTryAt : '';
  return h('main', null,
    h('p', { id: 'sync' }, sync.state === null ? 'loading' : sync.state + detail),
    h(Note, { id: 'note-1' }),
    h(Note, { id: 'note-2' }));
}
createRoot(document.getElementById('root')).render(h(StrictMode, null, h(App)));
`;

test('useSyncStatus and useGroupStatus show offline, then delivered, and held for a refused record', async ({ page }) => {
  await withPage(page, STATUS_PAGE, async () => {
    await expect(page.locator('#sync')).toHaveText('delivered');
    await expect(page.locator('#note-1')).toHaveText('delivered');
    await page.evaluate(async () => {
      const w = window as any;
      w.mode = 'offline';
      await w.transport.publish('note-1', { text: 'hello' });
    });
    await expect(page.locator('#sync')).toHaveText('offline: server unreachable, next try at 6001');
    await expect(page.locator('#note-1')).toHaveText('retrying (server unreachable)');
    await page.evaluate(() => {
      const w = window as any;
      w.mode = 'ok';
      w.advance(5001);
    });
    await expect(page.locator('#sync')).toHaveText('delivered');
    await expect(page.locator('#note-1')).toHaveText('delivered');
    // A refused create holds its record: never shown as delivered.
    const seq = await page.evaluate(async () => (window as any).transport.publish('note-2', { text: 'bad' }) as Promise<number>);
    await expect(page.locator('#note-2')).toHaveText(`held by ${seq}: HTTP 422: title is required`);
    await expect(page.locator('#sync')).toHaveText('held');
    await expect(page.locator('#note-1')).toHaveText('delivered');
  });
});
