/**
 * `npx tsx bench/probe-sqlite.ts [--backlogs=1000,10000] [--rounds=5] [--ops=1500]`: where one
 * claim + one ack spends its time on better-sqlite3 (a file, WAL, synchronous=NORMAL), split
 * into the commit, the SQL, the driver crossing and the transport's JavaScript. Not part of
 * `npm run bench`; nothing here is asserted.
 *
 * Every variant runs the same steady-backlog loop as bench/transport.ts (a timed claim+ack, then
 * an untimed publish of a replacement), in turns with the others, and prints µs per claim+ack:
 * - `floor pair`: two one-row UPDATE transactions, raw better-sqlite3.
 * - `plainjob`: its worker's three calls, as bench/contenders.ts drives it.
 * - `transport`: SqliteTransport.claim then .ack, through the async API and the driver seam.
 * - `raw SQL`: the transport's own claim and ack statements, prepared on the raw better-sqlite3
 *   connection and run with no transport code and no driver seam (BEGIN/COMMIT statements too).
 * - `raw SQL, :memory:` and `… exclusive`: the same with no file, or with no file locks, to
 *   split the commit's I/O and locking from the SQL's own CPU.
 * - `crossing`: eight `SELECT ?` through better-sqlite3, the cost of statements that do nothing.
 * - `plainjob, memory` and `transport, memory`: each whole worker on a database in memory.
 * Then WAL frames per claim and per ack, leasehold's and plainjob's (WAL growth with checkpoints
 * off; printed when every variant runs, or with `--frames`).
 *
 * Options: `--only=a,b` keeps the variants whose names contain one of these; `--base=<dir>` adds
 * the transport of another checkout, in the same turns (an A/B in one process);
 * `--checkpoint=N` sets wal_autocheckpoint on every file, `--transport-checkpoint=N,M` adds the
 * transport at each of these.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import { better as plainjobConnection, defineQueue } from 'plainjob';
import { fromBetterSqlite } from '../src/sqlite/better.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { EVENT_100B } from './transport.js';
import { median } from './lib.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const backlogs = (option('backlogs') ?? '1000,10000,100000').split(',').map(Number);
const rounds = Number(option('rounds') ?? 5);
const OPS = Number(option('ops') ?? 1500);
const only = option('only')?.split(',');
const GROUPS = 100;
const VIS = 30_000;
const dir = mkdtempSync(join(tmpdir(), 'leasehold-probe-'));
let files = 0;
const newFile = () => join(dir, `p${files++}.db`);

type Db = InstanceType<typeof BetterSqlite3>;
/** `--checkpoint=N`: wal_autocheckpoint for every file the probe opens (SQLite's default 1000). */
const checkpoint = option('checkpoint');
function openFile(file: string, exclusive = false): Db {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  if (exclusive) db.pragma('locking_mode = EXCLUSIVE');
  if (checkpoint !== undefined) db.pragma(`wal_autocheckpoint = ${Number(checkpoint)}`);
  return db;
}

interface Variant {
  name: string;
  /** One claim + ack at time `now`. */
  step(now: number): unknown;
  /** Untimed: one publish to group `g`. */
  publish(g: string): unknown;
}

const json = JSON.stringify(EVENT_100B);

function floorPair(): Variant {
  const db = openFile(newFile());
  db.exec('CREATE TABLE f (k INTEGER PRIMARY KEY, v INTEGER); INSERT INTO f VALUES (1, 0)');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const bump = db.prepare('UPDATE f SET v = v + 1 WHERE k = 1');
  const one = () => {
    begin.run();
    bump.run();
    commit.run();
  };
  return { name: 'floor pair', step: () => (one(), one()), publish: () => undefined };
}

function crossing(): Variant {
  const db = openFile(newFile());
  const s = db.prepare('SELECT ? AS x');
  return { name: 'crossing ×8 (SELECT ?)', step: () => { for (let i = 0; i < 8; i++) s.get(i); }, publish: () => undefined };
}

function plainjob(memory = false): Variant {
  const db = new BetterSqlite3(memory ? ':memory:' : newFile());
  const queue = defineQueue({ connection: plainjobConnection(db), logger: { error() {}, warn() {}, info() {}, debug() {} }, timeout: VIS });
  if (checkpoint !== undefined) db.pragma(`wal_autocheckpoint = ${Number(checkpoint)}`);
  return {
    name: memory ? 'plainjob, memory' : 'plainjob',
    step() {
      const claimed = queue.getAndMarkJobAsProcessing('bench')!;
      const job = queue.getJobById(claimed.id)!;
      JSON.parse(job.data);
      queue.markJobAsDone(job.id);
    },
    publish: () => queue.add('bench', EVENT_100B),
  };
}

/**
 * `--base=<dir>`: a checkout of another commit (with node_modules linked in) whose transport runs
 * beside this tree's, in the same turns: an interleaved A/B within one process.
 */
const baseDir = option('base');
const Base = baseDir ? ((await import(join(baseDir, 'src/transport/sqlite.ts'))) as { SqliteTransport: typeof SqliteTransport }).SqliteTransport : undefined;

async function transport(backlog: number, Transport = SqliteTransport, label = '', checkpointPages?: number, memory = false): Promise<Variant & { async: true }> {
  const clock = { now: 1 };
  const db = memory ? new BetterSqlite3(':memory:') : openFile(newFile());
  if (checkpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${checkpointPages}`);
  const t = new Transport(fromBetterSqlite(db), { clock: () => clock.now });
  for (let i = 0; i < backlog; i++) await t.publish(`g${i % GROUPS}`, EVENT_100B);
  return {
    name: `transport${label} (claim, ack)`,
    async: true,
    async step(now: number) {
      clock.now = now;
      const lease = (await t.claim('w', VIS))!;
      await t.ack(lease);
    },
    publish: (g) => t.publish(g, EVENT_100B),
  };
}

/** The transport's claim and ack SQL on a raw connection (schema made by the transport). */
async function rawSql(backlog: number, how: 'file' | 'exclusive' | 'memory' | 'one statement each, autocommit'): Promise<Variant> {
  const raw = how === 'memory' ? new BetterSqlite3(':memory:') : openFile(newFile(), how === 'exclusive');
  // The schema and the fill through the transport itself.
  const clock = { now: 1 };
  const t = new SqliteTransport(fromBetterSqlite(raw), { clock: () => clock.now });
  for (let i = 0; i < backlog; i++) await t.publish(`g${i % GROUPS}`, EVENT_100B);
  const queue = 1;
  const begin = raw.prepare('BEGIN IMMEDIATE');
  const commit = raw.prepare('COMMIT');
  const queueRuns = '(SELECT paused FROM lh_counters WHERE queue_id = ?) IS NULL';
  const nextGroup =
    'SELECT group_id, priority FROM lh_groups WHERE queue_id = ? AND priority >= ? AND (locked_until IS NULL OR locked_until < ?) ' +
    `AND paused IS NULL AND ${queueRuns} ORDER BY claim_order, first_seq LIMIT 1`;
  const claimGroup = raw.prepare(
    'UPDATE OR FAIL lh_groups SET holder = ?, locked_until = ?, head_attempt = head_attempt + 1, ' +
      'claim_order = (SELECT claims + 1 FROM lh_counters WHERE queue_id = ?) ' +
      `WHERE queue_id = ? AND group_id = (SELECT group_id FROM (${nextGroup})) AND head_attempt < ? RETURNING group_id, head_attempt`,
  );
  const head = raw.prepare('SELECT seq, event, counter FROM lh_messages WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1');
  const lowWater = raw.prepare('SELECT min(counter) AS low FROM lh_messages WHERE queue_id = ?');
  const ackHead = raw.prepare(
    'DELETE FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq = ? ' +
      'AND EXISTS (SELECT 1 FROM lh_groups WHERE queue_id = ? AND group_id = ? AND holder = ? AND head_attempt = ?) ' +
      'AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = ? AND group_id = ? AND seq < ?)',
  );
  const max = Number.MAX_SAFE_INTEGER;
  // The claim as one statement: the head and the low-water mark read in its RETURNING clause.
  const claimOne = raw.prepare(
    'UPDATE OR FAIL lh_groups SET holder = ?, locked_until = ?, head_attempt = head_attempt + 1, ' +
      'claim_order = (SELECT claims + 1 FROM lh_counters WHERE queue_id = ?) ' +
      `WHERE queue_id = ? AND group_id = (SELECT group_id FROM (${nextGroup})) AND head_attempt < ? RETURNING group_id, head_attempt, ` +
      '(SELECT seq FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1) AS seq, ' +
      '(SELECT event FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1) AS event, ' +
      '(SELECT counter FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1) AS counter, ' +
      '(SELECT min(counter) FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id) AS low',
  );
  if (how === 'one statement each, autocommit') {
    return {
      name: `raw SQL, ${how}`,
      step(now: number) {
        const leased = claimOne.all('w', now + VIS, queue, queue, queue, 0, now, queue, max)[0] as { group_id: string; head_attempt: number; seq: number; event: string };
        JSON.parse(leased.event);
        ackHead.run(queue, leased.group_id, leased.seq, queue, leased.group_id, 'w', leased.head_attempt, queue, leased.group_id, leased.seq);
      },
      publish: (g) => t.publish(g, EVENT_100B),
    };
  }
  return {
    name: `raw SQL, ${how}`,
    step(now: number) {
      begin.run();
      const leased = claimGroup.get('w', now + VIS, queue, queue, queue, 0, now, queue, max) as { group_id: string; head_attempt: number };
      const h = head.get(queue, leased.group_id) as { seq: number; event: string; counter: number };
      lowWater.get(queue);
      commit.run();
      JSON.parse(h.event);
      begin.run();
      ackHead.run(queue, leased.group_id, h.seq, queue, leased.group_id, 'w', leased.head_attempt, queue, leased.group_id, h.seq);
      commit.run();
    },
    publish: (g) => t.publish(g, EVENT_100B),
  };
}

/** WAL frames one claim and one ack append (checkpoints off; frame = 24 B header + page). */
async function frames(backlog: number): Promise<string> {
  const file = newFile();
  const raw = openFile(file);
  raw.pragma('wal_autocheckpoint = 0');
  const clock = { now: 1 };
  const t = new SqliteTransport(fromBetterSqlite(raw), { clock: () => clock.now });
  for (let i = 0; i < backlog; i++) await t.publish(`g${i % GROUPS}`, EVENT_100B);
  const page = Number(raw.pragma('page_size', { simple: true }));
  const wal = () => statSync(`${file}-wal`).size;
  let claim = 0;
  let ack = 0;
  const n = 200;
  for (let i = 0; i < n; i++) {
    clock.now++;
    const a = wal();
    const lease = (await t.claim('w', VIS))!;
    const b = wal();
    await t.ack(lease);
    claim += b - a;
    ack += wal() - b;
    await t.publish(`g${(i * 7919) % GROUPS}`, EVENT_100B);
  }
  const per = (bytes: number) => (bytes / n / (page + 24)).toFixed(2);
  // plainjob the same way: its claim transaction, then its autocommit 'done'.
  const pjFile = newFile();
  const pjDb = new BetterSqlite3(pjFile);
  const pj = defineQueue({ connection: plainjobConnection(pjDb), logger: { error() {}, warn() {}, info() {}, debug() {} }, timeout: VIS });
  pjDb.pragma('wal_autocheckpoint = 0');
  for (let i = 0; i < backlog; i++) pj.add('bench', EVENT_100B);
  const pjWal = () => statSync(`${pjFile}-wal`).size;
  let pjClaim = 0;
  let pjDone = 0;
  for (let i = 0; i < n; i++) {
    const a = pjWal();
    const claimed = pj.getAndMarkJobAsProcessing('bench')!;
    pj.getJobById(claimed.id);
    const b = pjWal();
    pj.markJobAsDone(claimed.id);
    pjClaim += b - a;
    pjDone += pjWal() - b;
    pj.add('bench', EVENT_100B);
  }
  return `frames per claim ${per(claim)}, per ack ${per(ack)}; plainjob per claim ${per(pjClaim)}, per done ${per(pjDone)}`;
}

try {
  for (const backlog of backlogs) {
    const factories: [string, () => Variant | Promise<Variant>][] = [
      ['floor pair', floorPair], ['crossing', crossing], ['plainjob', plainjob], ['transport', () => transport(backlog)],
      ...(Base ? [['transport (base)', () => transport(backlog, Base, ' (base)')] as [string, () => Promise<Variant>]] : []),
      // `--transport-checkpoint=N,M`: the transport again with wal_autocheckpoint at each of these.
      ...(option('transport-checkpoint') ?? '').split(',').filter(Boolean).map((n) => [`transport, checkpoint ${n}`, () => transport(backlog, SqliteTransport, `, checkpoint ${n}`, Number(n))] as [string, () => Promise<Variant>]),
      ['plainjob, memory', () => plainjob(true)],
      ['transport, memory', () => transport(backlog, SqliteTransport, ', memory', undefined, true)],
      ...(Base ? [['transport (base), memory', () => transport(backlog, Base, ' (base), memory', undefined, true)] as [string, () => Promise<Variant>]] : []),
      ['raw SQL, file', () => rawSql(backlog, 'file')], ['raw SQL, exclusive', () => rawSql(backlog, 'exclusive')], ['raw SQL, memory', () => rawSql(backlog, 'memory')],
      ['raw SQL, one statement each', () => rawSql(backlog, 'one statement each, autocommit')],
    ];
    const variants: Variant[] = [];
    for (const [name, make] of factories) if (!only || only.some((o) => name.includes(o))) variants.push(await make());
    for (const pj of variants.filter((v) => v.name.startsWith('plainjob'))) for (let i = 0; i < backlog; i++) pj.publish('');
    const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    let now = 10;
    for (let round = 0; round <= rounds; round++) {
      for (const v of variants) {
        let elapsed = 0;
        for (let i = 0; i < OPS; i++) {
          now++;
          const start = performance.now();
          const r = v.step(now);
          if (r instanceof Promise) await r;
          elapsed += performance.now() - start;
          const p = v.publish(`g${(now * 7919) % GROUPS}`);
          if (p instanceof Promise) await p;
        }
        if (round > 0) times.get(v.name)!.push((elapsed / OPS) * 1000);
      }
    }
    console.log(`\nbacklog ${backlog}, ${GROUPS} groups, ${rounds} rounds × ${OPS} claim+acks, µs per claim+ack (median; min–max)`);
    for (const [name, t] of times) console.log(`  ${name.padEnd(28)} ${median(t).toFixed(1).padStart(6)}  (${Math.min(...t).toFixed(1)}–${Math.max(...t).toFixed(1)})`);
    if (!only || process.argv.includes('--frames')) console.log(`  ${await frames(backlog)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
// plainjob's maintenance timer would keep the process alive.
process.exit(0);
