// The host worker's entry: wiring only (see host.ts).
import { startHost } from './host.js';

startHost(self as unknown as Parameters<typeof startHost>[0]);
