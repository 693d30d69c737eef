// Ports for the servers tests and benchmarks start: always one the OS hands out, never a fixed
// number, so a run does not depend on what else listens on the machine.
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nobody listens on right now (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
