/**
 * leasehold/react in a real browser with real React: pages built here (Vite's own API) render
 * usePendingCount, useGroupMessages and useDeadLetters over an in-memory transport, and the
 * counts follow publishes and acks; and a notes app as users would write one — an outbox in
 * leasehold/browser (OPFS, its host worker), delivered by leasehold/http to the real
 * leasehold/receiver served beside the page — whose useSyncStatus / useGroupStatus go from
 * offline to retrying to delivered, and to held for a note the server refuses. React is an
 * optional peer of leasehold and a devDependency of the project, so the tests always run.
 */
import { expect, test } from '@playwright/test';
import type { Plugin } from 'vite';
import { createReceiver, Refusal, sqliteReceipts, toNodeListener } from '../src/receiver/index.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { withPage } from './support/built-page.js';

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


// A notes app: each note's edits go to one outbox message (key 'save', merged), delivered by
// httpDelivery to /api/mutations; each note and the whole outbox show their status in words.
const NOTES_PAGE = `
import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { consume } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';
import { httpDelivery } from 'leasehold/http';
import { useGroupStatus, useSyncStatus } from 'leasehold/react';

const db = await openBrowserDatabase({ name: 'notes', onDeadLetter: 'hold' });
const outbox = db.queue('mutations');
const consumer = consume(outbox, httpDelivery({ url: '/api/mutations' }));

// One save at a time, in typing order, so the queued message always ends with the latest text.
let saving = Promise.resolve();
const save = (id, text) => (saving = saving.then(() => outbox.publish(id, { id, text }, { key: 'save', onDuplicate: 'merge' })));
window.saved = () => saving;

function Note({ id }) {
  const status = useGroupStatus(outbox, id);
  let text = status === null ? 'loading' : status.state;
  if (status?.heldBy) text += ' (' + (status.queued) + ' waiting): ' + status.heldBy.reason;
  else if (status?.lastError) text += ' (' + status.lastError + ')';
  return h('li', null,
    // onInput, not onChange: Playwright's fill in Firefox (WebDriver BiDi) sets the value through
    // its setter, which React's change tracking takes for its own write, so onChange never fires.
    h('textarea', { 'aria-label': id, onInput: (event) => void save(id, event.target.value) }),
    h('output', { id: id + '-status' }, text));
}

function Sync() {
  const { state, queue, consumer: own } = useSyncStatus(outbox, consumer);
  let text = state ?? 'loading';
  if (state === 'offline' || state === 'retrying') text += ': ' + queue?.queued + ' pending, ' + own.lastError + ', next try at ' + own.nextTryAt;
  if (state === 'held') text += ': ' + queue.held.map((held) => held.groupId + ' ' + held.reason).join('; ');
  return h('p', { id: 'sync' }, text);
}

createRoot(document.getElementById('root')).render(h(StrictMode, null, h('main', null,
  h(Sync), h('ul', null, ['note-1', 'note-2', 'note-3'].map((id) => h(Note, { key: id, id }))))));
`;

test('a notes app shows offline, retrying, delivered, and held for a note the receiver refuses', async ({ page, context }, testInfo) => {
  // The receiver's database: the app's notes table, written in the receipt's transaction, and a
  // log of every apply, which tells an edit applied twice (or an intermediate text) from one.
  const serverDb = await openBetterSqliteDatabase(testInfo.outputPath('server.db'));
  serverDb.exec('CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL); CREATE TABLE applied (id TEXT NOT NULL, text TEXT NOT NULL)');
  const saveNote = serverDb.prepare('INSERT INTO notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text');
  const logApply = serverDb.prepare('INSERT INTO applied (id, text) VALUES (?, ?)');
  const receiver = createReceiver({
    store: sqliteReceipts(serverDb),
    apply(note: { id: string; text: string }) {
      if (note.text.trim() === '') throw new Refusal('a note needs some text');
      saveNote.run(note.id, note.text);
      logApply.run(note.id, note.text);
    },
  });
  const listener = toNodeListener(receiver.handle);
  // The server's own outage (maintenance, overload): the receiver is not reached while it lasts.
  const server = { down: false, outageAnswers: 0 };
  const api: Plugin = {
    name: 'notes-api',
    configurePreviewServer(preview) {
      preview.middlewares.use('/api/mutations', (request, response) => {
        if (!server.down) return listener(request, response);
        server.outageAnswers += 1;
        response.writeHead(503, { 'retry-after': '2', 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'down for maintenance' }));
      });
    },
  };
  const notes = () => serverDb.prepare('SELECT id, text FROM notes ORDER BY id').all();
  const applied = () => serverDb.prepare('SELECT id, text FROM applied ORDER BY rowid').all();
  const sync = page.locator('#sync');
  const status = (id: string) => page.locator(`#${id}-status`);

  try {
    await withPage(page, NOTES_PAGE, async () => {
      await expect(sync).toHaveText('delivered');

      // Offline: the first save finds no network; the edits after it merge into the queued
      // messages (one per note), landing while the consumer waits out httpDelivery's retryMs
      // (5 s), when no message is under a lease (a leased one is never changed).
      await context.setOffline(true);
      await page.getByLabel('note-1').fill('Shopping');
      await expect(sync).toHaveText(/^offline: 1 pending, unreachable: .+, next try at \d+$/);
      await page.getByLabel('note-1').fill('Shopping: milk');
      await page.getByLabel('note-2').fill('Call Ann');
      await page.getByLabel('note-2').fill('Call Ann at 5');
      await page.evaluate(() => (window as any).saved());
      await expect(sync).toHaveText(/^offline: 2 pending, unreachable: .+, next try at \d+$/);
      await expect(status('note-1')).toHaveText(/^retrying \(unreachable: .+\)$/);

      // Back online, but the server is down: it answers 503 with Retry-After.
      server.down = true;
      const online = Date.now();
      await context.setOffline(false);
      await expect(sync).toHaveText(/^retrying: 2 pending, 503 Service Unavailable: retry in 2000 ms, next try at \d+$/);
      const nextTryAt = Number((await sync.textContent())!.split(' ').at(-1));
      expect(nextTryAt).toBeGreaterThan(online);
      expect(nextTryAt).toBeLessThanOrEqual(Date.now() + 2_000);
      // The note the consumer tried shows the server's answer; the other still waits its turn.
      await expect(page.getByText(/^retrying \(503 Service Unavailable: retry in 2000 ms\)$/)).not.toHaveCount(0);
      expect(notes()).toEqual([]);

      // The server is back: each note's latest text, applied once; no intermediate text sent.
      server.down = false;
      await expect(sync).toHaveText('delivered');
      await expect(status('note-1')).toHaveText('delivered');
      await expect(status('note-2')).toHaveText('delivered');
      expect(server.outageAnswers).toBeGreaterThan(0);
      expect(notes()).toEqual([{ id: 'note-1', text: 'Shopping: milk' }, { id: 'note-2', text: 'Call Ann at 5' }]);
      expect(applied()).toEqual(notes());

      // A note the receiver refuses (422) holds its group with the server's reason; a later edit
      // of it waits behind the refusal, while the other notes go on.
      await page.getByLabel('note-3').fill('   ');
      const reason = '422 Unprocessable Entity: a note needs some text';
      await expect(status('note-3')).toHaveText(`held (0 waiting): ${reason}`);
      await expect(sync).toHaveText(`held: note-3 ${reason}`);
      await page.getByLabel('note-3').fill('Stamps');
      await page.getByLabel('note-1').fill('Shopping: milk, eggs');
      await expect.poll(notes).toEqual([{ id: 'note-1', text: 'Shopping: milk, eggs' }, { id: 'note-2', text: 'Call Ann at 5' }]);
      await expect(status('note-1')).toHaveText('delivered');
      await expect(status('note-3')).toHaveText(`held (1 waiting): ${reason}`);
      await expect(sync).toHaveText(`held: note-3 ${reason}`);
      expect(applied()).toEqual([{ id: 'note-1', text: 'Shopping: milk' }, { id: 'note-2', text: 'Call Ann at 5' }, { id: 'note-1', text: 'Shopping: milk, eggs' }]);
    }, [api]);
  } finally {
    serverDb.close();
  }
});
