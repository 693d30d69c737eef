/**
 * The log: what happened and why, newest first. Entries are appended as keyed nodes (never a
 * rebuild), so reading an entry while the demo runs does not make it jump away under the cursor.
 */
import { seconds } from '../clock.ts';
import type { EventLog } from '../log.ts';
import { h } from './dom.ts';

export class LogView {
  readonly el: HTMLElement;
  // A polite live region: a screen reader reads new entries when it is idle. It is also the
  // timeline's text alternative (the timeline points here with aria-details).
  readonly #list = h('ol', { class: 'log', attrs: { id: 'log', role: 'log', 'aria-live': 'polite', 'data-testid': 'log', 'aria-label': 'What happened, newest first', reversed: '' } });
  readonly #nodes = new Map<number, HTMLLIElement>();

  constructor(log: EventLog) {
    this.el = h('div', { class: 'log-wrap' }, this.#list);
    log.onChange(() => this.#sync(log));
  }

  #view: number | null = null;

  /** While looking back at `view`, entries from after it are hidden; null shows them all. */
  setView(view: number | null): void {
    if (view === this.#view) return;
    this.#view = view;
    for (const node of this.#nodes.values()) node.hidden = view !== null && Number(node.dataset.time) > view;
  }

  #sync(log: EventLog): void {
    const keep = new Set(log.entries.map((entry) => entry.id));
    for (const [id, node] of this.#nodes) {
      if (!keep.has(id)) {
        node.remove();
        this.#nodes.delete(id);
      }
    }
    for (const entry of log.entries) {
      if (this.#nodes.has(entry.id)) continue;
      const attrs: Record<string, string> = { 'data-testid': 'log-entry', 'data-kind': entry.kind, 'data-time': String(entry.at) };
      if (entry.worker) attrs['data-worker'] = entry.worker;
      if (entry.group !== undefined) attrs['data-group'] = entry.group;
      if (entry.seq !== undefined) attrs['data-seq'] = String(entry.seq);
      if (entry.attempt !== undefined) attrs['data-attempt'] = String(entry.attempt);
      const node = h('li', { class: `entry kind-${entry.kind}`, attrs }, h('time', { text: seconds(entry.at) }), h('span', { text: entry.text }));
      node.hidden = this.#view !== null && entry.at > this.#view;
      this.#nodes.set(entry.id, node);
      this.#list.prepend(node);
    }
  }
}
