/**
 * What a larger WAL costs where it is paid at once: `close()`, which checkpoints the whole WAL,
 * and the open after a crash, which rebuilds the WAL's index from every frame. The
 * database is opened as the browser host opens it (src/browser/opfs.ts: exclusive locking, WAL,
 * synchronous NORMAL, one file call a commit), given a backlog, and then driven by
 * `ackAndClaimMany` of 32 with automatic checkpoints off until its WAL holds about `frames`
 * frames — what `PRAGMA wal_autocheckpoint=frames` lets it reach before a checkpoint.
 *
 * - `{ fill, then: 'close' }`: times `close()` with that WAL, and reports the frames it held.
 * - `{ fill, then: 'crash' }`: answers and leaves the database open; the page terminates this
 *   worker, as a crash of the tab would, and starts another with `{ reopen }`, which times
 *   opening the database and its first read, then reports the frames it recovered.
 */
import { SqliteTransport } from 'leasehold';
import { fromWasmDatabase, loadSqliteWasm } from 'leasehold/sqlite-wasm';
import { coalesceWalWrites } from '../../src/browser/coalesce.ts';
import { installPool } from '../../src/browser/opfs.ts';

export type CheckpointRequest = { fill: { frames: number; backlog: number }; then: 'close' | 'crash' } | { reopen: true };

export interface CheckpointResult {
  /** Frames in the WAL at the measured step: estimated from a calibration when closing, counted by the checkpoint after a reopen. */
  frames: number;
  /** After a reopen: the frames the filling worker estimated it left. */
  estimatedFrames?: number;
  /** Milliseconds: `close()`; or, after a crash, installing the pool, opening the database (where SQLite recovers the WAL) and its first read. */
  closeMs?: number;
  poolMs?: number;
  openMs?: number;
  firstReadMs?: number;
  /** Milliseconds: after the reopen, the checkpoint of the recovered WAL. */
  checkpointMs?: number;
}

const POOL = 'leasehold-bench-checkpoint';
const EVENT = { type: 'order.paid', amount: 4200, currency: 'EUR', note: 'x'.repeat(40) };
const GROUPS = 100;

self.onmessage = async (event: MessageEvent<CheckpointRequest>) => {
  try {
    postMessage({ results: 'reopen' in event.data ? await reopen() : await fillWal(event.data.fill, event.data.then) });
  } catch (error) {
    postMessage({ error: `${String(error)}\n${(error as Error).stack ?? ''}` });
  }
};

async function openAsHost() {
  const sqlite3 = await loadSqliteWasm();
  const poolStart = performance.now();
  const pool = await installPool(sqlite3, POOL, POOL);
  const poolMs = performance.now() - poolStart;
  const openStart = performance.now();
  const raw = new pool.OpfsSAHPoolDb('/checkpoint.db');
  const db = fromWasmDatabase(sqlite3, raw);
  db.exec('PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL');
  const openMs = performance.now() - openStart;
  const readStart = performance.now();
  db.prepare('PRAGMA schema_version').get();
  const firstReadMs = performance.now() - readStart;
  if (!coalesceWalWrites(sqlite3, raw)) throw new Error('no WAL file to coalesce');
  return { pool, db, poolMs, openMs, firstReadMs };
}

/** `PRAGMA wal_checkpoint(PASSIVE)`, as SQLite's automatic checkpoint runs: the frames the WAL held, and how long copying them took. */
function checkpoint(db: Awaited<ReturnType<typeof openAsHost>>['db']): { frames: number; ms: number } {
  const start = performance.now();
  const row = db.prepare('PRAGMA wal_checkpoint(PASSIVE)').get<{ log: number }>()!;
  return { frames: row.log, ms: performance.now() - start };
}

async function fillWal({ frames, backlog }: { frames: number; backlog: number }, then: 'close' | 'crash'): Promise<CheckpointResult> {
  await (await installPool(await loadSqliteWasm(), POOL, POOL)).wipeFiles();
  const opened = await openAsHost();
  const fresh = opened.db;
  const transport = new SqliteTransport<typeof EVENT>(fresh, { clock: () => 1 });
  for (let from = 0; from < backlog; from += 1000) {
    await transport.publishMany(Array.from({ length: Math.min(1000, backlog - from) }, (_, i) => ({ groupId: `g${((from + i) * 7919) % GROUPS}`, event: EVENT })));
  }
  checkpoint(fresh);
  fresh.exec('PRAGMA wal_autocheckpoint=0');
  let leases = await transport.claimMany('bench', 30_000, { max: 32 });
  let n = 0;
  const batch = async () => {
    const { acked, claimed } = await transport.ackAndClaimMany(leases, 'bench', 30_000, { max: 32 });
    leases = claimed;
    await transport.publishMany(acked.map(() => ({ groupId: `g${(n++ * 7919) % GROUPS}`, event: EVENT })));
  };
  // Calibrate: the frames 20 batches (with their refills) append, then start again from an empty WAL.
  for (let i = 0; i < 20; i++) await batch();
  const perBatch = checkpoint(fresh).frames / 20;
  const batches = Math.ceil(frames / perBatch);
  for (let i = 0; i < batches; i++) await batch();
  const estimated = Math.round(batches * perBatch);
  if (then === 'crash') return { frames: estimated };
  const start = performance.now();
  fresh.close();
  const closeMs = performance.now() - start;
  opened.pool.pauseVfs();
  return { frames: estimated, closeMs };
}

async function reopen(): Promise<CheckpointResult> {
  const { pool, db, poolMs, openMs, firstReadMs } = await openAsHost();
  const { frames, ms } = checkpoint(db);
  db.close();
  await pool.wipeFiles();
  pool.pauseVfs();
  return { frames, poolMs, openMs, firstReadMs, checkpointMs: ms };
}
