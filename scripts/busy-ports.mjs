#!/usr/bin/env node
// Runs a command while this process holds the ports dev servers reach for by habit (Vite's
// 5173 and preview's 4173, Vitest's browser 63315): `npm test` runs its layers under it, so
// every run proves that no test or server depends on a fixed port being free. A port another
// program already holds is just as busy, and is left alone.
//
//   node scripts/busy-ports.mjs <command> [args…]
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** The ports held: the defaults of the tools this project starts. */
export const BUSY_PORTS = [4173, 5173, 63315];

/** Listens on `port` (all interfaces, as a dev server would); null when something else holds it. */
function hold(port) {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error) => (error.code === 'EADDRINUSE' ? resolve(null) : reject(error)));
    server.listen(port, () => resolve(server));
  });
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/busy-ports.mjs <command> [args…]');
  process.exit(2);
}
const held = await Promise.all(BUSY_PORTS.map(hold));
console.log(`busy-ports: ports ${BUSY_PORTS.join(', ')} are taken while this runs: ${[command, ...args].join(' ')}`);
const child = spawn(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  for (const server of held) server?.close();
  process.exitCode = code ?? (signal ? 1 : 0);
});
