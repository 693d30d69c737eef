/**
 * The listener list behind `ChangeNotifier`, shared by the backends. Notices are delivered on a
 * microtask, after the call that caused them has returned. A listener that throws cannot break
 * the transport or the other listeners: its error surfaces as an unhandled rejection, as it
 * would from an async listener.
 * @internal
 */
export class Listeners {
  readonly #listeners = new Set<() => void>();
  #scheduled = false;

  add(listener: () => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    // Wrapped so the same function can subscribe twice and unsubscribe each separately.
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /** Schedules one notice to every listener; several calls in one tick coalesce into one. */
  notify(): void {
    if (this.#scheduled || this.#listeners.size === 0) return;
    this.#scheduled = true;
    void Promise.resolve().then(() => {
      this.#scheduled = false;
      for (const listener of [...this.#listeners]) {
        try {
          listener();
        } catch (error) {
          void Promise.reject(error);
        }
      }
    });
  }

  /** How many listeners are subscribed. */
  get size(): number {
    return this.#listeners.size;
  }

  clear(): void {
    this.#listeners.clear();
  }
}
