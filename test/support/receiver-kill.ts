/**
 * The body of the receiver kill tests (test/receiver-kill.test.ts on a better-sqlite3 file,
 * test/postgres-receiver-kill.test.ts on the run's PostgreSQL server): a device in this process
 * delivers an outbox with consume() + httpDelivery to a receiver in another process
 * (receiver-kill-server.ts) that SIGKILLs itself before, during and after its commits and is
 * started again each time, while the device keeps merging edits into the messages it queued.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consume } from '../../src/consume/consume.js';
import type { Consumer } from '../../src/consume/types.js';
import { httpDelivery, reportLostOrigin, type LostOriginReport } from '../../src/http/index.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';
import { scratchDir } from './backends.js';
import type { EngineConfig, KillPoint, RecordEdit, StartConfig } from './receiver-kill-server.js';
import type { ReceiptRow } from './receiver-stores.js';
import { seeded } from './torture.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** One row of the app's log: one per applied delivery, in the order they were applied. */
export interface LogRow {
  origin: string;
  counter: number;
  revision: number;
  record: string;
  text: string;
  token: string;
}

/** What the server wrote, read once it is stopped. */
export interface ServerState {
  records: Map<string, string>;
  log: LogRow[];
  receipts: ReceiptRow[];
}

export type { EngineConfig };

/** A fresh place for one test's server to keep its data, and a way to read it back. */
export interface ServerSide {
  config: EngineConfig;
  read(): Promise<ServerState>;
  dispose(): Promise<void>;
}

/**
 * Bundles the server script from source into a folder of its own under the repository's `.tmp/`
 * (ignored by git): a plain `node` start is several times quicker than tsx's, which is most of
 * a kill's cost, and from there its external imports (better-sqlite3, pg) resolve to this
 * project's node_modules.
 */
async function bundleServer(): Promise<{ script: string; remove(): void }> {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(root, '.tmp', 'receiver-kill-'));
  const script = join(dir, 'server.mjs');
  await build({
    entryPoints: [join(root, 'test/support/receiver-kill-server.ts')],
    outfile: script,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return { script, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Resolves every waiter at the next beat: the device and the server beat when something happened. */
class Pulse {
  #waiters: (() => void)[] = [];

  beat = (): void => {
    for (const wake of this.#waiters.splice(0)) wake();
  };

  /** @throws Error when nothing happened for `ms`: the run is stuck, and says so rather than time out silently. */
  next(ms = 20_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing happened for ${ms} ms`)), ms);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** One server process, from its spawn (as a standby) to its end. */
interface ServerProcess {
  child: ChildProcess;
  port: Promise<number>;
  /** Its exit and the end of its stdout (a KILL line may still be in the pipe when the exit is seen). */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Where it killed itself, if it did. */
  killedAt: KillPoint | null;
  stderr: string;
  /** Settles once its end was counted (and a restart begun). */
  done?: Promise<void>;
}

const POINTS: readonly KillPoint[] = ['before', 'during', 'after'];

/**
 * The receiver server as a child process that kills itself at random and is started again at
 * once, on a new port, over the same data, until the test calms it or stops it. A standby
 * process (modules loaded, waiting for its start line) is kept ready, so a restart does not
 * wait for Node to start.
 */
class KillingServer {
  url = '';
  starts = 0;
  /** Time spent without a server listening, from each end to the next start's port, in ms. */
  downMs = 0;
  #downSince: number | null = null;
  readonly kills: Record<KillPoint, number> = { before: 0, during: 0, after: 0 };
  /** Where the latest kill struck. */
  lastKill: KillPoint | null = null;
  /** What the receiver answered 500 or 503: none is expected. */
  readonly errors: string[] = [];
  failure: Error | null = null;
  #running: ServerProcess | null = null;
  #standby: ServerProcess | null = null;
  #restarting: Promise<void> = Promise.resolve();
  #held = false;
  #rate: number;

  constructor(
    private readonly script: string,
    private readonly engine: EngineConfig,
    rate: number,
    private readonly random: () => number,
    private readonly onChange: () => void,
  ) {
    this.#rate = rate;
  }

  get selfKills(): number {
    return this.kills.before + this.kills.during + this.kills.after;
  }

  /** @throws the first failure of a child (one that ended other than by a kill, or never listened). */
  check(): void {
    if (this.failure) throw this.failure;
  }

  #spawn(): ServerProcess {
    const child = spawn(process.execPath, [this.script, JSON.stringify(this.engine)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let listening!: (port: number) => void;
    const lines = createInterface({ input: child.stdout! });
    const ended = Promise.all([once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>, once(lines, 'close')]).then(([[code, signal]]) => ({ code, signal }));
    const server: ServerProcess = { child, port: new Promise<number>((resolve) => (listening = resolve)), ended, killedAt: null, stderr: '' };
    child.stderr!.on('data', (chunk) => (server.stderr += chunk));
    child.stdin!.on('error', () => {}); // a standby killed before it was told to start
    lines.on('line', (line) => {
      const [word, value] = line.split(' ');
      if (word === 'PORT') listening(Number(value));
      else if (word === 'KILL') server.killedAt = value as KillPoint;
      else if (word === 'ERROR') this.errors.push(line.slice('ERROR '.length));
    });
    return server;
  }

  async start(): Promise<void> {
    const server = this.#standby ?? this.#spawn();
    this.#standby = this.#spawn();
    this.#running = server;
    server.done = server.ended.then(({ code, signal }) => this.#ended(server, code, signal));
    const start: StartConfig = { point: POINTS[this.starts % POINTS.length]!, rate: this.#rate, seed: Math.floor(this.random() * 2 ** 32) };
    server.child.stdin!.write(`${JSON.stringify(start)}\n`);
    const port = await Promise.race([server.port, server.ended.then(({ code, signal }) => Promise.reject(new Error(`the receiver server ended (${signal ?? code}) before it listened:\n${server.stderr}`)))]);
    this.url = `http://127.0.0.1:${port}/outbox`;
    if (this.#downSince !== null) this.downMs += performance.now() - this.#downSince;
    this.#downSince = null;
    this.starts++;
    this.onChange();
  }

  #ended(server: ServerProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#running === server) this.#running = null;
    this.#downSince ??= performance.now();
    if (server.killedAt !== null && signal === 'SIGKILL') {
      this.kills[server.killedAt]++;
      this.lastKill = server.killedAt;
    } else if (!this.#held) this.failure ??= new Error(`the receiver server ended on its own (${signal ?? code}):\n${server.stderr}`);
    if (!this.#held && this.failure === null) {
      this.#restarting = this.start().catch((error: unknown) => {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
      });
    }
    this.onChange();
  }

  /** Kills the running child from here (no restart follows) and waits until it is gone. */
  async #halt(): Promise<void> {
    this.#held = true;
    await this.#restarting;
    const running = this.#running;
    if (running) {
      running.child.kill('SIGKILL');
      await running.done;
    }
  }

  /** A kill from outside at no chosen point, then a start: nothing sent before it is still in flight. */
  async restart(): Promise<void> {
    await this.#halt();
    this.#held = false;
    await this.start();
  }

  /** From now on a server that never kills itself. */
  async calm(): Promise<void> {
    this.#rate = 0;
    await this.restart();
  }

  /** Kills the running server and the standby, and waits until both are gone. */
  async stop(): Promise<void> {
    await this.#halt();
    const standby = this.#standby;
    this.#standby = null;
    if (standby) {
      standby.child.kill('SIGKILL');
      await standby.ended;
    }
  }

  /** The gaps report of `origin`, over HTTP. */
  async gaps(origin: string): Promise<unknown> {
    const response = await fetch(`${this.url}?origin=${origin}`);
    expect(response.status).toBe(200);
    return response.json();
  }
}

/** What the device was answered for one delivery. */
interface Answer {
  counter: number;
  revision: number;
  repeat: string | null;
  token: string;
}

const GROUPS = 5;

/**
 * A device: an outbox in a better-sqlite3 file, delivered by consume() + httpDelivery to
 * wherever the server listens now, with fast retries (10 ms: each kill is a refused
 * connection until the next start).
 */
class Device {
  origin: string | null = null;
  readonly answers: Answer[] = [];
  /** Seqs of the messages its publishes created: their counters are 1…size, one each. */
  readonly messages = new Set<number>();
  /** The latest text of each record it edited. */
  readonly latest = new Map<string, string>();
  /** Counters of deliveries the server answered 2xx (the device then acked them). */
  readonly delivered = new Set<number>();
  /** What the consumer reported and survived, but for the retries a dead server causes. */
  readonly errors: unknown[] = [];
  private consumer!: Consumer;

  private constructor(
    private readonly db: SqlDatabase,
    readonly transport: SqliteTransport<RecordEdit>,
    private readonly prefix: string,
  ) {}

  static async open(file: string, prefix: string, url: () => string, pulse: Pulse): Promise<Device> {
    const db = await openBetterSqliteDatabase(file);
    const device = new Device(db, new SqliteTransport<RecordEdit>(db), prefix);
    const deliver = httpDelivery<RecordEdit>({
      url,
      retryMs: 10,
      timeoutMs: 15_000,
      onDelivered: async (response, _event, lease) => {
        const body = (await response.json()) as { token: string };
        device.answers.push({ counter: lease.counter!, revision: lease.revision!, repeat: response.headers.get('leasehold-repeat'), token: body.token });
        device.delivered.add(lease.counter!);
      },
    });
    device.consumer = consume(
      device.transport,
      async (event, lease, context) => {
        device.origin ??= lease.origin!;
        try {
          await deliver(event, lease, context);
        } finally {
          pulse.beat();
        }
      },
      { concurrency: 4, idleMinMs: 5, idleMaxMs: 200, graceMs: 0, onError: (error, info) => void device.errors.push({ phase: info.phase, error: String(error) }) },
    );
    return device;
  }

  /** Edit `v` of record `index`: merged into the record's queued message, or a new one behind a message in flight. */
  async edit(index: number, v: number): Promise<void> {
    const record = `${this.prefix}${index}`;
    const text = `${record} edit ${v}`;
    this.messages.add(await this.transport.publish(`g${index % GROUPS}`, { record, text, v }, { key: record, onDuplicate: 'merge' }));
    this.latest.set(record, text);
  }

  /** A message that waits an hour: it stays queued, so its number is never delivered. */
  async hold(v: number): Promise<number> {
    const seq = await this.transport.publish('held', { record: `${this.prefix}held`, text: `held ${v}`, v }, { delayMs: 3_600_000 });
    this.messages.add(seq);
    return this.messages.size; // its counter: one per message created, in order
  }

  async drained(): Promise<void> {
    await expect.poll(async () => (await this.transport.stats()).queued, { timeout: 30_000 }).toBe(0);
    expect((await this.transport.stats()).dead).toBe(0);
  }

  async close(): Promise<void> {
    await this.consumer.stop();
    await this.transport.close();
    this.db.close();
  }
}

/** Ascending numbers as `[from, to]` ranges. */
function ranges(numbers: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const n of numbers) {
    const last = out.at(-1);
    if (last && last[1] === n - 1) last[1] = n;
    else out.push([n, n]);
  }
  return out;
}

/**
 * The log's verdict on exactly-once: per (origin, counter), the revisions applied, in the
 * order applied, must rise strictly — a repeat applied twice or a lower revision after a
 * higher one breaks it.
 */
function orderBreaks(log: LogRow[]): string[] {
  const last = new Map<string, number>();
  const breaks: string[] = [];
  for (const row of log) {
    const at = `${row.origin}/${row.counter}`;
    const before = last.get(at);
    if (before !== undefined && row.revision <= before) breaks.push(`${at}: revision ${row.revision} applied after ${before}`);
    last.set(at, row.revision);
  }
  return breaks;
}

/**
 * Checks a device's whole delivery against what the server wrote: each of its messages has an
 * applied receipt holding the answer of its latest revision; every answer the device got is
 * the first answer of what it sent (or, for a stale delivery, of a later revision); with
 * `drained`, every number arrived and every record holds its latest text.
 * @returns how many answers were repeats, for the figures.
 */
function checkDevice(device: Device, state: ServerState, drained: boolean): { repeats: number; revised: number } {
  const origin = device.origin!;
  const log = state.log.filter((row) => row.origin === origin);
  const token = new Map(log.map((row) => [`${row.counter}/${row.revision}`, row.token]));
  const latest = new Map<number, LogRow>();
  for (const row of log) latest.set(row.counter, row);
  const receipts = state.receipts.filter((r) => r.origin === origin);
  expect(receipts.map((r) => r.counter)).toEqual([...latest.keys()].sort((a, b) => a - b));
  for (const receipt of receipts) {
    const applied = latest.get(receipt.counter)!;
    expect({ counter: receipt.counter, revision: receipt.revision, refused: receipt.refused, status: receipt.status, token: (JSON.parse(receipt.body!) as { token: string }).token }).toEqual({
      counter: applied.counter,
      revision: applied.revision,
      refused: false,
      status: 201,
      token: applied.token,
    });
  }
  const wrong: string[] = [];
  for (const answer of device.answers) {
    const at = `${answer.counter}/${answer.revision}`;
    if (answer.repeat === 'stale') {
      const later = log.some((row) => row.counter === answer.counter && row.revision > answer.revision && row.token === answer.token);
      if (!later) wrong.push(`${at} (stale): ${answer.token}`);
    } else if (token.get(at) !== answer.token) wrong.push(`${at} (${answer.repeat ?? 'applied'}): ${answer.token}, applied as ${token.get(at)}`);
  }
  expect(wrong).toEqual([]);
  for (const counter of device.delivered) expect(latest.has(counter)).toBe(true);
  if (drained) {
    expect(receipts.map((r) => r.counter)).toEqual(Array.from({ length: device.messages.size }, (_, i) => i + 1));
    const stored = Object.fromEntries([...device.latest.keys()].map((record) => [record, state.records.get(record)]));
    expect(stored).toEqual(Object.fromEntries(device.latest));
  }
  return { repeats: device.answers.filter((a) => a.repeat !== null).length, revised: receipts.filter((r) => r.revision > 0).length };
}

/** SOAK=1 kills five times as often (minutes, not seconds). */
const SCALE = process.env.SOAK === '1' ? 5 : 1;
/** About a second a kill on a loaded 2-core machine (the restart is most of it): the default test timeout is too short. */
const timeout = (kills: number) => 60_000 + kills * SCALE * 3_000;
/** At each delivery that reaches a life's kill point, the chance it dies there: a few deliveries a life. */
const KILL_RATE = 0.25;
const RECORDS = 12;

/**
 * The two kill scenarios on one engine: `side()` makes a fresh place for the server's data (a
 * file of the test's own, or a schema of its own) each test.
 */
export function describeReceiverKill(name: string, side: () => Promise<ServerSide>, perRun: { torture: number; beforeLoss: number; afterLoss: number }): void {
  const kills = { torture: perRun.torture * SCALE, beforeLoss: perRun.beforeLoss * SCALE, afterLoss: perRun.afterLoss * SCALE };
  describe(`leasehold/receiver in a process killed with SIGKILL (${name})`, () => {
    let bundle: Awaited<ReturnType<typeof bundleServer>>;
    let scratch: ReturnType<typeof scratchDir>;
    let data: ServerSide;
    let server: KillingServer;
    let pulse: Pulse;
    let edits: number;
    const devices: Device[] = [];

    beforeAll(async () => {
      bundle = await bundleServer();
    });
    afterAll(() => bundle?.remove());

    beforeEach(async () => {
      scratch = scratchDir();
      data = await side();
      pulse = new Pulse();
      edits = 0;
    });
    afterEach(async () => {
      await server?.stop();
      for (const device of devices.splice(0)) await device.close().catch(() => {});
      await data.dispose();
      scratch.remove();
    });

    const startServer = async (seed: number) => {
      server = new KillingServer(bundle.script, data.config, KILL_RATE, seeded(seed), pulse.beat);
      await server.start();
    };
    const openDevice = async (prefix: string) => {
      const device = await Device.open(join(scratch.dir, 'device.db'), prefix, () => server.url, pulse);
      devices.push(device);
      return device;
    };
    /** Waits for the next thing to happen, failing at once if the server failed. */
    const next = async () => {
      server.check();
      await pulse.next();
      server.check();
    };
    /** Edits random records of `device`, one at each thing that happens, until `enough()`. */
    const editUntil = async (device: Device, random: () => number, enough: () => boolean, each?: () => Promise<void>) => {
      while (!enough()) {
        await device.edit(Math.floor(random() * RECORDS), ++edits);
        await each?.();
        await next();
      }
    };
    /**
     * Stops the kills, lets `device` deliver all it holds, reads the gaps of `origins` over
     * HTTP, stops everything and reads what the server wrote: no 500 or 503 on the way, and
     * no number applied twice at one revision or at a lower one after a higher one.
     */
    const settle = async (device: Device, origins: string[]) => {
      await server.calm();
      await device.drained();
      const reports = await Promise.all(origins.map((origin) => server.gaps(origin)));
      await device.close();
      devices.splice(0);
      await server.stop();
      const state = await data.read();
      expect(server.errors).toEqual([]);
      expect(device.errors).toEqual([]);
      expect(orderBreaks(state.log)).toEqual([]);
      return { reports, state };
    };
    const figures = (started: number, what: string) =>
      console.log(`${name}: ${what}; kills ${JSON.stringify(server.kills)} (${server.starts} starts, down ${(server.downMs / 1000).toFixed(1)} s), ${((performance.now() - started) / 1000).toFixed(1)} s`);

    it(`applies every edit once, with its latest content, across ${kills.torture} kills before, inside and after commits`, async () => {
      const started = performance.now();
      await startServer(41);
      const device = await openDevice('r');
      // An edit at each attempt, answered or not: many land while their message waits to be retried.
      await editUntil(device, seeded(4141), () => server.selfKills >= kills.torture);
      const {
        reports: [report],
        state,
      } = await settle(device, [device.origin!]);
      const { repeats, revised } = checkDevice(device, state, true);
      const messages = device.messages.size;
      expect(report).toEqual({
        origin: device.origin,
        lost: false,
        queues: [{ queue: 'default', received: messages, highest: messages, lowWater: expect.any(Number), removed: [], stillToCome: [], lost: [] }],
      });
      // The run did what it claims: kills at each point, answers lost after a commit and
      // answered again, edits merged into messages that had already been tried.
      expect(Object.values(server.kills).every((n) => n > 0)).toBe(true);
      expect(repeats).toBeGreaterThan(0);
      expect(revised).toBeGreaterThan(0);
      figures(started, `${edits} edits in ${messages} messages, ${state.log.length} applied, ${revised} applied at a revision > 0, ${repeats} repeats answered`);
    }, timeout(kills.torture));

    it('reports exactly the numbers never delivered once the device database is deleted mid-run', async () => {
      const started = performance.now();
      await startServer(42);
      const random = seeded(4242);
      const first = await openDevice('a');
      const held: number[] = [];
      await editUntil(first, random, () => edits >= 4);
      held.push(await first.hold(++edits));
      // Until a kill after a commit: the database is then lost before its answer can come, so
      // the server holds a number the device never saw delivered.
      await editUntil(
        first,
        random,
        () => server.selfKills >= kills.beforeLoss && server.lastKill === 'after',
        async () => {
          if (random() < 0.03) held.push(await first.hold(++edits));
        },
      );
      // The database goes with whatever it still held; the server is restarted so that no
      // request of the old database is still on its way when the new one starts.
      await first.close();
      devices.splice(0);
      expect(first.errors).toEqual([]);
      for (const suffix of ['', '-wal', '-shm']) rmSync(join(scratch.dir, `device.db${suffix}`), { force: true });
      await server.restart();
      const lostOrigin = first.origin!;
      const second = await openDevice('b');
      const reported: LostOriginReport | null = await reportLostOrigin({ url: server.url, origin: lostOrigin });
      const target = server.selfKills + kills.afterLoss;
      await editUntil(second, random, () => server.selfKills >= target);
      const {
        reports: [lostReport, newReport],
        state,
      } = await settle(second, [lostOrigin, second.origin!]);
      expect(second.origin).not.toBe(lostOrigin);
      checkDevice(first, state, false);
      checkDevice(second, state, true);
      // What never arrived, from what was published (counters 1…n) and what the server applied.
      const received = new Set(state.log.filter((row) => row.origin === lostOrigin).map((row) => row.counter));
      const published = first.messages.size;
      const highest = Math.max(...received);
      expect(highest).toBeLessThanOrEqual(published);
      const never = Array.from({ length: highest }, (_, i) => i + 1).filter((n) => !received.has(n));
      expect(never).toEqual(expect.arrayContaining(held.filter((n) => n <= highest)));
      expect(never.length).toBeGreaterThan(0);
      const lowWater = Math.max(...state.receipts.filter((r) => r.origin === lostOrigin).map((r) => r.lowWater));
      expect(lostReport).toEqual({
        origin: lostOrigin,
        lost: true,
        queues: [{ queue: 'default', received: received.size, highest, lowWater, removed: [], stillToCome: [], lost: ranges(never) }],
      });
      expect(reported).toEqual(lostReport);
      expect(newReport).toEqual({
        origin: second.origin,
        lost: false,
        queues: [{ queue: 'default', received: second.messages.size, highest: second.messages.size, lowWater: expect.any(Number), removed: [], stillToCome: [], lost: [] }],
      });
      const unacked = [...received].filter((n) => !first.delivered.has(n)).length;
      expect(unacked).toBeGreaterThan(0);
      figures(started, `${published} messages on the lost database (${received.size} received, ${unacked} of them never acked, ${never.length} never delivered), ${second.messages.size} on the new one`);
    }, timeout(kills.beforeLoss + kills.afterLoss));
  });
}
