import { type BrowserContext, expect, type Locator, type Page, test } from '@playwright/test';
import { closeOwner, consoleErrors, logEntries, openDemo, openSecondTab, screenshots, startLesson, step } from './demo-support.js';

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
