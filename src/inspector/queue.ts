/**
 * The queue, drawn from `inspect()` snapshots: groups in the order the next claims visit them,
 * each with its priority, its state in the words of `stats()` and its FIFO of messages. Keyed
 * DOM: a group row and a message card are created once and then only their changed text and
 * attributes are written, so 200 groups and 2,000 messages redraw in a frame. Cards have a fixed
 * width and wrap their text at word ends, never cutting it; countdowns keep their width
 * (tabular digits), so time running does not move the layout.
 */
import type { GroupSnapshot, MessageSnapshot, TransportSnapshot } from '../transport/contract.js';
import { h, icon, reorder, setAttr, setIcon, setText } from './dom.js';
import { checkPreview, type EventPreview, fit, groupState, previewText, seconds, workerLabel } from './format.js';

/** Chips drawn per group; the rest is counted. Keeps the DOM bounded whatever the backlog. */
const CHIPS_PER_GROUP = 6;
/** A failure's reason on a card: the rest is in the card's tooltip. */
const REASON_MAX = 28;

/** Options of {@link QueueView}. */
export interface QueueViewOptions {
  /** What to say when the queue is empty. Default "The queue is empty." */
  empty?: string;
  /** How a message card writes its event (see {@link EventPreview}). Default `defaultPreview`. */
  preview?: EventPreview | null;
}

interface Chip {
  el: HTMLLIElement;
  icon: SVGSVGElement;
  state: HTMLElement;
  attempt: HTMLElement;
  label: HTMLElement;
  detail: HTMLElement;
  message: MessageSnapshot;
}

interface Row {
  el: HTMLLIElement;
  name: HTMLElement;
  priority: HTMLElement;
  position: HTMLElement;
  /** The group's state in stats()'s word, and what the user acts on: which dead letter, whose lease… */
  word: HTMLElement;
  why: HTMLElement;
  chips: HTMLOListElement;
  more: HTMLLIElement;
  bySeq: Map<number, Chip>;
}

/**
 * The groups and their messages, drawn from snapshots. `render` draws a snapshot; `tick` moves
 * only the countdowns (call it every animation frame between snapshots).
 */
export class QueueView {
  /** The view's root element, to place in a page or a shadow root. */
  readonly el: HTMLElement;
  readonly #list = h('ol', { class: 'groups', attrs: { 'data-testid': 'groups', 'aria-label': 'Groups in round-robin order' } });
  readonly #summary = h('p', { class: 'summary', attrs: { 'data-testid': 'queue-summary', 'aria-live': 'polite' } });
  readonly #empty = h('p', { class: 'empty' });
  readonly #rows = new Map<string, Row>();
  /** Chips with a countdown, refreshed every frame between snapshots. */
  #live: Chip[] = [];

  #preview: EventPreview;

  /**
   * @param options What to say when empty and how to write events; a string is `options.empty`.
   * @throws TypeError if `options.preview` is given and is not a function.
   */
  constructor(options: QueueViewOptions | string = {}) {
    const { empty = 'The queue is empty.', preview } = typeof options === 'string' ? { empty: options } : options;
    this.#preview = checkPreview('options.preview', preview);
    setText(this.#empty, empty);
    this.el = h('div', { class: 'queue' }, this.#summary, this.#empty, this.#list);
  }

  /**
   * How cards write events; null sets the default back. Takes effect at the next `render`.
   * @throws TypeError for anything but a function or null.
   */
  get preview(): EventPreview {
    return this.#preview;
  }

  set preview(value: EventPreview | null) {
    this.#preview = checkPreview('preview', value);
  }

  /** Draws `snapshot`, reusing the elements of groups and messages it drew before. */
  render(snapshot: TransportSnapshot): void {
    const seen = new Set<string>();
    const live: Chip[] = [];
    let messages = 0;
    let next = true;
    const order: HTMLElement[] = [];
    snapshot.groups.forEach((group, index) => {
      seen.add(group.groupId);
      messages += group.messages.length;
      let row = this.#rows.get(group.groupId);
      if (!row) {
        row = this.#row(group.groupId);
        this.#rows.set(group.groupId, row);
      }
      order.push(row.el);
      const free = groupState(group).word === 'ready';
      this.#updateRow(row, group, index, free && next, snapshot.now);
      if (free) next = false;
      for (const chip of row.bySeq.values()) if (chip.message.expiresAt !== null) live.push(chip);
    });
    for (const [id, row] of this.#rows) {
      if (!seen.has(id)) {
        row.el.remove();
        this.#rows.delete(id);
      }
    }
    // Rows keep their nodes (focus, scroll); only those whose place changed move.
    reorder(this.#list, order);
    this.#live = live;
    this.#empty.hidden = snapshot.groups.length > 0;
    setText(this.#summary, `${snapshot.groups.length} group${snapshot.groups.length === 1 ? '' : 's'}, ${messages} message${messages === 1 ? '' : 's'} queued`);
    this.tick(snapshot.now);
  }

  /** Countdowns only: runs every frame, touching just the leased and parked chips. */
  tick(now: number): void {
    for (const chip of this.#live) setText(chip.detail, detail(chip.message, now));
  }

  #row(groupId: string): Row {
    const name = h('span', { class: 'group-name', text: groupId });
    const priority = h('span', { class: 'priority' });
    const position = h('span', { class: 'position' });
    const word = h('b', { class: 'group-word', attrs: { 'data-testid': 'group-state' } });
    const why = h('span', { class: 'group-why' });
    const chips = h('ol', { class: 'chips', attrs: { 'aria-label': 'Messages, oldest first' } });
    const more = h('li', { class: 'more' });
    const el = h('li', { class: 'group', attrs: { 'data-testid': 'group', 'data-group': groupId } }, h('div', { class: 'group-head' }, h('div', { class: 'group-title' }, position, name), h('div', { class: 'group-meta' }, priority, word, why)), chips);
    return { el, name, priority, position, word, why, chips, more, bySeq: new Map() };
  }

  #updateRow(row: Row, group: GroupSnapshot, index: number, isNext: boolean, now: number): void {
    setText(row.position, `${index + 1}.`);
    setText(row.priority, `P${group.priority}`);
    setAttr(row.priority, 'title', `priority ${group.priority}: workers with a floor above ${group.priority} skip this group`);
    const { word, why } = groupState(group);
    const head = group.messages[0];
    // The word is stats()'s; the words after it say what a user acts on (which dead letter,
    // which messages, whose lease).
    const after = head?.waitsFor.length ? `after #${head.waitsFor.join(', #')}` : 'after other messages';
    const detail =
      word === 'held'
        ? `at dead letter #${String(group.heldBy)}`
        : word === 'blocked'
          ? head?.state === 'paused' ? `${after}, paused` : after
          : word === 'leased'
            ? `by ${workerLabel(head?.holder ?? '')}`
            : word === 'waiting'
              ? why!
              : isNext
                ? 'next to claim'
                : 'in line';
    setText(row.word, word);
    setText(row.why, detail);
    setAttr(row.why, 'title', word === 'leased' ? `leased by ${head?.holder ?? ''}` : null);
    setAttr(row.el, 'data-state', word);
    setAttr(row.el, 'data-status', word === 'waiting' ? why : word === 'ready' ? (isNext ? 'next' : 'ready') : word);
    this.#updateChips(row, group, now);
  }

  #updateChips(row: Row, group: GroupSnapshot, now: number): void {
    const shown = group.messages.slice(0, CHIPS_PER_GROUP);
    const keep = new Set(shown.map((m) => m.seq));
    for (const [seq, chip] of row.bySeq) {
      if (!keep.has(seq)) {
        chip.el.remove();
        row.bySeq.delete(seq);
      }
    }
    shown.forEach((message, i) => {
      let chip = row.bySeq.get(message.seq);
      if (!chip) {
        chip = this.#chip(message);
        row.bySeq.set(message.seq, chip);
      }
      if (row.chips.children[i] !== chip.el) row.chips.insertBefore(chip.el, row.chips.children[i] ?? null);
      updateChip(chip, message, now, this.#preview);
    });
    const hidden = group.messages.length - shown.length;
    setText(row.more, `+${hidden} more`);
    if (hidden === 0) row.more.remove();
    else if (row.chips.lastElementChild !== row.more) row.chips.append(row.more);
  }

  #chip(message: MessageSnapshot): Chip {
    const i = icon(message.state);
    const state = h('span', { class: 'state' });
    const attempt = h('span', { class: 'attempt' });
    const label = h('span', { class: 'label' });
    const detailEl = h('span', { class: 'detail' });
    const el = h('li', { class: 'chip', attrs: { 'data-testid': 'message', 'data-seq': String(message.seq) } }, h('span', { class: 'chip-top' }, i, state, attempt), label, detailEl);
    return { el, icon: i, state, attempt, label, detail: detailEl, message };
  }
}

function updateChip(chip: Chip, m: MessageSnapshot, now: number, preview: EventPreview): void {
  chip.message = m;
  setAttr(chip.el, 'data-state', m.state);
  setAttr(chip.el, 'data-holder', m.holder);
  setAttr(chip.el, 'data-attempt', String(m.attempt));
  setAttr(chip.el, 'data-group', m.groupId);
  setIcon(chip.icon, m.state);
  // The contract's own word for the state: one word, the one inspect() and the docs use.
  setText(chip.state, m.state);
  setText(chip.attempt, m.attempt > 0 ? `try ${m.attempt}` : 'new');
  const event = previewText(preview, m.event);
  setText(chip.label, `#${m.seq} ${event.text}`);
  setAttr(chip.label, 'title', event.full);
  setText(chip.detail, detail(m, now));
  const holder = m.holder === null ? '' : ` (${m.state === 'expired' ? 'last held by' : 'held by'} ${m.holder})`;
  const waits = m.waitsFor.length ? `; waits for #${m.waitsFor.join(', #')}` : '';
  const failed = m.lastError === null ? '' : `; last error: ${m.lastError}`;
  setAttr(chip.el, 'title', `${m.groupId}#${m.seq}: ${m.state}${holder}, ${m.attempt} deliver${m.attempt === 1 ? 'y' : 'ies'} so far${waits}${failed}`);
}

function detail(m: MessageSnapshot, now: number): string {
  const left = m.expiresAt === null ? 0 : Math.max(0, m.expiresAt - now);
  switch (m.state) {
    case 'leased':
      return `${workerLabel(m.holder ?? '')} · ${seconds(left)} left`;
    case 'parked':
      return m.lastError === null ? `frees in ${seconds(left)}` : `${fit(m.lastError, REASON_MAX)} · retry in ${seconds(left)}`;
    case 'delayed':
      return m.window === null ? `due in ${seconds(left)}` : `debouncing · ${seconds(left)}`;
    case 'expired':
      return `lease of ${workerLabel(m.holder ?? '')} ran out`;
    case 'held':
      return 'behind a dead letter';
    case 'paused':
      return 'until resumed';
    case 'blocked':
      return `after #${m.waitsFor.join(', #')}`;
    default:
      // Not "waiting": that is stats()'s word for a parked, delayed or paused group.
      return m.attempt > 0 ? 'back in line' : 'in line';
  }
}
