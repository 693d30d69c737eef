// The lab page: the public API on `window.leasehold`, for the console and the e2e tests.
import * as leasehold from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';
import * as workflow from 'leasehold/workflow';

/**
 * For the crash tests: checks database `name`'s file directly (no host; call it before any
 * openBrowserDatabase of `name` in this origin): SQLite's integrity check and the queued seqs.
 */
function checkFile(name: string): Promise<{ integrity: string; seqs: number[] }> {
  const worker = new Worker(new URL('./lab-check.worker.ts', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ integrity: string; seqs: number[]; error?: string }>) => {
      worker.terminate();
      if (event.data.error) reject(new Error(event.data.error));
      else resolve(event.data);
    };
    worker.postMessage({ name });
  });
}

const api = { ...leasehold, openBrowserDatabase, checkFile, workflow };
(window as unknown as { leasehold: typeof api }).leasehold = api;
document.querySelector('#status')!.textContent = 'ready';
