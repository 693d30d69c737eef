import { type BrowserContext, expect, type Locator, type Page, test } from '@playwright/test';
import { closeOwner, consoleErrors, group, logEntries, openDemo, openSecondTab, screenshots, settled, startLesson, step } from './demo-support.js';

test.use({ viewport: { width: 1280, height: 900 } });

/** One of lesson 10's workflow steps as the page lists it (recorded, running or pending). */
function stepRow(page: Page, name: string): Locator {
  return page.locator(`[data-testid="execution"][data-execution="order-42"] [data-testid="wf-step"][data-step="${name}"]`);
}

async function expectStep(page: Page, name: string, state: string, ranBy: string[]): Promise<void> {
  await expect(stepRow(page, name)).toHaveAttribute('data-state', state);
  await expect(stepRow(page, name)).toHaveAttribute('data-runs', String(ranBy.length));
  await expect(stepRow(page, name)).toHaveAttribute('data-ran-by', ranBy.join(','));
}

/** The shop's ledger of side effects (localStorage, which every tab of the page shares): who ran which step, in order. */
function ledger(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const runs = JSON.parse(localStorage.getItem('leasehold-demo-side-effects') ?? '[]') as { step: string; worker: string }[];
    return runs.map((run) => `${run.step} by ${run.worker}`);
  });
}

/** Lesson 10 in a first tab, played `seconds` s (w1 runs reserve from 0 s, charge from 1 s), then a second tab joined. */
async function ownerThenSecondTab(context: BrowserContext, seconds: number): Promise<{ first: Page; second: Page }> {
  const first = await context.newPage();
  await openDemo(first);
  await startLesson(first, 10);
  // w1 runs reserve at once: its code ran (the ledger has it), its result is not recorded yet.
  await expectStep(first, 'reserve', 'running', ['w1']);
  await step(first, 1000, seconds);
  const second = await openSecondTab(first);
  await expect(second.locator('[data-testid="worker"][data-worker="tab2-w1"]')).toHaveAttribute('data-status', 'idle');
  // The second tab sees the same record (through the owner) and the same ledger.
  await expectStep(second, 'reserve', 'recorded', ['w1']);
  return { first, second };
}

/** Steps `page` until order-42 has completed. */
async function finish(page: Page): Promise<void> {
  const workflow = page.locator('[data-testid="execution"][data-execution="order-42"] [data-testid="workflow"]');
  for (let i = 0; i < 30 && (await workflow.getAttribute('data-status')) !== 'completed'; i++) await step(page, 1000);
  await expect(workflow).toHaveAttribute('data-status', 'completed');
}

test('lesson 10: the owner tab closes between steps; the other tab finishes the workflow without re-running a finished step', async ({ context }) => {
  test.setTimeout(120_000);
  const { first, second } = await ownerThenSecondTab(context, 2);
  // Both recorded, each run once by w1; the workflow sleeps on a store timer until 17 s.
  await expectStep(first, 'reserve', 'recorded', ['w1']);
  await expectStep(first, 'charge', 'recorded', ['w1']);
  await expect(stepRow(first, 'sleep')).toHaveAttribute('data-state', 'pending');
  await screenshots(first, 'lesson-10-owner');

  // The owner closes between steps: nobody holds a lease, and the courier's timer is in the file.
  await closeOwner(first, second);
  await finish(second);
  // Only ship ran here, once the timer was due; reserve and charge came back from the record.
  const ran = logEntries(second, { kind: 'step', worker: 'tab2-w1' });
  await expect(ran).toHaveCount(1);
  await expect(ran).toContainText('runs ship for order-42 (run 1 of this step');
  await expect(ran).toContainText('reserve, charge and the courier wait came back from the record without running again');
  await expect(ran).toHaveAttribute('data-time', '17000');
  await expectStep(second, 'reserve', 'recorded', ['w1']);
  await expectStep(second, 'charge', 'recorded', ['w1']);
  await expectStep(second, 'ship', 'recorded', ['tab2-w1']);
  await expect(second.getByTestId('wf-result')).toContainText('ship: tab2-w1 in tab 2 at 17.0 s');
  // Each step's side effect happened exactly once, across both tabs.
  expect(await ledger(second)).toEqual(['reserve by w1', 'charge by w1', 'ship by tab2-w1']);
  await screenshots(second, 'lesson-10');
  expect(consoleErrors(second)).toEqual([]);
});

test('lesson 10: the owner tab closes inside a step; only that step runs again, once its lease has run out', async ({ context }) => {
  test.setTimeout(120_000);
  const { first, second } = await ownerThenSecondTab(context, 1);
  await expectStep(second, 'charge', 'running', ['w1']);

  // w1's lease on the event that runs charge (claimed at 1.0 s, 5 s) dies with its tab.
  await closeOwner(first, second);
  const rerun = logEntries(second, { kind: 'step', worker: 'tab2-w1' }).filter({ hasText: 'runs charge' });
  for (let i = 0; i < 10 && (await rerun.count()) === 0; i++) await step(second, 1000);
  await expect(rerun).toContainText('(run 2 of this step');
  await expect(rerun).toContainText('reserve came back from the record without running again');
  expect(Number(await rerun.getAttribute('data-time'))).toBeGreaterThan(6000);
  await finish(second);
  await expectStep(second, 'reserve', 'recorded', ['w1']);
  await expectStep(second, 'charge', 'recorded', ['w1', 'tab2-w1']);
  await expectStep(second, 'ship', 'recorded', ['tab2-w1']);
  expect(await ledger(second)).toEqual(['reserve by w1', 'charge by w1', 'charge by tab2-w1', 'ship by tab2-w1']);
  expect(consoleErrors(second)).toEqual([]);
});

/** Lesson 11's server: what it received, for `note`, oldest first. */
function requests(page: Page, note: string): Locator {
  return page.locator(`[data-testid="server-request"][data-note="${note}"]`);
}

/** `id` with its revision (the last of its four parts) replaced. */
function withRevision(id: string, revision: number): string {
  return `${id.slice(0, id.lastIndexOf('/'))}/${revision}`;
}

test('lesson 11: a lost answer is answered from its receipt when the same delivery id comes again; a merged edit goes out under a new id and is applied', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 11);
  await expect(page.locator('[data-panel="server"]')).toBeVisible();
  await step(page, 1000);
  // At 1 s the server applied both notes and committed their receipts; both answers were lost.
  for (const note of ['note-7', 'note-8']) {
    await expect(requests(page, note)).toHaveCount(1);
    await expect(requests(page, note)).toHaveAttribute('data-answered', 'applied');
    await expect(requests(page, note)).toHaveAttribute('data-lost', 'true');
    await expect(requests(page, note)).toHaveAttribute('data-revision', '0');
    await expect(logEntries(page, { kind: 'lost', group: note })).toContainText('no attempt spent');
    // The tab never heard: the message waits in its queue for the next try, its attempt given back.
    await expect(group(page, note).getByTestId('message')).toHaveAttribute('data-state', 'delayed');
    await expect(group(page, note).getByTestId('message')).toHaveAttribute('data-attempt', '0');
  }
  await expect(page.getByTestId('receipt')).toHaveCount(2);
  const sent7 = (await requests(page, 'note-7').getAttribute('data-id'))!;
  const sent8 = (await requests(page, 'note-8').getAttribute('data-id'))!;
  await expect(page.locator(`[data-testid="receipt"][data-id="${sent8}"]`)).toHaveAttribute('data-revision', '0');
  await screenshots(page, 'lesson-11-lost');

  // At 2 s the user's edit is merged into note-8 while it waits: same seq, revision 1.
  await step(page, 1000);
  await expect(logEntries(page, { kind: 'edit', group: 'note-8' })).toContainText('merged into it in place');
  await expect(group(page, 'note-8').getByTestId('message')).toHaveCount(1);

  // The next tries: note-7 under the same id, answered from its receipt; note-8 under a new one, applied.
  for (let i = 0; i < 6 && (await requests(page, 'note-8').count()) < 2; i++) await step(page, 1000);
  await expect(requests(page, 'note-7')).toHaveCount(2);
  const again = requests(page, 'note-7').nth(1);
  await expect(again).toHaveAttribute('data-id', sent7);
  await expect(again).toHaveAttribute('data-answered', 'repeat');
  await expect(again).toHaveAttribute('data-lost', 'false');
  await expect(logEntries(page, { kind: 'repeat', group: 'note-7' })).toContainText('without applying it again');
  const edited = requests(page, 'note-8').nth(1);
  await expect(edited).toHaveAttribute('data-id', withRevision(sent8, 1));
  await expect(edited).toHaveAttribute('data-answered', 'applied');
  await expect(edited).toHaveAttribute('data-lost', 'false');
  // One receipt per number: note-7's still at revision 0, note-8's replaced by revision 1.
  await expect(page.getByTestId('receipt')).toHaveCount(2);
  await expect(page.locator(`[data-testid="receipt"][data-id="${sent7}"]`)).toHaveAttribute('data-outcome', 'applied');
  await expect(page.locator(`[data-testid="receipt"][data-id="${withRevision(sent8, 1)}"]`)).toHaveAttribute('data-outcome', 'applied');
  // Apply ran once for note-7 (delivered twice) and once per content of note-8.
  await expect(page.locator('[data-testid="note"][data-note="note-7"]')).toHaveAttribute('data-applied', '1');
  await expect(page.locator('[data-testid="note"][data-note="note-8"]')).toHaveAttribute('data-applied', '2');
  await expect(page.locator('[data-testid="note"][data-note="note-8"]')).toContainText('call Ann at 5');
  // Both acked: the queue is empty.
  await expect(group(page, 'note-7')).toHaveCount(0);
  await expect(group(page, 'note-8')).toHaveCount(0);
  await settled(page);
  await screenshots(page, 'lesson-11');
  expect(consoleErrors(page)).toEqual([]);
});

test('lesson 12: fifteen keystrokes go out as two deliveries; a refused create discarded with its dependents takes its edit and the task after it', async ({ page }) => {
  await openDemo(page);
  await startLesson(page, 12);
  // 2 s: six keystrokes merged into one message that waits for the typing to stop; note-10's
  // create was refused at 0.5 s and holds its group; task-5 waits for what note-10 held.
  await step(page, 1000, 2);
  await expect(group(page, 'note-9').getByTestId('message')).toHaveCount(1);
  await expect(group(page, 'note-9').getByTestId('message')).toHaveAttribute('data-state', 'delayed');
  await expect(logEntries(page, { kind: 'ack', group: 'note-9' })).toHaveCount(0);
  await expect(page.getByTestId('dead-letter')).toHaveCount(1);
  await expect(group(page, 'task-5').getByTestId('message')).toHaveAttribute('data-state', 'blocked');
  await screenshots(page, 'lesson-12-typing');
  // 6 s: the operator discarded the create with its dependents: the edit and the task went too.
  await step(page, 1000, 4);
  await expect(logEntries(page, { kind: 'discard' })).toContainText('with its dependents');
  await expect(page.getByTestId('dead-letter')).toHaveCount(0);
  await expect(group(page, 'note-10')).toHaveCount(0);
  await expect(group(page, 'task-5')).toHaveCount(0);
  // Fifteen keystrokes, two deliveries: one at the bound, one once the typing stopped.
  await step(page, 1000, 2);
  await expect(logEntries(page, { kind: 'edit', group: 'note-9' })).toHaveCount(15);
  await expect(logEntries(page, { kind: 'ack', group: 'note-9' })).toHaveCount(2);
  await expect(group(page, 'note-9')).toHaveCount(0);
  await settled(page);
  await screenshots(page, 'lesson-12');
  expect(consoleErrors(page)).toEqual([]);
});
