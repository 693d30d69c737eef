import { describeConsume } from '../conformance/consume.js';
import { browserTransportFactory } from './harness.js';

describeConsume('browser host in memory', browserTransportFactory('memory'));
