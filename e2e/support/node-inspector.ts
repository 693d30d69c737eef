/**
 * A Node process's queue served to the inspector: `inspectorHandler` mounted on `node:http` with
 * the few lines of adapter docs/inspector.md shows, plus CORS, since the test's page comes from
 * another origin (the Vite preview) than this server.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InspectorHandler } from '../../src/inspector/http.js';

const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type', 'access-control-allow-methods': 'POST' };

/** Serves `handler` on a port the OS picks; returns its URL and a close that ends held polls first. */
export async function serveInspector(handler: InspectorHandler): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') return void res.writeHead(204, CORS).end();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.entries(req.headers as IncomingHttpHeaders).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value] as [string, string]] : []));
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
      void handler(request).then(async (response) => {
        res.writeHead(response.status, { ...Object.fromEntries(response.headers), ...CORS });
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/admin/leasehold`,
    close: async () => {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
