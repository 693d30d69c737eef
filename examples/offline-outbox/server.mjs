#!/usr/bin/env node
/**
 * The example's backend: a small Node HTTP server with no dependencies. It serves the built page
 * (dist/) and one API, and stands in for any server an offline-first app syncs to. It keeps two
 * kinds of record: notes, and tasks under a note.
 *
 * - `POST /api/mutations` with `{ id, op, entity, text, at }` (a task's create also names its
 *   `note`) applies the mutation once by `id`: 201 the first time, 200 `{ duplicate: true }` for
 *   an id it already has (a client retry after a lost answer is harmless). It refuses, for good:
 *   422 a bad shape or a text longer than `--max-length`; 409 an update of a note it does not
 *   have, a task whose note it does not have, or a second create of one record; 400 a body that
 *   is not JSON. The `leasehold-attempt` header (the delivery's attempt) is kept with what it stores.
 * - `POST /api/outage` with `{ count, status = 503, retryAfter }`: `count` more mutations (after
 *   any outage answers asked for before) are answered `status` (503 or 429), with
 *   `Retry-After: <retryAfter>` if given (seconds, or an HTTP date). A deploy or a rate limit, to
 *   watch the outbox wait without spending attempts.
 * - `GET /api/mutations`: what it stored, in arrival order, with counts of duplicates, refusals
 *   and outage answers. `GET /api/notes`: the latest text of each note, and the tasks.
 * - Loss detection. Each mutation comes with the headers `leasehold-origin`, `-counter` and
 *   `-low-water` (its lease's `origin`, `counter` and `lowWater`): the server records, per origin,
 *   every counter it received (stored, repeated or refused: not an outage answer, which the
 *   device sends again) and the highest low-water mark. `GET /api/origins` reports per origin
 *   the numbers it never received, as ranges `[from, to]`: `removed` below the mark (cancelled,
 *   discarded, refused and not retried: on purpose) and `missing` from the mark up to the highest
 *   number received (still to come). `POST /api/origins/lost` with `{ origin }` is the device
 *   saying that database was lost (`db.lostOrigin`): its `missing` numbers will never come, and
 *   the report calls them `lost`.
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
const NOTE = /^note-[a-z0-9]{1,40}$/;
const TASK = /^task-[a-z0-9]{1,40}$/;
const MAX_BODY = 64 * 1024;
/** A database's origin, as leasehold makes it: 32 hex digits. */
const ORIGIN = /^[0-9a-f]{32}$/;

/** Why a mutation is malformed (422), or null. */
function malformed(m, maxLength) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'the body must be a JSON object';
  if (typeof m.id !== 'string' || m.id.length === 0 || m.id.length > 100) return 'id must be a string of 1–100 characters';
  if (m.op !== 'create' && m.op !== 'update') return "op must be 'create' or 'update'";
  if (typeof m.entity !== 'string' || !(NOTE.test(m.entity) || (TASK.test(m.entity) && m.op === 'create'))) return 'entity must look like note-1 (or task-1, to create a task)';
  if (TASK.test(m.entity) && (typeof m.note !== 'string' || !NOTE.test(m.note))) return 'a task must name its note';
  if (typeof m.text !== 'string') return 'text must be a string';
  if (m.text.length > maxLength) return `text is longer than ${maxLength} characters`;
  if (!Number.isFinite(m.at)) return 'at must be a time in milliseconds';
  return null;
}

/** Why the mutation does not fit what the server has (409), or null. */
function conflict(m, notes, tasks) {
  if (m.op === 'update' && !notes.has(m.entity)) return `there is no ${m.entity}: its create has not arrived`;
  if (m.op === 'create' && (notes.has(m.entity) || tasks.has(m.entity))) return `${m.entity} exists already`;
  if (m.op === 'create' && m.note !== undefined && !notes.has(m.note)) return `there is no ${m.note} to add ${m.entity} to: its create has not arrived`;
  return null;
}

/** The numbers from 1 to `to` not in `counters` and in [from, to], as ranges `[first, last]`. */
function gaps(counters, from, to) {
  const ranges = [];
  for (let n = Math.max(from, 1); n <= to; n++) {
    if (counters.has(n)) continue;
    const last = ranges.at(-1);
    if (last && last[1] === n - 1) last[1] = n;
    else ranges.push([n, n]);
  }
  return ranges;
}

/**
 * What the server knows of one origin's numbers: every number below the highest low-water mark it
 * received and never got was removed on purpose on the device; one from the mark up to the
 * highest number received is still to come, or — once the device said the database was lost —
 * lost with it. (Numbers above the highest received are invisible to the server until one arrives.)
 */
function report(origin, { counters, lowWater, lost }) {
  const highest = counters.size === 0 ? 0 : Math.max(...counters);
  const missing = gaps(counters, lowWater, highest);
  return { origin, received: counters.size, highest, lowWater, removed: gaps(counters, 1, Math.min(lowWater - 1, highest)), missing: lost ? [] : missing, lost: lost ? missing : [] };
}

/** The `leasehold-attempt` header as a number, or null. */
function attemptOf(request) {
  const attempt = Number(request.headers['leasehold-attempt']);
  return Number.isInteger(attempt) && attempt > 0 ? attempt : null;
}

function send(response, status, body, headers = {}) {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
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

/** The request's body as JSON, in `{ value }`; or a 400 already sent, and undefined. */
async function jsonBody(request, response) {
  try {
    return { value: JSON.parse(await readBody(request)) };
  } catch {
    send(response, 400, { error: 'the body is not JSON' });
    return undefined;
  }
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
  /** Each note's latest text; each task's note and text. */
  const notes = new Map();
  const tasks = new Map();
  let duplicates = 0;
  let rejected = 0;
  let unavailable = 0;
  /** The outage answers `POST /api/outage` asked for, first one next. */
  const outage = [];
  /** Per origin: the counters received, the highest low-water mark, and whether its device reported it lost. */
  const origins = new Map();
  const originEntry = (origin) => {
    if (!origins.has(origin)) origins.set(origin, { counters: new Set(), lowWater: 1, lost: false });
    return origins.get(origin);
  };
  const received = (request) => {
    const origin = request.headers['leasehold-origin'];
    const counter = Number(request.headers['leasehold-counter']);
    const lowWater = Number(request.headers['leasehold-low-water']);
    if (typeof origin !== 'string' || !ORIGIN.test(origin) || !Number.isSafeInteger(counter) || counter < 1) return;
    const entry = originEntry(origin);
    entry.counters.add(counter);
    if (Number.isSafeInteger(lowWater) && lowWater > entry.lowWater) entry.lowWater = lowWater;
  };
  const apply = (m) => {
    mutations.push(m);
    ids.add(m.id);
    if (m.note !== undefined) tasks.set(m.entity, { note: m.note, text: m.text });
    else notes.set(m.entity, m.text);
  };
  if (data && existsSync(data)) {
    for (const line of readFileSync(data, 'utf8').split('\n')) if (line.trim()) apply(JSON.parse(line));
  }

  async function api(request, response, path) {
    if (path === '/api/mutations' && request.method === 'POST') {
      let mutation;
      try {
        mutation = JSON.parse(await readBody(request));
      } catch (error) {
        return send(response, 400, { error: error instanceof RangeError ? error.message : 'the body is not JSON' });
      }
      if (outage.length > 0) {
        const { status, retryAfter } = outage.shift();
        unavailable += 1;
        const headers = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
        return send(response, status, { error: status === 429 ? 'too many requests' : 'down for maintenance' }, headers);
      }
      received(request);
      if (ids.has(mutation?.id)) {
        duplicates += 1;
        return send(response, 200, { stored: false, duplicate: true });
      }
      const bad = malformed(mutation, maxLength);
      const clash = bad ? null : conflict(mutation, notes, tasks);
      if (bad || clash) {
        rejected += 1;
        return send(response, bad ? 422 : 409, { error: bad ?? clash });
      }
      const { id, op, entity, note, text, at } = mutation;
      const stored = { id, op, entity, ...(note === undefined ? {} : { note }), text, at, attempt: attemptOf(request), receivedAt: Date.now() };
      // On disk before the answer: a 201 the client acts on is never lost by a restart.
      if (data) appendFileSync(data, `${JSON.stringify(stored)}\n`);
      apply(stored);
      return send(response, 201, { stored: true });
    }
    if (path === '/api/outage' && request.method === 'POST') {
      const body = await jsonBody(request, response);
      if (!body) return;
      const asked = body.value;
      const { count = 1, status = 503, retryAfter } = asked ?? {};
      if (!Number.isInteger(count) || count < 0 || (status !== 503 && status !== 429)) return send(response, 422, { error: 'want { count: an integer ≥ 0, status: 503 or 429, retryAfter? }' });
      for (let i = 0; i < count; i++) outage.push({ status, retryAfter });
      return send(response, 200, { answers: outage.length });
    }
    if (path === '/api/origins/lost' && request.method === 'POST') {
      const body = await jsonBody(request, response);
      if (!body) return;
      const asked = body.value;
      if (typeof asked?.origin !== 'string' || !ORIGIN.test(asked.origin)) return send(response, 422, { error: 'want { origin: 32 hex digits }' });
      const entry = originEntry(asked.origin);
      entry.lost = true;
      return send(response, 200, report(asked.origin, entry));
    }
    if (path === '/api/origins' && request.method === 'GET') return send(response, 200, { origins: [...origins].map(([origin, entry]) => report(origin, entry)) });
    if (path === '/api/mutations' && request.method === 'GET') return send(response, 200, { mutations, duplicates, rejected, unavailable, maxLength });
    if (path === '/api/notes' && request.method === 'GET') return send(response, 200, { notes: Object.fromEntries(notes), tasks: Object.fromEntries(tasks) });
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
      return { mutations, duplicates, rejected, unavailable, maxLength };
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
