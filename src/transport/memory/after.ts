/**
 * The `after` waits of the in-memory transport: which messages wait for which seqs to leave the
 * queue. Apart from the queue's state because it knows nothing of groups or heaps: it counts
 * waits down and hands back the messages it frees, and the queue decides where their groups go.
 * @internal
 */

/** What a waiting message carries: how many named seqs are still queued, and whether it left. */
export interface Waiter {
  waits: number;
  readonly gone: boolean;
}

/** seq → the messages waiting for it to leave the queue. */
export class AfterWaits<M extends Waiter> {
  readonly #waiters = new Map<number, M[]>();

  /** `message` waits for each of `seqs` (its `waits` already counts them). */
  add(message: M, seqs: readonly number[]): void {
    for (const named of seqs) {
      const waiting = this.#waiters.get(named);
      if (waiting) waiting.push(message);
      else this.#waiters.set(named, [message]);
    }
  }

  /**
   * `seq` left the queue for good: counts it off what waited for it and returns the messages
   * that waited for it last (a waiter that left is not counted down), or undefined if nothing
   * waited for it.
   */
  release(seq: number): M[] | undefined {
    const waiting = this.#waiters.get(seq);
    if (!waiting) return undefined;
    this.#waiters.delete(seq);
    return waiting.filter((message) => !message.gone && --message.waits <= 0);
  }

  /** The messages still waiting for `seq` (none that left), without counting anything off. */
  waitersOf(seq: number): M[] {
    return (this.#waiters.get(seq) ?? []).filter((message) => !message.gone);
  }

  /** For each message that still waits, the seqs it waits for, ascending. */
  named(): Map<M, number[]> {
    const byWaiter = new Map<M, number[]>();
    for (const [seq, waiting] of this.#waiters) {
      for (const message of waiting) {
        if (message.gone) continue;
        const seqs = byWaiter.get(message);
        if (seqs) seqs.push(seq);
        else byWaiter.set(message, [seq]);
      }
    }
    for (const seqs of byWaiter.values()) seqs.sort((a, b) => a - b);
    return byWaiter;
  }

  /** What waited for `from` waits for `to` instead (a redriven dead letter's new seq). */
  move(from: number, to: number): void {
    const waiting = this.#waiters.get(from);
    if (!waiting) return;
    this.#waiters.delete(from);
    this.#waiters.set(to, waiting);
  }
}
