/**
 * The store + transport pairs the workflow suite runs on and the harness: a manual clock and scheduler, workers, and
 * "step until quiet".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { Workflows } from '../../src/workflow/workflows.js';
import type { Workflow, WorkflowsOptions } from '../../src/workflow/types.js';
import { runtimeBackendPairs, sqlitePair, type MakeRuntimeBackends, type RuntimeBackends } from './runtime-backends.js';
import { ManualScheduler } from './runtime-scheduler.js';

export { drain } from './runtime-workflows.js';
export { storeWithFault, transportDyingAtAck } from './workflow-faults.js';

const dir = mkdtempSync(join(tmpdir(), 'leasehold-workflow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/**
 * Every pair the runtime suite runs on (memory, sqlite-wasm; and, outside `test:fast`, the
 * Durable Object in workerd by each route, a PostgreSQL server, PGlite), plus better-sqlite3
 * on a file. The browser host is not run here yet.
 */
export const workflowBackendPairs: { name: string; make: MakeRuntimeBackends }[] = [
  ...runtimeBackendPairs,
  {
    name: 'SqliteStore + SqliteTransport on better-sqlite3 (a file)',
    make: async (options) => sqlitePair(await openBetterSqliteDatabase(join(dir, `workflow-${++files}.db`)), options),
  },
];

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
        retryBaseMs: 100,
        retryMaxMs: 1_000,
        newId: () => `evt-${++ids}`,
        ...overrides,
      }),
  };
}
