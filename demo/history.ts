/**
 * What the page showed, moment by moment, so the timeline can be scrubbed: each snapshot the
 * page fetched, with this tab's workers and the executions as they were. Looking back reads only
 * this; the database is never asked about the past (it could not say) and never changed.
 *
 * Bounded: frames are dropped oldest first beyond a total of messages kept, so a 2,000-message
 * backlog keeps a shorter past than a lesson does, and memory stays flat.
 */
import type { Lease, TransportSnapshot } from 'leasehold';
import type { ServerState } from './server.ts';
import type { ExecutionView } from './views/executions.ts';
import type { WorkerSettings, WorkerStatus } from './workers.ts';

/** A worker as its card shows it: plain data, so a past one can be drawn. */
export interface WorkerState {
  id: string;
  settings: WorkerSettings;
  status: WorkerStatus;
  lease: Lease | null;
  note: string;
  paused: boolean;
}

export interface Frame {
  at: number;
  snapshot: TransportSnapshot;
  workers: WorkerState[];
  executions: Map<string, ExecutionView>;
  /** Lesson 11's server, when it runs. */
  server?: ServerState | undefined;
}

/** Messages kept across all frames (each frame holds its own snapshot). */
const MAX_MESSAGES = 150_000;
const MAX_FRAMES = 3_000;

export class History {
  readonly frames: Frame[] = [];
  #messages = 0;

  clear(): void {
    this.frames.length = 0;
    this.#messages = 0;
  }

  /** Keeps `frame`; one at the same time as the last replaces it (the later look is the truer one). */
  add(frame: Frame): void {
    const last = this.frames.at(-1);
    if (last && frame.at < last.at) {
      // Time went back (a lesson restarted without clear): the old past no longer applies.
      this.clear();
    } else if (last && last.at === frame.at) {
      this.#messages -= count(last);
      this.frames.pop();
    }
    this.frames.push(frame);
    this.#messages += count(frame);
    while (this.frames.length > 1 && (this.#messages > MAX_MESSAGES || this.frames.length > MAX_FRAMES)) this.#messages -= count(this.frames.shift()!);
  }

  /** The last frame taken at or before `t`, or undefined if `t` is before what is kept. */
  at(t: number): Frame | undefined {
    let lo = 0;
    let hi = this.frames.length - 1;
    let found: Frame | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const frame = this.frames[mid]!;
      if (frame.at <= t) {
        found = frame;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The earliest moment that can be looked at. */
  get start(): number {
    return this.frames[0]?.at ?? 0;
  }
}

function count(frame: Frame): number {
  let n = 1;
  for (const group of frame.snapshot.groups) n += group.messages.length;
  return n;
}

/** A worker's state now, copied (the live object keeps changing). */
export function workerState(worker: WorkerState): WorkerState {
  return { id: worker.id, settings: worker.settings, status: worker.status, lease: worker.lease, note: worker.note, paused: worker.paused };
}
