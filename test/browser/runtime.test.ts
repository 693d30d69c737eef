// The runtime's scenarios, run through the browser host: host worker, OPFS, a manual clock on the page.
import { describeRuntimeControl } from '../support/runtime-suite-control.js';
import { describeRuntime } from '../support/runtime-suite.js';
import { opfsRuntimeBackends } from './harness.js';

const overOpfs = opfsRuntimeBackends('runtime');

// Calls settle in the worker on its own time, so the suites skip the tests that drive run() and
// lease renewal with a manual scheduler (they run on the in-process pairs in Node).
const caps = { settlesInProcess: false };
describeRuntime('the browser host over OPFS', overOpfs, caps);
describeRuntimeControl('the browser host over OPFS', overOpfs, caps);
