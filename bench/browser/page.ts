// The page half of the browser benchmark: exposes the in-worker benchmark and the public API
// to the Playwright driver (bench/browser/run.ts).
import { openBrowserDatabase } from 'leasehold/browser';
import type { WorkerRequest, WorkerResult } from './worker.js';

function inWorker(request: WorkerRequest): Promise<WorkerResult[]> {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ results?: WorkerResult[]; error?: string }>) => {
      worker.terminate();
      if (event.data.error) reject(new Error(event.data.error));
      else resolve(event.data.results!);
    };
    worker.postMessage(request);
  });
}

Object.assign(window, { bench: { inWorker, openBrowserDatabase } });
document.querySelector('#status')!.textContent = 'ready';
