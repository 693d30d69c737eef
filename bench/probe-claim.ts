/**
 * `npx tsx bench/probe-claim.ts [--backlog=10000] [--claims=2000] [--rounds=5]`: what the single
 * claim statement of SqliteTransport costs on sqlite-wasm (`:memory:`, the engine the browser
 * runs, no file calls), beside other ways of reading what it returns. Not part of
 * `npm run bench`; nothing here is asserted.
 *
 * The variants, in alternating rounds on one database (100 groups), each claim timed with the
 * parse of the event and followed by an untimed delete of the claimed head (which runs the
 * transport's removal trigger as an ack does):
 * - `shipped`: the transport's statement, captured as it prepares it: the lease, the head as one
 *   JSON array and the low-water mark.
 * - `no mark`, `no head, no mark`: the same statement with less in its RETURNING.
 * - `three subqueries`: the head's seq, counter and event each by a subquery of its own.
 * - `two statements in a transaction`: the lease and the mark, then the head by a SELECT, inside
 *   BEGIN/COMMIT (what one lease taken by two statements needs to be atomic).
 * - `two statements, no transaction`: the same without BEGIN/COMMIT, for the transaction's cost.
 */
import { performance } from 'node:perf_hooks';
import type { SqlDatabase, SqlRow, SqlValue } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { median } from './lib.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const BACKLOG = Number(option('backlog') ?? 10_000);
const CLAIMS = Number(option('claims') ?? 2000);
const ROUNDS = Number(option('rounds') ?? 5);
const GROUPS = 100;
const QUEUE = 1; // the default queue's id in a new database
const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };

const raw = await openWasmDatabase();
const prepared: string[] = [];
const capturing = Object.assign(Object.create(raw) as SqlDatabase, {
  prepare: (sql: string) => {
    prepared.push(sql);
    return raw.prepare(sql);
  },
});
let now = 1;
const transport = new SqliteTransport<typeof EVENT>(capturing, { clock: () => now });
const variantsCount = 6;
const total = BACKLOG + CLAIMS * (ROUNDS + 1) * variantsCount;
for (let from = 0; from < total; from += 1000) {
  await transport.publishMany(Array.from({ length: Math.min(1000, total - from) }, (_, i) => ({ groupId: `g${((from + i) * 7919) % GROUPS}`, event: EVENT })));
}
// The claim statement is prepared with the transport; find it by its start.
const shippedSql = prepared.find((sql) => sql.startsWith('UPDATE OR FAIL lh_groups SET holder'));
if (!shippedSql) throw new Error('the claim statement was not found: has its text changed?');
const mark = ', (SELECT min(counter) FROM lh_messages WHERE queue_id = ?) AS low';
const headStart = shippedSql.indexOf(", (SELECT '['");
if (!shippedSql.includes(mark) || headStart < 0) throw new Error('the claim statement no longer reads the head and mark this probe expects');
const update = shippedSql.slice(0, shippedSql.indexOf('RETURNING'));
const firstOf = (column: string) => `(SELECT ${column} FROM lh_messages m WHERE m.queue_id = ? AND m.group_id = lh_groups.group_id ORDER BY m.seq LIMIT 1) AS ${column}`;

/** The claim statement's own parameters (holder, expiry, the walk's), then one queue id per subquery added. */
const params = (subqueries: number): SqlValue[] => ['probe', now + 30_000, QUEUE, QUEUE, QUEUE, QUEUE, 0, now, QUEUE, 100, ...Array<number>(subqueries).fill(QUEUE)];
const one = (sql: string, subqueries: number, read: (row: SqlRow) => void) => {
  const statement = raw.prepare(sql);
  return (): string => {
    const row = statement.all(...params(subqueries))[0];
    if (!row) throw new Error('nothing to claim');
    read(row);
    return row.group_id as string;
  };
};
const head = raw.prepare('SELECT seq, event, counter FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1');
const leaseAndMark = raw.prepare(`${update}RETURNING group_id, head_attempt${mark}`);
const begin = raw.prepare('BEGIN IMMEDIATE');
const commit = raw.prepare('COMMIT');
const twoStatements = (): string => {
  const row = leaseAndMark.all(...params(1))[0];
  if (!row) throw new Error('nothing to claim');
  JSON.parse(head.get<{ event: string }>(QUEUE, row.group_id as string)!.event);
  return row.group_id as string;
};
const variants: Record<string, () => string> = {
  shipped: one(shippedSql, 2, (row) => JSON.parse(row.head as string)),
  'no mark': one(shippedSql.replace(mark, ''), 1, (row) => JSON.parse(row.head as string)),
  'no head, no mark': one(shippedSql.slice(0, headStart), 0, () => {}),
  'three subqueries': one(`${update}RETURNING group_id, head_attempt, ${firstOf('seq')}, ${firstOf('counter')}, ${firstOf('event')}${mark}`, 4, (row) => JSON.parse(row.event as string)),
  'two statements in a transaction': () => {
    begin.run();
    try {
      return twoStatements();
    } finally {
      commit.run();
    }
  },
  'two statements, no transaction': twoStatements,
};
if (Object.keys(variants).length !== variantsCount) throw new Error('variantsCount is out of date');
const removeHead = raw.prepare('DELETE FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq = (SELECT min(seq) FROM lh_messages WHERE queue_id = ? AND group_id = ?)');
const times = new Map<string, number[]>();
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, claim] of Object.entries(variants)) {
    let ms = 0;
    for (let i = 0; i < CLAIMS; i++) {
      now += 1;
      const start = performance.now();
      const group = claim();
      ms += performance.now() - start;
      removeHead.run(QUEUE, group, QUEUE, group);
    }
    if (round > 0) times.set(name, [...(times.get(name) ?? []), (ms * 1000) / CLAIMS]);
  }
}
console.log(`µs per claim, sqlite-wasm :memory:, backlog ${total.toLocaleString('en-US')} falling to ${BACKLOG.toLocaleString('en-US')}, median of ${ROUNDS} rounds of ${CLAIMS}\n`);
for (const [name, values] of times) console.log(`${median(values).toFixed(2).padStart(6)}  ${name}  [${values.map((v) => v.toFixed(1)).join(', ')}]`);
raw.close();
