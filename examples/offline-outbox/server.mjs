#!/usr/bin/env node
/**
 * The example's server: it applies each mutation the page's outbox delivers once, in the same
 * SQLite transaction as its receipt (leasehold/receiver), and serves the built page (dist/). It
 * keeps notes, and tasks under a note.
 *
 * - `/api/outbox`, the receiver. `POST` a delivery (what `httpDelivery` sends: the mutation
 *   `{ id, op, entity, note?, text, at }`, its `Idempotency-Key` and `Leasehold-Low-Water`):
 *   201 the first time; a repeat gets the same answer with `Leasehold-Repeat: 1`. Refused for
 *   good (a dead letter on the device): 422 for a malformed mutation or a text longer than
 *   `--max-length`, 409 for an edit of a note it does not have, a task under one, or a second
 *   create. `POST` with `Leasehold-Lost: <origin>`: that device lost its database (answered with
 *   the gaps report). `GET ?origin=<origin>`: what it received from that database, what was
 *   removed on purpose, what is still to come or lost.
 * - `POST /api/outage` with `{ count, status = 503, retryAfter }`: the next `count` deliveries
 *   are answered `status` (503 or 429), with `Retry-After: <retryAfter>` if given. A deploy or a
 *   rate limit, to watch the outbox wait without spending attempts.
 * - `GET /api/mutations`: what it applied, in order, and counts (since it started) of repeats,
 *   refusals and outage answers.
 *
 *   node server.mjs [--port 8787] [--data server.db] [--max-length 140] [--dist dist]
 *
 * Without `--data` the database is in memory. Prints `listening on http://127.0.0.1:<port>`
 * once it accepts connections.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { openBetterSqliteDatabase } from 'leasehold/better-sqlite3';
import { createReceiver, Refusal, sqliteReceipts, toNodeListener } from 'leasehold/receiver';

const { values: args } = parseArgs({
  options: { port: { type: 'string', default: '8787' }, data: { type: 'string', default: ':memory:' }, 'max-length': { type: 'string', default: '140' }, dist: { type: 'string', default: 'dist' } },
});
const maxLength = Number(args['max-length']);

// The app's tables beside the receipts, in one file: a mutation and its receipt commit together.
const db = await openBetterSqliteDatabase(args.data);
db.exec(`CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, text TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, note TEXT NOT NULL REFERENCES notes (id), text TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS applied (n INTEGER PRIMARY KEY, id TEXT, op TEXT, entity TEXT, note TEXT, text TEXT, at INTEGER, attempt INTEGER, origin TEXT, receivedAt INTEGER);`);
const hasNote = db.prepare('SELECT 1 FROM notes WHERE id = ?');
const createNote = db.prepare('INSERT INTO notes (id, text) VALUES (?, ?) ON CONFLICT DO NOTHING');
const createTask = db.prepare('INSERT INTO tasks (id, note, text) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
const updateNote = db.prepare('UPDATE notes SET text = ? WHERE id = ?');
const log = db.prepare('INSERT INTO applied (id, op, entity, note, text, at, attempt, origin, receivedAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
const applied = db.prepare('SELECT id, op, entity, note, text, at, attempt, origin, receivedAt FROM applied ORDER BY n');

/** Why a mutation can never be taken as it is (422), or null. */
function malformed(m) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'the body must be a JSON object';
  if (typeof m.id !== 'string' || m.id.length === 0 || m.id.length > 100) return 'id must be a string of 1–100 characters';
  if (m.op !== 'create' && m.op !== 'update') return "op must be 'create' or 'update'";
  const task = /^task-[a-z0-9]{1,40}$/.test(m.entity);
  if (!/^note-[a-z0-9]{1,40}$/.test(m.entity) && !(task && m.op === 'create')) return 'entity must look like note-1 (or task-1, to create a task)';
  if (task !== (typeof m.note === 'string' && /^note-[a-z0-9]{1,40}$/.test(m.note))) return 'a task must name its note, and only a task';
  if (typeof m.text !== 'string') return 'text must be a string';
  if (m.text.length > maxLength) return `text is longer than ${maxLength} characters`;
  return Number.isFinite(m.at) ? null : 'at must be a time in milliseconds';
}

const counts = { duplicates: 0, rejected: 0, unavailable: 0 };
const receiver = createReceiver({
  store: sqliteReceipts(db),
  // Runs inside the receipt's transaction (synchronously, as SQLite's do). A Refusal rolls back
  // what it wrote and tells the device the mutation will never be taken: a dead letter that
  // holds its record until the user retries or discards it.
  apply(m, { delivery }) {
    const invalid = malformed(m);
    if (invalid) throw new Refusal(invalid);
    if (m.note !== undefined && !hasNote.get(m.note)) throw new Refusal(`there is no ${m.note} to add ${m.entity} to: its create has not arrived`, { status: 409 });
    const changed = m.op === 'update' ? updateNote.run(m.text, m.entity) : m.note === undefined ? createNote.run(m.entity, m.text) : createTask.run(m.entity, m.note, m.text);
    if (changed === 0) throw new Refusal(m.op === 'update' ? `there is no ${m.entity}: its create has not arrived` : `${m.entity} exists already`, { status: 409 });
    log.run(m.id, m.op, m.entity, m.note ?? null, m.text, m.at, delivery.attempt, delivery.origin, Date.now());
    return { status: 201, body: { stored: true } };
  },
});

/** The answers `POST /api/outage` asked for, first one next. */
const outage = [];
const json = (status, body, headers = {}) => Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });

async function api(request, path) {
  if (path === '/api/outbox') {
    const delivery = request.method === 'POST' && request.headers.has('idempotency-key');
    if (delivery && outage.length > 0) {
      const { status, retryAfter } = outage.shift();
      counts.unavailable += 1;
      return json(status, { error: status === 429 ? 'too many requests' : 'down for maintenance' }, retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) });
    }
    const answer = await receiver.handle(request);
    if (answer.headers.has('leasehold-repeat')) counts.duplicates += 1;
    else if (delivery && answer.status >= 400 && answer.status < 500) counts.rejected += 1;
    return answer;
  }
  if (path === '/api/outage' && request.method === 'POST') {
    const { count = 1, status = 503, retryAfter } = (await request.json().catch(() => null)) ?? { count: -1 };
    if (!Number.isInteger(count) || count < 0 || (status !== 503 && status !== 429)) return json(422, { error: 'want { count: an integer ≥ 0, status: 503 or 429, retryAfter? }' });
    for (let i = 0; i < count; i++) outage.push({ status, retryAfter });
    return json(200, { answers: outage.length });
  }
  if (path === '/api/mutations' && request.method === 'GET') {
    const mutations = applied.all().map(({ note, ...m }) => (note === null ? m : { ...m, note }));
    return json(200, { mutations, ...counts, maxLength });
  }
  return json(404, { error: `no ${request.method} ${path}` });
}

const root = resolve(args.dist);
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml' };

function serveFile(request, path) {
  let file = normalize(join(root, path));
  if (file !== root && !file.startsWith(root + sep)) return json(404, { error: 'not found' });
  if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
  if (!existsSync(file)) return json(404, { error: `nothing built in ${root}: run npm run build` });
  // Hashed assets never change; the page and the service worker must be asked for each time, or
  // a new build is never picked up.
  const cache = file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
  return new Response(request.method === 'HEAD' ? null : readFileSync(file), { headers: { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': cache } });
}

const server = createServer(
  toNodeListener((request) => {
    const path = decodeURIComponent(new URL(request.url).pathname);
    return path.startsWith('/api/') ? api(request, path) : serveFile(request, path);
  }),
);
server.listen(Number(args.port), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
const shutdown = () => {
  server.close(() => (db.close(), process.exit(0)));
  server.closeAllConnections();
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
