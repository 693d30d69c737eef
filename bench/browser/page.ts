// The page half of the browser benchmark: exposes the in-worker benchmark, the raw file-handle
// probe, the backlog filler and the page-side workloads to the Playwright driver (run.ts).
import { type BrowserDatabaseOptions, openBrowserDatabase } from 'leasehold/browser';
import { openBrowserDatabaseWith } from '../../src/browser/client.js';
import type { CheckpointRequest, CheckpointResult } from './checkpoint.js';
import type { HandleRequest, HandleResult } from './handles.js';
import type { FillRequest, WorkerRequest, WorkerResult } from './worker.js';
import * as workloads from './workloads.js';

function run<T>(worker: Worker, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ results?: T; error?: string }>) => {
      worker.terminate();
      if (event.data.error) reject(new Error(event.data.error));
      else resolve(event.data.results!);
    };
    worker.postMessage(request);
  });
}

const inWorker = (request: WorkerRequest) => run<WorkerResult[]>(new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' }), request);
const fill = (request: FillRequest) => run<[]>(new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' }), request);
/**
 * A WAL of about `frames` frames, then `close()` timed; or (`crash`) the worker terminated with
 * the WAL in place, as a crashed tab leaves it, and a new worker's reopen timed.
 */
async function checkpointCosts(frames: number, backlog: number, crash: boolean): Promise<CheckpointResult> {
  const start = () => new Worker(new URL('./checkpoint.ts', import.meta.url), { type: 'module' });
  const filled = await run<CheckpointResult>(start(), { fill: { frames, backlog }, then: crash ? 'crash' : 'close' } satisfies CheckpointRequest);
  if (!crash) return filled;
  return { ...(await run<CheckpointResult>(start(), { reopen: true } satisfies CheckpointRequest)), estimatedFrames: filled.frames };
}
const handles = (request: HandleRequest) => run<HandleResult[]>(new Worker(new URL('./handles.ts', import.meta.url), { type: 'module' }), request);

/** The fallback path (`--broker=off`): forwarding over the BroadcastChannel only. */
const openWithoutBroker = (options: BrowserDatabaseOptions) => openBrowserDatabaseWith(options, { createBroker: () => null });

Object.assign(window, { bench: { inWorker, fill, handles, checkpointCosts, openBrowserDatabase, openWithoutBroker, ...workloads } });
document.querySelector('#status')!.textContent = 'ready';
