// The workflow suite through the browser host: host worker, OPFS, a manual clock on the page.
import { describeWorkflows } from '../support/workflow-suite.js';
import { opfsRuntimeBackends } from './harness.js';

describeWorkflows('the browser host over OPFS', opfsRuntimeBackends('workflow'));
