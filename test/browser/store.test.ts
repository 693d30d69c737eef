import { describeStore } from '../conformance/store.js';
import { browserStoreFactory, runsMemoryVariants, whereOpfs } from './harness.js';

// Every call crosses into a worker (and opens a fresh database per run), so the model test runs
// fewer sequences here; the Node backends run the full count. Even so they take 10-13 s at a load
// of 8: a limit of 3 minutes rather than the project's 1, so a busier machine does not fail them.
whereOpfs(() => describeStore('browser host over OPFS (opfs-sahpool)', browserStoreFactory('opfs'), { modelRuns: 15, modelTimeout: 180_000 }));
if (runsMemoryVariants) describeStore('browser host in memory', browserStoreFactory('memory'), { modelRuns: 25, modelTimeout: 180_000 });
