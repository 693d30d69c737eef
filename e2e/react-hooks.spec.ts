/**
 * leasehold/react in a real browser with real React: a page built here (Vite's own API) renders
 * usePendingCount, useGroupMessages and useDeadLetters over an in-memory transport, and the
 * counts follow publishes and acks. React is an optional peer of leasehold and a devDependency of
 * the project, so the test always runs.
 */
import { expect, test } from '@playwright/test';
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

test('React hooks render pending counts that follow publishes and acks', async ({ page }) => {
  // Inside the repository (.tmp/ is ignored), so the page's imports of react resolve to the project's own.
  mkdirSync(here('../.tmp'), { recursive: true });
  const dir = mkdtempSync(join(here('../.tmp'), 'react-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="./main.js"></script></body></html>\n');
  writeFileSync(join(dir, 'main.js'), PAGE);
  const alias = { 'leasehold/react': here('../src/react/index.ts'), leasehold: here('../src/index.ts') };
  await build({ configFile: false, root: dir, logLevel: 'warn', resolve: { alias }, build: { outDir: join(dir, 'dist') } });
  const server = await preview({ configFile: false, root: dir, logLevel: 'warn', build: { outDir: join(dir, 'dist') }, preview: { port: 0, host: '127.0.0.1' } });
  try {
    await page.goto(server.resolvedUrls!.local[0]!);
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
  } finally {
    await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
});
