import { describeTransport } from './conformance/transport.js';
import { transportBackends } from './support/backends.js';

for (const backend of transportBackends) describeTransport(backend.name, backend.caps, backend.make);
