/**
 * A throwaway cluster whose run died without its teardown (Vitest killed) is stopped and removed
 * the next time a cluster is started; a live run's cluster is never touched.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reapStaleClusters, startThrowawayPostgres, type ThrowawayPostgres } from '../scripts/postgres.mjs';

const script = new URL('../scripts/postgres.mjs', import.meta.url).pathname;
let mine: ThrowawayPostgres | undefined;

afterAll(() => mine?.stop());

/** Whether process `pid` exists (signal 0 checks without sending anything). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('stale throwaway clusters', () => {
  it('stops and removes the cluster of a run killed with SIGKILL, and leaves a live one alone', async () => {
    // A run that starts a cluster (`node scripts/postgres.mjs` prints its URL once up) and dies.
    const run = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let url = '';
    for await (const line of createInterface({ input: run.stdout! })) {
      if (!line.startsWith('postgres://')) continue; // reaper messages come first
      url = line;
      break;
    }
    expect(url).toMatch(/^postgres:\/\//);
    const dead = readdirSync(tmpdir()).map((name) => join(tmpdir(), name)).find((dir) => ownedBy(dir, run.pid!));
    expect(dead).toBeDefined();
    run.kill('SIGKILL');
    await once(run, 'exit');
    // Its server outlives it (pg_ctl detaches the postmaster) until the next start reaps it.
    mine = await startThrowawayPostgres({ label: 'leasehold-pg-reap-live' });
    expect(ownedBy(join(mine.dataDir, '..'), process.pid)).toBe(true);
    expect(await listening(Number(new URL(url).port))).toBe(false);
    expect(existsSync(dead!)).toBe(false);
    // A live run's cluster (ours) survives a reap.
    expect(reapStaleClusters()).not.toContain(join(mine.dataDir, '..'));
    const pid = Number(readFileSync(join(mine.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(running(pid)).toBe(true);
    expect(await listening(Number(new URL(mine.url).port))).toBe(true);
  }, 120_000);
});

/** Whether the cluster directory `dir` names process `pid` as its owner. */
function ownedBy(dir: string, pid: number): boolean {
  try {
    return JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')).pid === pid;
  } catch {
    return false;
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
