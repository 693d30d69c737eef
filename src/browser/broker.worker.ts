// The link broker's entry (a SharedWorker): wiring only (see broker.ts).
import { startBroker } from './broker.js';

startBroker(self as unknown as Parameters<typeof startBroker>[0]);
