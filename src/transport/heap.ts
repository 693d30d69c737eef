/**
 * An intrusive binary min-heap: each item records its own slot (`heapIndex`) and the heap it is
 * in (`heap`), so the in-memory transport can take a group out of the middle of a heap in
 * O(log n) when an ack or a nack moves it, and no heap ever holds stale entries.
 *
 * It replaced a heap with lazy deletion (entries stamped and skipped when stale): with a 30 s
 * lease, every claim left one dead entry in the locked heap for 30 s, so at a steady 10k
 * claims/s the heap held ~300k dead entries and every claim paid to sift past them, plus one
 * entry object allocated per move.
 *
 * An item's ordering key must not change while it is in a heap: take it out, change it, put it
 * back.
 * @internal
 */
export interface HeapItem {
  /** Slot in `heap`; meaningless when `heap` is null. */
  heapIndex: number;
  /** The heap holding this item, or null. */
  heap: object | null;
}

export class MinHeap<T extends HeapItem> {
  readonly #items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.#items.length;
  }

  /** Every item, in no particular order. Do not change the heap while iterating. */
  items(): readonly T[] {
    return this.#items;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds `item`, which must be in no heap. */
  push(item: T): void {
    item.heap = this;
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item.heapIndex);
  }

  /** Takes `item` out of this heap (it must be in it). */
  remove(item: T): void {
    const items = this.#items;
    const index = item.heapIndex;
    const last = items.pop()!;
    item.heap = null;
    if (last === item) return;
    items[index] = last;
    last.heapIndex = index;
    if (!this.#up(index)) this.#down(index);
  }

  /** Moves the item at `index` towards the root; says whether it moved. */
  #up(index: number): boolean {
    const items = this.#items;
    const item = items[index]!;
    const start = index;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex]!;
      if (!this.less(item, parent)) break;
      items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    items[index] = item;
    item.heapIndex = index;
    return index !== start;
  }

  #down(index: number): void {
    const items = this.#items;
    const item = items[index]!;
    const length = items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && this.less(items[right]!, items[left]!) ? right : left;
      if (!this.less(items[child]!, item)) break;
      items[index] = items[child]!;
      items[index]!.heapIndex = index;
      index = child;
    }
    items[index] = item;
    item.heapIndex = index;
  }
}
