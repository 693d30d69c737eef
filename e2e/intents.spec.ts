/**
 * A note-taking page as users write one — an outbox in leasehold/browser (OPFS, its host
 * worker), delivered by leasehold/http to the real leasehold/receiver served beside the page —
 * typing into a note with a coalescing window, and a refused create discarded with what depends
 * on it. In Chromium and Firefox.
 */
import { expect, test } from '@playwright/test';
import type { Plugin } from 'vite';
import { createReceiver, Refusal, sqliteReceipts, toNodeListener } from '../src/receiver/index.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { withPage } from './support/built-page.js';

const PAGE = `
import { consume } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';
import { httpDelivery } from 'leasehold/http';

const db = await openBrowserDatabase({ name: 'intents', onDeadLetter: 'hold' });
const outbox = db.queue('mutations');
consume(outbox, httpDelivery({ url: '/api/mutations' }));

// Every keystroke publishes; the window keeps the edit back until the typing stops.
const typing = { key: 'edit', onDuplicate: 'merge', debounceMs: 500, maxWaitMs: 2000 };
let saving = Promise.resolve();
const input = document.createElement('textarea');
input.setAttribute('aria-label', 'note-1');
input.addEventListener('input', () => {
  const text = input.value;
  saving = saving.then(() => outbox.publish('note-1', { op: 'update', id: 'note-1', text }, typing));
});
document.body.append(input);

window.outbox = outbox;
window.saved = () => saving;
window.createNote = (id, text) => outbox.publish(id, { op: 'create', id, text }, { key: 'create' });
window.editNote = (id, text) => outbox.publish(id, { op: 'update', id, text }, typing);
window.addTask = (id, note, text) => outbox.publish(id, { op: 'create', id, note, text }, { key: 'create', after: { group: note } });
window.ready = true;
`;

interface Mutation {
  op: 'create' | 'update';
  id: string;
  note?: string;
  text: string;
}

test('typing coalesces into one or two updates; a refused create discarded with dependents sends nothing more of its note', async ({ page }, testInfo) => {
  const serverDb = await openBetterSqliteDatabase(testInfo.outputPath('server.db'));
  serverDb.exec('CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL); CREATE TABLE arrived (op TEXT NOT NULL, id TEXT NOT NULL, text TEXT NOT NULL)');
  const arrived = () => serverDb.prepare('SELECT op, id, text FROM arrived ORDER BY rowid').all() as { op: string; id: string; text: string }[];
  // Every apply, refused or not (a refusal rolls back what apply wrote in the receipt's transaction).
  const applies: { op: string; id: string; text: string }[] = [];
  const receiver = createReceiver({
    store: sqliteReceipts(serverDb),
    apply(m: Mutation) {
      applies.push({ op: m.op, id: m.id, text: m.text });
      serverDb.prepare('INSERT INTO arrived (op, id, text) VALUES (?, ?, ?)').run(m.op, m.id, m.text);
      if (m.op === 'create' && m.text === 'refuse me') throw new Refusal('not allowed');
      const note = m.note ?? m.id;
      if ((m.note !== undefined || m.op === 'update') && !serverDb.prepare('SELECT 1 FROM notes WHERE id = ?').get(note)) throw new Refusal(`no such note ${note}`);
      if (m.note === undefined) serverDb.prepare('INSERT INTO notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text').run(m.id, m.text);
    },
  });
  const listener = toNodeListener(receiver.handle);
  const api: Plugin = {
    name: 'intents-api',
    configurePreviewServer(preview) {
      preview.middlewares.use('/api/mutations', (request, response) => void listener(request, response));
    },
  };
  try {
    await withPage(page, PAGE, async () => {
      await page.waitForFunction(() => (window as any).ready === true);
      await page.evaluate(() => (window as any).createNote('note-1', ''));
      await expect.poll(arrived).toEqual([{ op: 'create', id: 'note-1', text: '' }]);

      // Thirty keystrokes, 50 ms apart (1.5 s: under maxWaitMs), against a server that answers at
      // once: the edit waits until the typing stops, then goes as one update with the last text
      // (two if a loaded machine stretched the typing past maxWaitMs).
      const text = 'The quick brown fox jumps over';
      await page.getByLabel('note-1').pressSequentially(text, { delay: 50 });
      await page.evaluate(() => (window as any).saved());
      await expect.poll(() => serverDb.prepare('SELECT text FROM notes WHERE id = ?').get('note-1'), { timeout: 15_000 }).toEqual({ text });
      const updates = arrived().filter((m) => m.op === 'update');
      expect(updates.length).toBeGreaterThanOrEqual(1);
      expect(updates.length).toBeLessThanOrEqual(2);
      expect(updates.at(-1)!.text).toBe(text);

      // A create the server refuses holds its note; an edit of it and a task under it wait.
      await page.evaluate(() => (window as any).createNote('note-2', 'refuse me'));
      await expect.poll(async () => (await page.evaluate(() => (window as any).outbox.stats())).held).toBe(1);
      await page.evaluate(async () => {
        const w = window as any;
        await w.editNote('note-2', 'an edit');
        await w.addTask('task-1', 'note-2', 'a task');
      });
      const removed = await page.evaluate(async () => {
        const w = window as any;
        const [letter] = await w.outbox.deadLetters();
        return w.outbox.discard(letter.seq, { dependents: true });
      });
      expect(removed.groups).toEqual(['note-2', 'task-1']);
      expect(removed.seqs).toHaveLength(3);
      // A fence: a note created now arrives; by then anything left of note-2 would have too.
      await page.evaluate(() => (window as any).createNote('note-3', 'fine'));
      await expect.poll(() => arrived().at(-1)).toEqual({ op: 'create', id: 'note-3', text: 'fine' });
      expect(applies.filter((m) => m.id === 'note-2' || m.id === 'task-1')).toEqual([{ op: 'create', id: 'note-2', text: 'refuse me' }]);
      expect(await page.evaluate(() => (window as any).outbox.stats())).toMatchObject({ queued: 0, dead: 0, held: 0 });
    }, [api]);
  } finally {
    serverDb.close();
  }
});
