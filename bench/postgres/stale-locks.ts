/**
 * `npx tsx bench/postgres/stale-locks.ts [--workers=4,16] [--forms=claim-ack,claimMany,ackAndClaimMany] [--runs=3]`:
 * an experiment behind docs/postgres.md's note on row-lock waits, not a shipped path.
 *
 * The claim picks its group with `FOR UPDATE SKIP LOCKED` over the round-robin order. A row
 * another worker claimed and committed after this statement's snapshot still looks free here,
 * so it is locked (its newest version), found taken on the recheck and skipped — but stays
 * locked until this transaction ends, and that group's holder waits on it to ack. This runs
 * each form as shipped beside a variant whose claim reads candidates without locks and locks
 * each in a statement of its own (a fresh snapshot, so a taken row no longer matches and is
 * never locked), on one throwaway durable server, interleaved, and samples how many backends
 * wait on a lock every 5 ms.
 */
import os from 'node:os';
import pg from 'pg';
import { startPostgres } from '../../scripts/postgres.mjs';
import { median, spreadOf } from '../lib.js';
import { leasehold, type PgContender } from './contenders.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const workerCounts = (arg('workers') ?? '4,16').split(',').map(Number);
const forms = (arg('forms') ?? 'claim-ack,claimMany,ackAndClaimMany').split(',') as ('claim-ack' | 'claimMany' | 'ackAndClaimMany')[];
const runs = Number(arg('runs') ?? 3);
const seconds = 1.5;

// The shipped lh_claim (migration 3) with its lock step moved to a statement of its own. The
// candidates are read 32 at a time, so that the read stays an index walk in claim order.
const freshSnapshotClaim = (s: string): string[] => {
  const now = `floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision`;
  return [`CREATE OR REPLACE FUNCTION ${s}.lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer,
        p_now double precision, p_max_attempts bigint)
      RETURNS TABLE (o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision) LANGUAGE plpgsql AS $$
    DECLARE
      v_now double precision := coalesce(p_now, ${now});
      v_row tid; v_group text; v_attempt integer; v_priority smallint; v_seq bigint; v_event text; v_candidate text; v_found boolean;
    BEGIN
      LOOP
        v_found := false;
        FOR v_candidate IN SELECT g.group_id FROM ${s}.lh_groups g
            WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now)
            ORDER BY g.claim_order, g.first_seq LIMIT 32 LOOP
          v_found := true;
          SELECT g.ctid, g.group_id, g.head_attempt, g.priority INTO v_row, v_group, v_attempt, v_priority FROM ${s}.lh_groups g
            WHERE g.queue = p_queue AND g.group_id = v_candidate AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now)
            FOR UPDATE SKIP LOCKED;
          EXIT WHEN FOUND;
        END LOOP;
        IF NOT v_found OR v_row IS NULL THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          SELECT m.seq, m.event INTO v_seq, v_event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          INSERT INTO ${s}.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at)
            VALUES (p_queue, v_seq, v_group, v_priority, v_event, v_attempt, v_now);
          PERFORM ${s}.lh_remove_head(p_queue, v_group, v_seq);
          v_row := NULL;
          CONTINUE;
        END IF;
        UPDATE ${s}.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event INTO o_seq, o_event;
        IF NOT FOUND THEN RETURN; END IF;
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $$`];
};

const server = await startPostgres({ label: 'leasehold-pg-exp', settings: { shared_buffers: '256MB' } });
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
const contenders: PgContender[] = forms.flatMap((f) => [leasehold(f), leasehold(f, { key: 'fresh', label: 'lock on a fresh snapshot', patch: freshSnapshotClaim })]);
for (const c of contenders) await c.setup(server.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function sampleWaits(stop: () => boolean): Promise<number> {
  let n = 0, sum = 0;
  while (!stop()) {
    const { rows } = await admin.query(`SELECT count(*)::int AS c FROM pg_stat_activity WHERE wait_event_type = 'Lock'`);
    sum += rows[0].c; n++;
    await sleep(5);
  }
  return n ? sum / n : 0;
}
for (const workers of workerCounts) {
  const rates = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const waits = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round <= runs; round++) {
    for (const c of contenders) {
      await c.fill(30_000, 1000);
      await admin.query('CHECKPOINT');
      const running = await c.start(workers);
      await sleep(250);
      let stopped = false;
      const w = sampleWaits(() => stopped);
      const c0 = running.done(); const t0 = performance.now();
      await sleep(seconds * 1000);
      const c1 = running.done(); const t1 = performance.now();
      stopped = true;
      const wait = await w;
      await running.stop();
      if (round > 0) { rates.get(c.name)!.push((c1 - c0) / ((t1 - t0) / 1000)); waits.get(c.name)!.push(wait); }
    }
  }
  console.log(`\n${workers} workers (load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  for (const c of contenders) console.log(`${c.name.padEnd(48)} ${median(rates.get(c.name)!).toFixed(0).padStart(7)} (${spreadOf(rates.get(c.name)!)})  lock waits ${median(waits.get(c.name)!).toFixed(1)}`);
}
for (const c of contenders) await c.close();
await admin.end();
server.stop();
