/**
 * SIGKILL between a step's side effect and its commit, and between its commit and its ack: a
 * worker process running a five-step workflow on a better-sqlite3 file kills itself at that
 * point of step k; a second worker, started on the same file once the first one's lease has run
 * out, finishes the workflow. The side-effect log shows the step killed before its commit ran
 * twice (at least once), every other step, and a step killed after its commit, exactly once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBetterSqliteDatabase } from '../src/sqlite/better.js';
import { scratchDir } from './support/backends.js';
import { runChild } from './support/child.js';

const child = new URL('./support/workflow-crash-child.ts', import.meta.url).pathname;

async function runWorker(file: string, flags: string[]): Promise<{ signal: string | null; done: string | undefined }> {
  let done: string | undefined;
  const { ended } = runChild(child, [file, ...flags], (line) => {
    if (line.startsWith('DONE ')) done = line.slice(5);
  });
  const { code, signal, stderr } = await ended;
  if (signal === null && code !== 0) throw new Error(`worker exited with ${code}: ${stderr}`);
  return { signal, done };
}

describe('workflow steps across SIGKILL (better-sqlite3 file)', () => {
  it.each([
    [1, 'before'],
    [3, 'before'],
    [5, 'before'],
    [1, 'after'],
    [3, 'after'],
    [5, 'after'],
  ] as const)('killed in step %i, %s its commit: the survivor re-runs only what was not committed', async (k, when) => {
    const scratch = scratchDir();
    const file = join(scratch.dir, 'workflow.db');
    try {
      expect(await runWorker(file, [`kill=${k}:${when}`])).toEqual({ signal: 'SIGKILL', done: undefined });
      // The next worker's clock is past the dead one's lease (30 s).
      expect(await runWorker(file, ['offset=60000'])).toEqual({ signal: null, done: 's1,s2,s3,s4,s5' });
      const runs = readFileSync(`${file}.effects`, 'utf8').trim().split('\n');
      const expected = ['s1', 's2', 's3', 's4', 's5'].flatMap((s) => (s === `s${k}` && when === 'before' ? [s, s] : [s]));
      expect(runs).toEqual(expected);
      const db = await openBetterSqliteDatabase(file);
      expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      db.close();
    } finally {
      scratch.remove();
    }
  }, 60_000);
});
