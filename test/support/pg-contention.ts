/**
 * The PostgreSQL contention run: consumer processes (pg-contention-child.ts), each with several
 * connections, race for one queue on a real server while this process publishes to it; then the
 * commit-ordered history the server logged (pg-history.ts) goes through the history checker.
 * Chaos on request: SIGKILL of consumer processes (each replaced by a fresh one) and a restart
 * of the server, at given numbers of acks. Besides the checker's verdict it cross-checks what
 * clients were told: every publish and every ack that resolved is in the committed history.
 */
import pg from 'pg';
import { StorageError } from '../../src/errors.js';
import { fromPg } from '../../src/postgres/pg.js';
import { quoteIdent } from '../../src/postgres/schema.js';
import { PostgresTransport } from '../../src/postgres/transport.js';
import type { PublishItem } from '../../src/transport/contract.js';
import { type RunningChild, runChild } from './child.js';
import { checkHistory, type HistoryEntry, type Verdict } from './history.js';
import { createLog, historyFromLog, recorded } from './pg-history.js';
import { seeded } from './torture.js';

const childScript = new URL('./pg-contention-child.ts', import.meta.url).pathname;

export interface PgContentionOptions {
  url: string;
  /** A schema of its own (created; dropped at the end). */
  schema: string;
  processes: number;
  connections: number;
  messages: number;
  groups: number;
  visibilityMs: number;
  /** Share of claims whose handler stalls past the lease. */
  stallRate: number;
  seed: number;
  /** Consumers take up to this many messages per step with ackAndClaimMany (default: one at a time, ackAndClaim and the rest). */
  batch?: number;
  /** SIGKILL a consumer process (and start a replacement) when this many acks were reported. */
  killAtAcks?: number[];
  /** Restart the server (`restart`, e.g. `pg_ctl restart -m immediate`) when this many acks were reported. */
  restartAtAcks?: number[];
  restart?: () => void;
}

export interface PgContentionResult {
  history: HistoryEntry[];
  remaining: number[];
  verdict: Verdict;
  /** Publishes and acks clients were told succeeded but that are not in the committed history. */
  toldButMissing: string[];
  /** StorageError codes clients saw, with counts; and any other failure a child reported. */
  storageErrors: Record<string, number>;
  /**
   * STORAGE_BUSY from a deadlock PostgreSQL broke (40P01: the victim's call changed nothing), and
   * the first few StorageErrors that are neither that nor STORAGE_UNAVAILABLE, with their causes.
   */
  deadlocks: number;
  storageDetails: string[];
  childFailures: string[];
  publishFailures: number;
  acksReported: number;
  kills: number;
  /** Server restarts done, and acks reported after the last one (the run carried on). */
  restarts: number;
  acksAfterRestart: number;
  /** Logged calls by SQL function (`ack_claim_many`, `claim`, …): what the consumers did. */
  calls: Record<string, number>;
  /** ackAndClaimMany calls by how many leases each claimed (0 … max). */
  claimedPerCall: Record<number, number>;
  /** Wall time of the run. */
  ms: number;
}

export async function runPgContention(o: PgContentionOptions): Promise<PgContentionResult> {
  const started = Date.now();
  const random = seeded(o.seed);
  const pool = new pg.Pool({ connectionString: o.url, max: 2 });
  const db = fromPg(pool);
  const s = quoteIdent(o.schema);
  const producer = new PostgresTransport<{ n: number }>(recorded(db, o.schema), { schema: o.schema });
  await producer.stats(); // migrates the schema and opens the queue before anyone races for it
  await createLog(db, o.schema);

  const told = { published: [] as number[], acked: [] as string[] };
  const storageErrors: Record<string, number> = {};
  const storageDetails: string[] = [];
  let deadlocks = 0;
  const childFailures: string[] = [];
  let acks = 0;
  let acksAfterRestart = 0;
  let restarts = 0;
  let publishing = true;
  let kills = 0;
  let generation = 0;
  const live = new Set<RunningChild>();
  const all: Promise<unknown>[] = [];
  const kill = [...(o.killAtAcks ?? [])].sort((a, b) => a - b);
  const restart = [...(o.restartAtAcks ?? [])].sort((a, b) => a - b);

  const spawnConsumer = (slot: number) => {
    const name = `p${slot}.${generation++}`;
    let ready!: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    const child = runChild(
      childScript,
      [o.url, o.schema, name, String(o.connections), String(o.visibilityMs), String(o.seed * 1000 + generation), String(o.stallRate), String(o.batch ?? 0)],
      (line) => {
        const [kind, a, b] = line.split(' ');
        if (kind === 'READY') ready();
        else if (kind === 'A') onAck(`${a}#${b}`);
        else if (kind === 'E') {
          storageErrors[a!] = (storageErrors[a!] ?? 0) + 1;
          if (a === 'STORAGE_BUSY') deadlocks += b === '40P01' ? 1 : 0;
          if (a !== 'STORAGE_UNAVAILABLE' && !(a === 'STORAGE_BUSY' && b === '40P01') && storageDetails.length < 5) storageDetails.push(`${name}: ${line.slice(2)}`);
        }
        else if (kind === 'X') childFailures.push(`${name}: ${line.slice(2)}`);
      },
      { stdin: true },
    );
    if (!publishing) child.proc.stdin!.end();
    live.add(child);
    all.push(
      child.ended.then(({ code, signal, stderr }) => {
        live.delete(child);
        if (signal !== 'SIGKILL' && code !== 0) childFailures.push(`${name} exited with ${code}: ${stderr.slice(-2000)}`);
      }),
    );
    return { child, slot, ready: Promise.race([isReady, child.ended]) };
  };

  const slots = new Map<RunningChild, number>();
  const onAck = (lease: string) => {
    told.acked.push(lease);
    acks++;
    if (restarts > 0) acksAfterRestart++;
    while (kill.length > 0 && acks >= kill[0]!) {
      kill.shift();
      const victims = [...live];
      const victim = victims[Math.floor(random() * victims.length)];
      if (!victim) continue;
      kills++;
      victim.proc.kill('SIGKILL');
      slots.set(spawnConsumer(slots.get(victim)!).child, slots.get(victim)!);
    }
    if (restart.length > 0 && acks >= restart[0]!) {
      restart.shift();
      restarts++;
      acksAfterRestart = 0;
      o.restart!();
    }
  };

  try {
    const first = Array.from({ length: o.processes }, (_, slot) => spawnConsumer(slot));
    for (const { child, slot } of first) slots.set(child, slot);
    await Promise.all(first.map((c) => c.ready));

    let publishFailures = 0;
    const batch = 100;
    for (let n = 0; n < o.messages; n += batch) {
      const items: PublishItem<{ n: number }>[] = [];
      for (let i = n; i < Math.min(n + batch, o.messages); i++) items.push({ groupId: `g${Math.floor(random() * o.groups)}`, event: { n: i } });
      try {
        told.published.push(...(await producer.publishMany(items)));
      } catch (error) {
        // The server is down: whether the batch committed is for the log to say.
        if (!(error instanceof StorageError)) throw error;
        publishFailures++;
      }
    }
    publishing = false;
    for (const child of live) child.proc.stdin!.end();
    while (live.size > 0) await Promise.all([...all]);

    // After a restart the pool may still hand out a connection that died with the old server.
    const read = async <T>(call: () => Promise<T>): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await call();
        } catch (error) {
          if (!(error instanceof StorageError) || attempt === 3) throw error;
        }
      }
    };
    const history = await read(() => historyFromLog(db, o.schema));
    const counts = await read(() => db.query<{ fn: string; n: string }>(`SELECT fn, count(*) AS n FROM ${s}.lh_test_log GROUP BY fn`));
    const calls = Object.fromEntries(counts.map((r) => [r.fn, Number(r.n)]));
    // The first row of an ack_claim_many log entry is the acks' outcome, the rest its claims.
    const sizes = await read(() =>
      db.query<{ k: number; n: string }>(`SELECT json_array_length(rows) - 1 AS k, count(*) AS n FROM ${s}.lh_test_log WHERE fn = 'ack_claim_many' GROUP BY k`),
    );
    const claimedPerCall = Object.fromEntries(sizes.map((r) => [Number(r.k), Number(r.n)]));
    const snapshot = await read(() => producer.inspect());
    const remaining = snapshot.groups.flatMap((g) => g.messages.map((m) => m.seq));
    const verdict = checkHistory(history, remaining);
    const publishedInLog = new Set(history.flatMap((e) => (e.op === 'publish' ? [e.seq] : [])));
    const ackedInLog = new Set(history.flatMap((e) => (e.op === 'ack' && e.ok ? [`${e.seq}#${e.attempt}`] : [])));
    const toldButMissing = [
      ...told.published.filter((seq) => !publishedInLog.has(seq)).map((seq) => `publish ${seq}`),
      ...told.acked.filter((lease) => !ackedInLog.has(lease)).map((lease) => `ack ${lease}`),
    ];
    return { history, remaining, verdict, toldButMissing, storageErrors, deadlocks, storageDetails, childFailures, publishFailures, acksReported: acks, kills, restarts, acksAfterRestart, calls, claimedPerCall, ms: Date.now() - started };
  } finally {
    for (const child of live) child.proc.kill('SIGKILL');
    await Promise.all(all);
    await db.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`).catch(() => {});
    await pool.end();
  }
}
