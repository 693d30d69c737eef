/**
 * The queues the Node benchmarks put side by side, behind one small interface: leasehold on each
 * backend, the seeds' own algorithms, plainjob (a SQLite job queue on better-sqlite3) and the
 * floor — the cheapest write transaction each driver can do, two per claim+ack.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { better as plainjobConnection, defineQueue, type Logger } from 'plainjob';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import type { SqlDatabase } from '../src/sqlite/driver.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import type { Lease, Transport } from '../src/transport/contract.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { SeedMemoryTransport, SeedSqlTransport } from '../test/support/seed.js';

/** One open queue as a benchmark drives it. */
export interface Queue {
  publish(groupId: string, event: unknown): unknown;
  /** One claim and one ack (or complete) at time `now`; false when nothing was claimable. */
  claimAck(now: number, workerId: string): boolean | Promise<boolean>;
  /** Another consumer of the same queue: a new connection to the same file, or this object. */
  consumer(): Promise<Queue>;
  /** Size of the database in bytes (page_count × page_size), for SQL queues. */
  bytes?(): number;
  close(): void;
}

export type Family = 'leasehold' | 'seed' | 'peer' | 'floor';
export type Driver = 'memory' | 'sqlite-wasm' | 'better-sqlite3';

export interface Contender {
  name: string;
  family: Family;
  driver: Driver;
  /** Opens a fresh, empty queue; `dir` is a scratch directory for files. */
  open(dir: string): Promise<Queue>;
}

const silent: Logger = { error() {}, warn() {}, info() {}, debug() {} };
const VISIBILITY_MS = 30_000;
const newFile = (dir: string): string => join(dir, `bench-${Math.random().toString(36).slice(2)}.db`);
const sqlBytes = (db: SqlDatabase) => (): number => {
  const { n } = db.prepare('SELECT (SELECT page_count FROM pragma_page_count) * (SELECT page_size FROM pragma_page_size) AS n').get<{ n: number }>()!;
  return Number(n);
};

/**
 * publish and claim+ack over a leasehold transport whose clock reads `clock.now`. `combined`:
 * the worker loop of `ackAndClaim` — each step acks the lease it holds and claims the next one in
 * one call, so one step is still one claim and one ack.
 */
function drive(transport: Transport, clock: { now: number }, combined: boolean): Pick<Queue, 'publish' | 'claimAck'> {
  const held = new Map<string, Lease>();
  return {
    publish: (g, e) => transport.publish(g, e),
    async claimAck(time, workerId) {
      clock.now = time;
      if (combined) {
        const lease = held.get(workerId);
        const next = lease ? await transport.ackAndClaim(lease, workerId, VISIBILITY_MS) : await transport.claim(workerId, VISIBILITY_MS);
        if (next) held.set(workerId, next);
        else held.delete(workerId);
        return next !== null;
      }
      const lease = await transport.claim(workerId, VISIBILITY_MS);
      if (lease) await transport.ack(lease);
      return lease !== null;
    },
  };
}

/** leasehold's SqliteTransport on a database `connect()` opens; `connect` may be called again for more consumers. */
function leaseholdSql(connect: () => Promise<SqlDatabase>, shared: boolean, combined = false): () => Promise<Queue> {
  return async () => {
    const db = await connect();
    const clock = { now: 0 };
    const queue: Queue = {
      ...drive(new SqliteTransport(db, { clock: () => clock.now }), clock, combined),
      consumer: shared ? async () => queue : leaseholdSql(connect, false, combined),
      bytes: sqlBytes(db),
      close: () => db.close(),
    };
    return queue;
  };
}

function seedSql(db: SqlDatabase): Queue {
  const seed = new SeedSqlTransport(db);
  const groupOf = db.prepare('SELECT group_id FROM messages WHERE seq = ?');
  return {
    publish: (g, e) => seed.publish(g, e, 0),
    claimAck(now, workerId) {
      const seq = seed.claim(workerId, VISIBILITY_MS, 0, now);
      if (seq === null) return false;
      seed.ack(seq, groupOf.get<{ group_id: string }>(seq)!.group_id);
      return true;
    },
    consumer: () => Promise.reject(new Error('the seed SQL is measured with one consumer')),
    bytes: sqlBytes(db),
    close: () => db.close(),
  };
}

/**
 * The floor: a one-row UPDATE in BEGIN IMMEDIATE … COMMIT, through the same driver seam. A
 * claim+ack is two write transactions, so `claimAck` runs two; `publish` runs one.
 */
function floor(db: SqlDatabase): Queue {
  db.exec('CREATE TABLE floor (k INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO floor VALUES (1, 0)');
  const bump = db.prepare('UPDATE floor SET v = v + 1 WHERE k = 1');
  const write = () => db.transaction(() => bump.run());
  return {
    publish: write,
    claimAck() {
      write();
      write();
      return true;
    },
    consumer: () => Promise.reject(new Error('the floor has one connection')),
    close: () => db.close(),
  };
}

/**
 * plainjob 0.0.14 as its own worker drives it (src/worker.ts, processRegularJobs): one
 * transaction that finds and marks the next pending job, a read of the job, then an autocommit
 * UPDATE marking it done. Its queue has no groups, leases or fencing: a job type and a status.
 */
function plainjob(file: string): Queue {
  const db = new BetterSqlite3(file);
  // defineQueue sets WAL, synchronous=1 (NORMAL) and busy_timeout itself: the settings leasehold uses.
  const queue = defineQueue({ connection: plainjobConnection(db), logger: silent, timeout: VISIBILITY_MS });
  return {
    publish: (_g, e) => queue.add('bench', e),
    claimAck() {
      const claimed = queue.getAndMarkJobAsProcessing('bench');
      if (!claimed) return false;
      const job = queue.getJobById(claimed.id)!;
      JSON.parse(job.data); // leasehold hands back a parsed event; do the same work here
      queue.markJobAsDone(job.id);
      return true;
    },
    consumer: async () => plainjob(file),
    bytes: () => Number(db.pragma('page_count', { simple: true })) * Number(db.pragma('page_size', { simple: true })),
    close: () => queue.close(),
  };
}

function inMemory(combined = false): Queue {
  const clock = { now: 0 };
  const transport = new InMemoryTransport({ clock: () => clock.now });
  const queue: Queue = {
    ...drive(transport, clock, combined),
    consumer: async () => queue,
    close: () => void transport.close(),
  };
  return queue;
}

function seedMemory(): Queue {
  const seed = new SeedMemoryTransport();
  return {
    publish: (g, e) => seed.publish(g, e),
    claimAck(now, workerId) {
      const lease = seed.claim(workerId, VISIBILITY_MS, 0, now);
      if (lease) seed.ack(lease.seq);
      return lease !== null;
    },
    consumer: () => Promise.reject(new Error('the seed in-memory queue is measured with one consumer')),
    close() {},
  };
}

const betterFile = (file: string) => () => openBetterSqliteDatabase(file);

export const contenders: Contender[] = [
  { name: 'InMemoryTransport', family: 'leasehold', driver: 'memory', open: async () => inMemory() },
  { name: 'InMemoryTransport, ackAndClaim', family: 'leasehold', driver: 'memory', open: async () => inMemory(true) },
  { name: 'seed in-memory (sorts every message per claim)', family: 'seed', driver: 'memory', open: async () => seedMemory() },
  { name: 'floor: one-row write transactions, sqlite-wasm', family: 'floor', driver: 'sqlite-wasm', open: async () => floor(await openWasmDatabase()) },
  { name: 'SqliteTransport, sqlite-wasm :memory:', family: 'leasehold', driver: 'sqlite-wasm', open: () => leaseholdSql(() => openWasmDatabase(), true)() },
  { name: 'SqliteTransport ackAndClaim, sqlite-wasm :memory:', family: 'leasehold', driver: 'sqlite-wasm', open: () => leaseholdSql(() => openWasmDatabase(), true, true)() },
  { name: 'seed SQL, sqlite-wasm :memory:', family: 'seed', driver: 'sqlite-wasm', open: async () => seedSql(await openWasmDatabase()) },
  { name: 'floor: one-row write transactions, better-sqlite3 file', family: 'floor', driver: 'better-sqlite3', open: async (dir) => floor(await openBetterSqliteDatabase(newFile(dir))) },
  { name: 'SqliteTransport, better-sqlite3 file (WAL, NORMAL)', family: 'leasehold', driver: 'better-sqlite3', open: (dir) => leaseholdSql(betterFile(newFile(dir)), false)() },
  { name: 'SqliteTransport ackAndClaim, better-sqlite3 file (WAL, NORMAL)', family: 'leasehold', driver: 'better-sqlite3', open: (dir) => leaseholdSql(betterFile(newFile(dir)), false, true)() },
  { name: 'seed SQL, better-sqlite3 file (WAL, NORMAL)', family: 'seed', driver: 'better-sqlite3', open: async (dir) => seedSql(await openBetterSqliteDatabase(newFile(dir))) },
  { name: 'plainjob 0.0.14, better-sqlite3 file (WAL, NORMAL)', family: 'peer', driver: 'better-sqlite3', open: async (dir) => plainjob(newFile(dir)) },
];

/** The contenders of `family` on `driver` (the references a ratio is taken against). */
export function references(driver: Driver, family: Family): Contender[] {
  return contenders.filter((c) => c.driver === driver && c.family === family);
}
