// A workflow across tabs: the owner tab closes between steps, or inside one, and the tab that
// takes over the database finishes the workflow without re-running the steps already recorded.
import { expect, test, type Page } from '@playwright/test';
import { openDb, openLab, uniqueName } from './support/lab.js';

interface Ran {
  tab: number;
  step: string;
}

/** Opens `name` in `page` and defines the three-step workflow there; `hangIn` never finishes (the tab closes inside it). */
async function openWorker(page: Page, tab: number, name: string, ran: Ran[], hangIn?: string): Promise<void> {
  await openLab(page);
  await page.exposeFunction('ranStep', (step: string) => void ran.push({ tab, step }));
  await openDb(page, name);
  await page.evaluate(
    ({ tab, hangIn }) => {
      const w = window as any;
      const { defineWorkflow, Workflows } = w.leasehold.workflow;
      w.flow = defineWorkflow('three', async (_input: unknown, step: any) => {
        const out: string[] = [];
        for (const name of ['a', 'b', 'c']) {
          out.push(
            await step.run(name, async () => {
              await w.ranStep(name);
              if (name === hangIn) await new Promise(() => {});
              return `${name}@tab${tab}`;
            }),
          );
        }
        return out.join(' ');
      });
      w.workflows = new Workflows({ store: w.db.store, transport: w.db.transport, workerId: `tab${tab}`, clock: () => w.now, visibilityMs: 10_000, workflows: [w.flow] });
      // Steps until the workflow completes, then resolves its result.
      w.finish = async () => {
        for (let i = 0; i < 200; i++) {
          const snapshot = await w.workflows.get('wf');
          if (snapshot?.status === 'completed') return snapshot.result;
          await w.workflows.step();
        }
        throw new Error('the workflow did not complete');
      };
    },
    { tab, hangIn },
  );
}

const isOwner = (page: Page): Promise<boolean> => page.evaluate(async () => (await (window as any).db.owner()).isThisTab);

test('the owner tab closes between steps: the other tab takes over and runs only the steps left', async ({ context }) => {
  test.setTimeout(120_000);
  const name = uniqueName('workflow-tabs');
  const ran: Ran[] = [];
  const first = await context.newPage();
  await openWorker(first, 0, name, ran);
  const second = await context.newPage();
  await openWorker(second, 1, name, ran);
  expect(await isOwner(first)).toBe(true);

  await first.evaluate(async () => {
    const w = window as any;
    await w.workflows.start(w.flow, 'wf');
    while ((await w.workflows.get('wf')).steps.length < 2) await w.workflows.step();
  });
  await first.close({ runBeforeUnload: false });

  expect(await second.evaluate(() => (window as any).finish())).toBe('a@tab0 b@tab0 c@tab1');
  expect(ran).toEqual([{ tab: 0, step: 'a' }, { tab: 0, step: 'b' }, { tab: 1, step: 'c' }]);
  expect(await isOwner(second)).toBe(true);
});

test("the owner tab closes inside a step: the other tab re-runs that step only, once the lease runs out", async ({ context }) => {
  test.setTimeout(120_000);
  const name = uniqueName('workflow-tabs-crash');
  const ran: Ran[] = [];
  const first = await context.newPage();
  await openWorker(first, 0, name, ran, 'b');
  const second = await context.newPage();
  await openWorker(second, 1, name, ran);

  await first.evaluate(async () => {
    const w = window as any;
    await w.workflows.start(w.flow, 'wf');
    void (async () => {
      for (;;) await w.workflows.step();
    })();
  });
  await expect.poll(() => ran.length).toBe(2);
  await first.close({ runBeforeUnload: false });

  await second.evaluate(() => ((window as any).now += 10_001)); // the closed tab's lease runs out
  expect(await second.evaluate(() => (window as any).finish())).toBe('a@tab0 b@tab1 c@tab1');
  expect(ran).toEqual([{ tab: 0, step: 'a' }, { tab: 0, step: 'b' }, { tab: 1, step: 'b' }, { tab: 1, step: 'c' }]);
});
