#!/usr/bin/env node
/**
 * The example's backend: a small Node HTTP server with no dependencies. It serves the built page
 * (dist/) and one API, and stands in for any server an offline-first app syncs to:
 *
 * - `POST /api/mutations` with `{ id, entity, text, at }` stores the mutation once by `id`:
 *   201 the first time, 200 `{ duplicate: true }` for an id it already has (a client retry after
 *   a lost answer is harmless), 422 for a mutation it refuses (bad shape, or text longer than
 *   `--max-length`), 400 for a body that is not JSON.
 * - `GET /api/mutations`: what it stored, in arrival order, with counts of duplicates and refusals.
 * - `GET /api/notes`: the latest text of each note.
 *
 * With `--data <file>` every stored mutation is appended to that file (one JSON line each) before
 * the answer goes out, and read back on start, so a restart (a deploy) keeps them.
 *
 *   node server.mjs [--port 8787] [--dist dist] [--data mutations.jsonl] [--max-length 140]
 *
 * Prints one line, `listening on http://127.0.0.1:<port>`, once it accepts connections.
 */
import { appendFileSync, createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};
const ENTITY = /^note-[1-9][0-9]{0,2}$/;
const MAX_BODY = 64 * 1024;

/** Why a mutation is refused, or null if the server accepts it. */
function invalid(m, maxLength) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'the body must be a JSON object';
  if (typeof m.id !== 'string' || m.id.length === 0 || m.id.length > 100) return 'id must be a string of 1–100 characters';
  if (typeof m.entity !== 'string' || !ENTITY.test(m.entity)) return 'entity must look like note-1';
  if (typeof m.text !== 'string') return 'text must be a string';
  if (m.text.length > maxLength) return `text is longer than ${maxLength} characters`;
  if (!Number.isFinite(m.at)) return 'at must be a time in milliseconds';
  return null;
}

function send(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function readBody(request) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > MAX_BODY) throw new RangeError('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Starts the server. `port` 0 picks a free one. Resolves once it listens, with its URL, the
 * stored state (for tests in the same process) and `close()`.
 */
export async function startServer({ port = 8787, host = '127.0.0.1', dist = 'dist', data, maxLength = 140 } = {}) {
  const root = resolve(dist);
  /** Stored mutations in arrival order, and their ids. */
  const mutations = [];
  const ids = new Set();
  let duplicates = 0;
  let rejected = 0;
  if (data && existsSync(data)) {
    for (const line of readFileSync(data, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const m = JSON.parse(line);
      mutations.push(m);
      ids.add(m.id);
    }
  }

  async function api(request, response, path) {
    if (path === '/api/mutations' && request.method === 'POST') {
      let mutation;
      try {
        mutation = JSON.parse(await readBody(request));
      } catch (error) {
        return send(response, 400, { error: error instanceof RangeError ? error.message : 'the body is not JSON' });
      }
      const reason = invalid(mutation, maxLength);
      if (reason) {
        rejected += 1;
        return send(response, 422, { error: reason });
      }
      if (ids.has(mutation.id)) {
        duplicates += 1;
        return send(response, 200, { stored: false, duplicate: true });
      }
      const stored = { id: mutation.id, entity: mutation.entity, text: mutation.text, at: mutation.at, receivedAt: Date.now() };
      // On disk before the answer: a 201 the client acts on is never lost by a restart.
      if (data) appendFileSync(data, `${JSON.stringify(stored)}\n`);
      mutations.push(stored);
      ids.add(stored.id);
      return send(response, 201, { stored: true });
    }
    if (path === '/api/mutations' && request.method === 'GET') return send(response, 200, { mutations, duplicates, rejected, maxLength });
    if (path === '/api/notes' && request.method === 'GET') {
      const notes = {};
      for (const m of mutations) notes[m.entity] = m.text;
      return send(response, 200, notes);
    }
    return send(response, 404, { error: `no ${request.method} ${path}` });
  }

  function serveFile(request, response, path) {
    let file = normalize(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) return send(response, 404, { error: 'not found' });
    if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    if (!existsSync(file)) return send(response, 404, { error: `nothing built in ${root}: run npm run build` });
    // The service worker must always be fetched fresh, or a new build is never picked up.
    const cache = /\/assets\//.test(file) ? 'public, max-age=31536000, immutable' : 'no-cache';
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': cache });
    if (request.method === 'HEAD') return response.end();
    createReadStream(file).pipe(response);
  }

  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const handled = path.startsWith('/api/') ? api(request, response, path) : serveFile(request, response, path);
    Promise.resolve(handled).catch((error) => {
      if (!response.headersSent) send(response, 500, { error: String(error) });
      else response.destroy();
    });
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const url = `http://${host}:${server.address().port}`;
  return {
    url,
    get state() {
      return { mutations, duplicates, rejected, maxLength };
    },
    close: () =>
      new Promise((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '8787' }, dist: { type: 'string', default: 'dist' }, data: { type: 'string' }, 'max-length': { type: 'string', default: '140' } },
  });
  const server = await startServer({ port: Number(values.port), dist: values.dist, data: values.data, maxLength: Number(values['max-length']) });
  console.log(`listening on ${server.url}`);
  const shutdown = () => void server.close().then(() => process.exit(0));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
