/**
 * A binary min-heap. The in-memory transport keeps its groups in these, with lazy deletion:
 * an entry carries the group's `stamp` at push time and is skipped when the stamp has moved on,
 * so removing a group from the middle of a heap costs nothing.
 * @internal
 */
export class MinHeap<T> {
  readonly #items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.less(items[child]!, items[parent]!)) break;
      [items[child], items[parent]] = [items[parent]!, items[child]!];
      child = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let parent = 0;
      for (;;) {
        const left = 2 * parent + 1;
        const right = left + 1;
        let smallest = parent;
        if (left < items.length && this.less(items[left]!, items[smallest]!)) smallest = left;
        if (right < items.length && this.less(items[right]!, items[smallest]!)) smallest = right;
        if (smallest === parent) break;
        [items[smallest], items[parent]] = [items[parent]!, items[smallest]!];
        parent = smallest;
      }
    }
    return top;
  }

  /** Drops every item (used by close()). */
  clear(): void {
    this.#items.length = 0;
  }
}
