// The schedule suite through the browser host: host worker, OPFS, a manual clock on the page.
import { describeSchedules } from '../support/schedule-suite.js';
import { opfsRuntimeBackends } from './harness.js';

describeSchedules('the browser host over OPFS', opfsRuntimeBackends('schedule'));
