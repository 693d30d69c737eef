/**
 * The receiver survives being killed between its commit and its answer, on the run's
 * PostgreSQL server: the kill scenarios of receiver-kill.test.ts (the body is
 * test/support/receiver-kill.ts) with the server process keeping its receipts, and the app's
 * tables, in a schema of its own per test. A killed process leaves its open transaction to
 * PostgreSQL to roll back; the next process must find every committed receipt and nothing of
 * the rest.
 */
import { randomUUID } from 'node:crypto';
import { newServerPool } from './support/postgres.js';
import { describeReceiverKill, type ServerSide } from './support/receiver-kill.js';
import { pgUrl } from './support/servers.js';

const url = await pgUrl();

async function postgresSide(): Promise<ServerSide> {
  const schema = `lh_rxkill_${process.pid}_${randomUUID().slice(0, 8)}`;
  const s = `"${schema}"`;
  const pool = newServerPool(2);
  return {
    config: { engine: 'pg', url, schema },
    async read() {
      const records = new Map((await pool.query<{ id: string; text: string }>(`SELECT id, text FROM ${s}.app_records`)).rows.map((r) => [r.id, r.text]));
      const log = (await pool.query<{ origin: string; counter: string; revision: string; record: string; text: string; token: string }>(`SELECT origin, counter, revision, record, text, token FROM ${s}.app_log ORDER BY n`)).rows;
      const receipts = (await pool.query<{ origin: string; queue: string; counter: string; revision: string; refused: boolean; status: number; body: string | null; low_water: string }>(
        `SELECT origin, queue, counter, revision, refused, status, body, low_water FROM ${s}.lh_receiver_receipts ORDER BY origin COLLATE "C", queue COLLATE "C", counter`,
      )).rows;
      return {
        records,
        log: log.map((r) => ({ ...r, counter: Number(r.counter), revision: Number(r.revision) })),
        receipts: receipts.map((r) => ({ origin: r.origin, queue: r.queue, counter: Number(r.counter), revision: Number(r.revision), refused: r.refused, status: Number(r.status), body: r.body, lowWater: Number(r.low_water) })),
      };
    },
    async dispose() {
      await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      await pool.end();
    },
  };
}

describeReceiverKill('PostgreSQL server', postgresSide, { torture: 20, beforeLoss: 5, afterLoss: 5 });
