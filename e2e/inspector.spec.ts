import { expect, test } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteTransport } from '../src/index.js';
import { inspectorHandler } from '../src/inspector/http.js';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { uniqueName } from './support/lab.js';
import { serveInspector } from './support/node-inspector.js';

test('an app page mounts the inspector on its own queue, sees a publish by change notice and redrives a dead letter', async ({ page }) => {
  // poll=no: the inspector reads on change notices and hold ends only, so a publish it shows came by notice.
  await page.goto(`/inspector.html?db=${uniqueName('inspector')}&poll=no`);
  await expect(page.locator('#status')).toHaveText('ready');
  // Lazy: the element is not even defined until the page shows it.
  expect(await page.evaluate(() => customElements.get('leasehold-inspector') === undefined)).toBe(true);
  await page.locator('#show').click();
  const inspector = page.locator('leasehold-inspector');
  await expect(inspector.getByTestId('inspector-counts')).toContainText('queued 0');

  await page.evaluate(() => (window as any).db.transport.publish('note-1', { label: 'save draft' }));
  await expect(inspector.locator('[data-testid="group"][data-group="note-1"]')).toBeVisible();
  await expect(inspector.getByTestId('message')).toContainText('save draft');

  // A message the server refused for good: a dead letter, which the operator redrives.
  const seq = await page.evaluate(async () => {
    const { db } = window as any;
    const lease = await db.transport.claim('w', 10_000);
    await db.transport.reject(lease, 'the server said 422');
    return lease.seq as number;
  });
  const letter = inspector.locator(`[data-testid="dead-letter"][data-seq="${seq}"]`);
  await expect(letter).toContainText('1 try: the server said 422');
  await expect(inspector.locator('[data-testid="group"]')).toHaveCount(0);
  await letter.getByRole('button', { name: /redrive/ }).click();
  await expect(inspector.getByTestId('dead-letter')).toHaveCount(0);
  await expect(inspector.locator('[data-testid="group"][data-group="note-1"]')).toBeVisible();
  expect(await page.evaluate(() => (window as any).db.transport.stats().then((s: { queued: number; dead: number }) => [s.queued, s.dead]))).toEqual([1, 0]);
});

test('the inspector pointed at a Node server over the HTTP handler shows the same queue', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-inspector-'));
  const db = await openBetterSqliteDatabase(join(dir, 'queue.db'));
  const transport = new SqliteTransport<{ label: string }>(db);
  const server = await serveInspector(inspectorHandler(transport));
  try {
    await transport.publish('invoice-1', { label: 'charge' });
    await transport.publish('invoice-2', { label: 'refund' }, { priority: 2 });
    await transport.claim('node-worker', 600_000);
    await page.goto(`/inspector.html?http=${encodeURIComponent(server.url)}&actions=no`);
    await expect(page.locator('#status')).toHaveText('ready');
    await page.locator('#show').click();
    const inspector = page.locator('leasehold-inspector');
    const expected = (await transport.inspect()).groups.map((g) => g.groupId);
    await expect(inspector.locator('[data-testid="group"]')).toHaveCount(expected.length);
    expect(await inspector.locator('[data-testid="group"]').evaluateAll((els) => els.map((el) => el.getAttribute('data-group')))).toEqual(expected);
    await expect(inspector.locator('[data-holder="node-worker"]')).toContainText('left');
    // A publish in the server process reaches the page through the handler's change poll.
    await transport.publish('invoice-3', { label: 'remind' });
    await expect(inspector.locator('[data-testid="group"][data-group="invoice-3"]')).toBeVisible();
  } finally {
    await server.close();
    await transport.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
