/**
 * The in-worker half of the browser benchmark: SqliteTransport straight on opfs-sahpool, with
 * no RPC in between, beside the floor (the cheapest write transaction on the same VFS).
 */
import { SqliteTransport } from 'leasehold';
import { fromWasmDatabase, loadSqliteWasm } from 'leasehold/sqlite-wasm';

export interface WorkerRequest {
  backlog: number;
  groups: number;
  ops: number;
  /** Operations per run with synchronous=FULL, where every commit waits for the disk. */
  fullOps: number;
  runs: number;
}

export interface WorkerResult {
  label: string;
  rates: number[];
}

const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  try {
    postMessage({ results: await measure(event.data) });
  } catch (error) {
    postMessage({ error: String(error) });
  }
};

async function measure({ backlog, groups, ops: normalOps, fullOps, runs }: WorkerRequest): Promise<WorkerResult[]> {
  const sqlite3 = await loadSqliteWasm();
  const pool = await sqlite3.installOpfsSAHPoolVfs({ name: 'leasehold-bench', preserveOnInitFailure: true });
  await pool.wipeFiles();
  const open = (synchronous: 'NORMAL' | 'FULL') => {
    const db = fromWasmDatabase(sqlite3, new pool.OpfsSAHPoolDb('/bench.db'));
    db.exec(`PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=${synchronous}`);
    return db;
  };
  const results: WorkerResult[] = [];
  let db = open('NORMAL');
  let now = 1;
  let transport = new SqliteTransport(db, { clock: () => now });
  fill(db, backlog, groups);

  for (const synchronous of ['NORMAL', 'FULL'] as const) {
    if (synchronous === 'FULL') {
      db.close();
      db = open('FULL');
      transport = new SqliteTransport(db, { clock: () => now });
    }
    const durability = synchronous === 'NORMAL' ? 'normal' : 'full';
    const ops = synchronous === 'NORMAL' ? normalOps : fullOps;
    db.exec('CREATE TABLE IF NOT EXISTS floor (k INTEGER PRIMARY KEY, v INTEGER); INSERT OR IGNORE INTO floor VALUES (1, 0)');
    const bump = db.prepare('UPDATE floor SET v = v + 1 WHERE k = 1');
    // The floor: two one-row write transactions, what a claim plus an ack cannot go below.
    results.push({
      label: `floor: 2 one-row write transactions, durability ${durability}`,
      rates: timed(runs + 1, ops, () => {
        db.transaction(() => bump.run());
        db.transaction(() => bump.run());
      }).slice(1),
    });
    const rates: number[] = [];
    for (let run = 0; run <= runs; run++) {
      let elapsed = 0;
      for (let i = 0; i < ops; i++) {
        now += 1;
        const start = performance.now();
        const lease = await transport.claim('bench', 30_000);
        await transport.ack(lease!);
        elapsed += performance.now() - start;
        await transport.publish(`g${(now * 7919) % groups}`, EVENT);
      }
      if (run > 0) rates.push((ops / elapsed) * 1000);
    }
    results.push({ label: `claim+ack in the worker, durability ${durability}`, rates });
    // The same loop with ackAndClaim: each step acks the held lease and claims the next in one commit.
    const combinedRates: number[] = [];
    let held = await transport.claim('bench', 30_000);
    for (let run = 0; run <= runs; run++) {
      let elapsed = 0;
      for (let i = 0; i < ops; i++) {
        now += 1;
        const start = performance.now();
        held = await transport.ackAndClaim(held!, 'bench', 30_000);
        elapsed += performance.now() - start;
        await transport.publish(`g${(now * 7919) % groups}`, EVENT);
      }
      if (run > 0) combinedRates.push((ops / elapsed) * 1000);
    }
    await transport.ack(held!);
    results.push({ label: `claim+ack with ackAndClaim in the worker, durability ${durability}`, rates: combinedRates });
    const publishRates = [];
    for (let run = 0; run <= runs; run++) {
      const start = performance.now();
      for (let i = 0; i < ops; i++) await transport.publish(`g${i % groups}`, EVENT);
      if (run > 0) publishRates.push((ops / (performance.now() - start)) * 1000);
    }
    results.push({ label: `publish in the worker, durability ${durability}`, rates: publishRates });
  }
  db.close();
  await pool.wipeFiles();
  pool.pauseVfs();
  return results;
}

function timed(runs: number, ops: number, body: () => void): number[] {
  const rates = [];
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    for (let i = 0; i < ops; i++) body();
    rates.push((ops / (performance.now() - start)) * 1000);
  }
  return rates;
}

/**
 * Fills the backlog in one transaction, straight into the transport's tables (setup, not
 * measured): publishing 100,000 messages one transaction at a time takes about five minutes on
 * OPFS here. The rows are what `publish` writes; the triggers keep the counters in step.
 */
function fill(db: ReturnType<typeof fromWasmDatabase>, backlog: number, groups: number): void {
  const event = JSON.stringify(EVENT);
  db.transaction(() => {
    db.prepare(
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) ' +
        "INSERT INTO lh_messages (group_id, seq, event) SELECT 'g' || (i % ?), i, ? FROM n",
    ).run(backlog, groups, event);
    db.prepare('INSERT OR IGNORE INTO lh_groups (group_id, priority, first_seq) SELECT group_id, 0, min(seq) FROM lh_messages GROUP BY group_id').run();
  });
}
