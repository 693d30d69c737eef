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

/**
 * What the page's layout clips, measured in the page: every label of the queue view (group
 * names, state words, card lines, dead letters) whose text is wider or taller than its own box,
 * and every card cut by its row's edge where the row does not scroll. Each entry names the label
 * and its text, so a failure says what to look at.
 */
function clippedLabels(host: Element): { measured: number; clipped: string[] } {
  const root = host.shadowRoot!;
  const labels = root.querySelectorAll<HTMLElement>('.group-name, .group-word, .group-why, .priority, .position, .chip, .chip-top, .chip .state, .chip .attempt, .chip .label, .chip .detail, .more, .dead-letter, .counts, .summary');
  const out: string[] = [];
  for (const el of labels) {
    if (el.getClientRects().length === 0) continue; // not laid out (hidden)
    // An inline box has no client size to compare with (Firefox reports its text's): a label is a block or a flex or grid item here.
    if (getComputedStyle(el).display === 'inline') {
      out.push(`${el.className} "${el.textContent}": an inline box, which this measure cannot read`);
      continue;
    }
    // A box narrower than its text shows a part of it (or an ellipsis); taller, a cut line.
    if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) out.push(`${el.className} "${el.textContent}": text ${el.scrollWidth}×${el.scrollHeight} px in a ${el.clientWidth}×${el.clientHeight} px box`);
    else if (el.textContent?.endsWith('…') && el.title === '' && !el.closest('[title]')) out.push(`${el.className} "${el.textContent}": shortened with no tooltip`);
  }
  for (const list of root.querySelectorAll<HTMLElement>('.chips')) {
    if (getComputedStyle(list).overflowX === 'auto') continue; // a phone scrolls the cards: each whole
    const edge = list.getBoundingClientRect().right;
    for (const chip of list.querySelectorAll<HTMLElement>('.chip')) if (chip.getBoundingClientRect().right > edge + 1) out.push(`card "${chip.textContent}" runs past its row's edge`);
  }
  return { measured: labels.length, clipped: out };
}

for (const { width, height } of [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`at ${width} px wide the inspector shows an event's fields and a held group's full state, and clips no label`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto(`/inspector.html?db=${uniqueName('inspector-fit')}&hold=yes`);
    await expect(page.locator('#status')).toHaveText('ready');
    const uuid = '3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b';
    const refused = await page.evaluate(async (uuid) => {
      const t = (window as any).db.transport;
      // A record whose create the server refuses: a dead letter holding its group, an edit behind it.
      await t.publish('contact-42', { op: 'create', name: 'Ann Lee' });
      const create = await t.claim('w1', 60_000);
      await t.reject(create, 'the server said 422: the e-mail address is already taken by another contact');
      await t.publish('contact-42', { op: 'edit', name: 'Ann B. Lee' });
      // A 3-field event whose first field is a uuid, leased by a worker with consume()'s kind of id.
      await t.publish('note-1', { id: uuid, op: 'update', text: 'buy oat milk' });
      await t.claim(`consume-${uuid}`, 600_000);
      // A failure parked with a long reason, and a message waiting on the held record.
      await t.publish('invoice-2024-000017', { op: 'send' });
      await t.nack(await t.claim('w2', 60_000), 600_000, 'HTTP 503 Service Unavailable: upstream connect error or disconnect/reset before headers');
      await t.publish('task-5', { op: 'create' }, { after: { group: 'contact-42' } });
      for (let i = 1; i <= 8; i++) await t.publish('bulk', { op: 'import', row: i });
      return create.seq as number;
    }, uuid);
    await page.locator('#show').click();
    const inspector = page.locator('leasehold-inspector');
    await expect(inspector.getByTestId('inspector-counts')).toHaveText('queued 12 · groups 5 · ready 1 · leased 1 · waiting 1 · blocked 1 · held 1 · dead 1');

    // The event's three fields, the operation first though the uuid came first in it.
    const note = inspector.locator('[data-testid="group"][data-group="note-1"]');
    await expect(note.locator('.label')).toHaveText(/^#\d+ op: update · text: buy oat milk · id: 3f2a9c1e…$/);
    await expect(note.locator('.label')).toHaveAttribute('title', JSON.stringify({ id: uuid, op: 'update', text: 'buy oat milk' }));
    // Its holder by a short label, the full id a tooltip away.
    await expect(note.locator('.group-why')).toHaveText('by consume-3f2a');
    await expect(note.locator('.group-why')).toHaveAttribute('title', `leased by consume-${uuid}`);
    // The held group: its state word whole, and which dead letter holds it.
    const held = inspector.locator('[data-testid="group"][data-group="contact-42"]');
    await expect(held.getByTestId('group-state')).toHaveText('held');
    await expect(held.locator('.group-why')).toHaveText(`at dead letter #${refused}`);
    await expect(held.getByTestId('message')).toHaveAttribute('data-state', 'held');
    await expect(inspector.locator('[data-testid="group"][data-group="task-5"]').getByTestId('group-state')).toHaveText('blocked');
    await expect(inspector.locator('[data-testid="group"][data-group="invoice-2024-000017"]').getByTestId('group-state')).toHaveText('waiting');

    await page.screenshot({ path: testInfo.outputPath(`inspector-${width}.png`), fullPage: true });
    const { measured, clipped } = await inspector.evaluate(clippedLabels);
    expect(measured).toBeGreaterThan(30); // the measure looked at the labels, not at nothing
    expect(clipped).toEqual([]);
  });
}
