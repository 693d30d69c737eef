/**
 * The workflow suite's harness on one store + transport pair: a manual clock and scheduler,
 * workers running given workflows, "step until quiet", and the faults. Imports nothing of
 * Node's, so the browser project runs the suite through the browser host too.
 */
import { ManualClock } from '../../src/clock.js';
import { Workflows } from '../../src/workflow/workflows.js';
import type { Workflow, WorkflowsOptions } from '../../src/workflow/types.js';
import type { MakeRuntimeBackends, RuntimeBackends } from './runtime-backends.js';
import { ManualScheduler } from './runtime-scheduler.js';

export { drain } from './runtime-workflows.js';
export { storeWithFault, transportDyingAtAck } from './workflow-faults.js';

export const VISIBILITY_MS = 30_000;

export interface WorkflowHarness extends RuntimeBackends {
  clock: ManualClock;
  scheduler: ManualScheduler;
  /** A worker running `workflows` on the pair (or on the stores and transports in `overrides`). */
  worker(workerId: string, workflows: Workflow<never, unknown>[], overrides?: Partial<WorkflowsOptions>): Workflows;
}

export async function makeWorkflowHarness(make: MakeRuntimeBackends): Promise<WorkflowHarness> {
  const clock = new ManualClock(1_000_000);
  const scheduler = new ManualScheduler(clock);
  const backends = await make({ clock: clock.now });
  let ids = 0;
  return {
    ...backends,
    clock,
    scheduler,
    worker: (workerId, workflows, overrides = {}) =>
      new Workflows({
        store: backends.store,
        transport: backends.transport,
        workflows,
        workerId,
        visibilityMs: VISIBILITY_MS,
        clock: clock.now,
        scheduler,
        backoff: { baseMs: 100, maxMs: 1_000 },
        newId: () => `evt-${++ids}`,
        ...overrides,
      }),
  };
}
