import { describeStore } from '../conformance/store.js';
import { browserStoreFactory } from './harness.js';

// Every call crosses into a worker (and opens a fresh database per run), so the model test runs
// fewer sequences here; the Node backends run the full count.
describeStore('browser host over OPFS (opfs-sahpool)', browserStoreFactory('opfs'), { modelRuns: 15 });
describeStore('browser host in memory', browserStoreFactory('memory'), { modelRuns: 25 });
