/**
 * The in-memory store's timers: `(executionId, path) → fireAt`, plus a min-heap on `fireAt` so
 * that `due(now)` visits only the timers that are due instead of every armed timer (the seed
 * scans them all on each sweep, and the sweep runs on every idle step of the runtime).
 *
 * Why a heap with lazy deletion rather than a sorted array or a balanced tree: re-arming and
 * cancelling are the common operations (every state entry re-arms its timers), and with lazy
 * deletion each is O(1) on the map plus O(log n) to push; a sorted array pays O(n) per insert
 * and a tree is a lot of code for the same bounds. A heap entry is live exactly while the map
 * still holds that very entry object; dead entries are skipped, and the heap is rebuilt from the
 * live ones when they are outnumbered, so memory stays O(live timers) amortized.
 * @internal
 */
import type { DueTimer } from './contract.js';

interface Armed {
  readonly executionId: string;
  readonly path: string;
  readonly fireAt: number;
}

export class TimerIndex {
  readonly #byExecution = new Map<string, Map<string, Armed>>();
  #heap: Armed[] = [];
  #live = 0;

  /** Arms (or re-arms, replacing) the timer `(executionId, path)`. */
  schedule(executionId: string, path: string, fireAt: number): void {
    let paths = this.#byExecution.get(executionId);
    if (paths === undefined) this.#byExecution.set(executionId, (paths = new Map()));
    const entry: Armed = { executionId, path, fireAt };
    if (!paths.has(path)) this.#live++;
    paths.set(path, entry);
    this.#push(entry);
  }

  /** Disarms `(executionId, path)`; when `fireAt` is given, only if it is still armed for exactly that time. */
  cancel(executionId: string, path: string, fireAt?: number): boolean {
    const paths = this.#byExecution.get(executionId);
    const entry = paths?.get(path);
    if (paths === undefined || entry === undefined || (fireAt !== undefined && entry.fireAt !== fireAt)) return false;
    paths.delete(path);
    if (paths.size === 0) this.#byExecution.delete(executionId);
    this.#live--;
    this.#compactIfSparse();
    return true;
  }

  /** Disarms every timer of `executionId`. */
  cancelAll(executionId: string): void {
    const paths = this.#byExecution.get(executionId);
    if (paths === undefined) return;
    this.#live -= paths.size;
    this.#byExecution.delete(executionId);
    this.#compactIfSparse();
  }

  /** Every armed timer with `fireAt <= now`, earliest first (ties by execution id, then path). */
  due(now: number): DueTimer[] {
    const heap = this.#heap;
    const found: DueTimer[] = [];
    // Walk the heap from the root, descending only below due entries: children are never
    // earlier than their parent, so this visits the due entries and their direct children only.
    const stack = heap.length > 0 ? [0] : [];
    while (stack.length > 0) {
      const i = stack.pop()!;
      const entry = heap[i]!;
      if (entry.fireAt > now) continue;
      if (this.#isLive(entry)) found.push({ executionId: entry.executionId, path: entry.path, fireAt: entry.fireAt });
      if (2 * i + 1 < heap.length) stack.push(2 * i + 1);
      if (2 * i + 2 < heap.length) stack.push(2 * i + 2);
    }
    return found.sort(
      (a, b) => a.fireAt - b.fireAt || compare(a.executionId, b.executionId) || compare(a.path, b.path),
    );
  }

  #isLive(entry: Armed): boolean {
    return this.#byExecution.get(entry.executionId)?.get(entry.path) === entry;
  }

  #compactIfSparse(): void {
    if (this.#heap.length <= 2 * this.#live + 64) return;
    const live = this.#heap.filter((entry) => this.#isLive(entry));
    this.#heap = live;
    for (let i = (live.length >> 1) - 1; i >= 0; i--) this.#siftDown(i);
  }

  #push(entry: Armed): void {
    const heap = this.#heap;
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.fireAt <= entry.fireAt) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
    this.#compactIfSparse();
  }

  #siftDown(i: number): void {
    const heap = this.#heap;
    const entry = heap[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]!.fireAt < heap[child]!.fireAt) child++;
      if (heap[child]!.fireAt >= entry.fireAt) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = entry;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
