/**
 * Vitest global setup of the node project: the run's servers, started only when a test asks.
 * One PostgreSQL server (LEASEHOLD_PG_URL, or a throwaway cluster from scripts/postgres.mjs) and
 * one workerd (the Durable Object backends) are shared by every test file, but a run of the
 * in-memory and SQLite suites alone (`npm run test:fast`, or one file) should not pay seconds
 * to start them. So this setup starts only a small HTTP endpoint on a free port; a test file's
 * first `await pgUrl()` / `await workerdUrl()` (test/support/servers.ts) asks it, and the server
 * starts then, once for the run. Teardown stops whatever was started.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { startPostgres } from '../../scripts/postgres.mjs';
import { startWorkerd } from './workerd.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://127.0.0.1:<port>`: GET /pg and GET /workerd answer the server's URL, starting it on first use. */
    serversUrl: string;
  }
}

interface Started {
  url: string;
  stop(): Promise<void> | void;
}

const starters: Record<string, () => Promise<Started>> = {
  async pg() {
    const server = await startPostgres({ fast: true, label: 'leasehold-pg-test' });
    return { url: server.url, stop: () => server.stop() };
  },
  async workerd() {
    const workerd = await startWorkerd();
    return {
      url: workerd.url,
      async stop() {
        await workerd.stop();
        workerd.remove();
      },
    };
  },
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = new Map<string, Promise<Started>>();
  const http = createServer((request, response) => {
    const name = (request.url ?? '').slice(1);
    const start = starters[name];
    if (!start) {
      response.writeHead(404).end(`no server named ${JSON.stringify(name)}`);
      return;
    }
    if (!started.has(name)) started.set(name, start());
    // A failed start is answered to every file that asks (the error says what to install).
    started.get(name)!.then(
      (server) => response.writeHead(200).end(server.url),
      (error: unknown) => response.writeHead(500).end(error instanceof Error ? error.message : String(error)),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  project.provide('serversUrl', `http://127.0.0.1:${(http.address() as AddressInfo).port}`);
  return async () => {
    await new Promise<void>((resolve) => http.close(() => resolve()));
    for (const server of started.values()) {
      await server.then((s) => s.stop(), () => {});
    }
  };
}
