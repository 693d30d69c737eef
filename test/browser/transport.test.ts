import { describeTransport } from '../conformance/transport.js';
import { browserTransportFactory, runsMemoryVariants, whereOpfs } from './harness.js';

whereOpfs(() => describeTransport('browser host over OPFS (opfs-sahpool)', { json: true, persistent: true, namedQueues: true }, browserTransportFactory('opfs')));
if (runsMemoryVariants) describeTransport('browser host in memory', { json: true, persistent: false, namedQueues: true }, browserTransportFactory('memory'));
