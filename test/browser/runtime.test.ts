// The runtime's scenarios, run through the browser host: host worker, OPFS, a manual clock on the page.
import { openBrowserDatabase } from 'leasehold/browser';
import type { MakeRuntimeBackends } from '../support/runtime-backends.js';
import { describeRuntimeControl } from '../support/runtime-suite-control.js';
import { describeRuntime } from '../support/runtime-suite.js';
import { freshName, removeOpfsPool } from './harness.js';

const overOpfs: MakeRuntimeBackends = async ({ clock, maxAttempts }) => {
  const name = freshName('runtime');
  const db = await openBrowserDatabase({ name, clock, ...(maxAttempts === undefined ? {} : { maxAttempts }) });
  return {
    store: db.store,
    transport: db.transport,
    async dispose() {
      await db.close();
      await removeOpfsPool(name);
    },
  };
};

// Calls settle in the worker on its own time, so the suites skip the tests that drive run() and
// lease renewal with a manual scheduler (they run on the in-process pairs in Node).
const caps = { settlesInProcess: false };
describeRuntime('the browser host over OPFS', overOpfs, caps);
describeRuntimeControl('the browser host over OPFS', overOpfs, caps);
