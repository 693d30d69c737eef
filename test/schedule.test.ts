import { describeSchedules } from './support/schedule-suite.js';
import { workflowBackendPairs } from './support/workflow-backends.js';

for (const pair of workflowBackendPairs) describeSchedules(pair.name, pair.make);
