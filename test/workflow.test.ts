import { describeWorkflows } from './support/workflow-suite.js';
import { workflowBackendPairs } from './support/workflow-backends.js';

for (const pair of workflowBackendPairs) describeWorkflows(pair.name, pair.make);
