/**
 * Chaos on PostgreSQL: the contention run of postgres-contention.test.ts while consumer
 * processes are killed with SIGKILL (each replaced by a fresh one) and the server is restarted
 * with `-m immediate`, twice (once while messages are still being published), (no checkpoint: it recovers from its WAL, as after a crash). Nothing a
 * client was told succeeded may be lost, the commit-ordered history must stay clean, clients
 * must see StorageError STORAGE_UNAVAILABLE (and nothing else) while the server is down, and
 * the run must carry on to an empty queue after it is back. Runs on a private server (the run's
 * shared one must not restart under other files), with PostgreSQL's default durability.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../scripts/postgres.mjs';
import { runPgContention } from './support/pg-contention.js';

const messages = Number(process.env.PG_CHAOS_MESSAGES ?? 10_000);
let server: ThrowawayPostgres;

beforeAll(async () => {
  server = await startThrowawayPostgres({ label: 'leasehold-pg-chaos' });
}, 120_000);

afterAll(() => server?.stop());

describe('PostgreSQL server: kill -9 of consumers and immediate restarts mid-run', () => {
  it(`loses nothing acknowledged across 5 kills and 2 immediate restarts (8 processes × 4 connections, ${messages} messages)`, async () => {
    const at = (share: number) => Math.floor(messages * share);
    const result = await runPgContention({
      url: server.url,
      schema: 'lh_chaos',
      processes: 8,
      connections: 4,
      messages,
      groups: 200,
      visibilityMs: 500,
      stallRate: 0.002,
      seed: 9,
      killAtAcks: [at(0.1), at(0.25), at(0.4), at(0.7), at(0.85)],
      restartAtAcks: [at(0.05), at(0.55)],
      restart: () => server.restart('immediate'),
    });
    const { verdict, history } = result;
    const published = new Set(history.flatMap((e) => (e.op === 'publish' ? [e.seq] : [])));
    const acked = new Set(history.flatMap((e) => (e.op === 'ack' && e.ok ? [e.seq] : [])));
    console.log(
      `chaos: ${published.size} messages published (${result.publishFailures} batches refused while down), ${result.kills} kills, ${result.restarts} restarts, ` +
        `StorageErrors ${JSON.stringify(result.storageErrors)}, ${result.acksAfterRestart} acks after the last restart, ${(result.ms / 1000).toFixed(1)} s`,
    );
    expect(result.childFailures).toEqual([]);
    expect(result.kills).toBe(5);
    expect(result.restarts).toBe(2);
    expect(verdict).toEqual({ lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] });
    expect(result.toldButMissing).toEqual([]);
    expect(result.remaining).toEqual([]);
    expect(acked).toEqual(published);
    // While the server was down clients saw a clear StorageError, and only that; then they carried on.
    expect(result.storageDetails).toEqual([]);
    expect(result.storageErrors).toEqual({ STORAGE_UNAVAILABLE: expect.any(Number) });
    expect(result.acksAfterRestart).toBeGreaterThan(0);
  }, 600_000);
});
