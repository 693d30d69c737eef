/**
 * The queue, drawn from `inspect()` snapshots: groups in the order the next claims visit them,
 * each with its priority and its FIFO of messages. Keyed DOM: a group row and a message chip
 * are created once and then only their changed text and attributes are written, so 200 groups
 * and 2,000 messages redraw in a frame without layout jumps (every chip has a fixed size).
 */
import type { GroupSnapshot, MessageSnapshot, TransportSnapshot } from '../transport/contract.js';
import { h, icon, reorder, setAttr, setIcon, setText } from './dom.js';
import { eventLabel, seconds } from './format.js';

/** Chips drawn per group; the rest is counted. Keeps the DOM bounded whatever the backlog. */
const CHIPS_PER_GROUP = 6;

const STATE_LABEL: Record<MessageSnapshot['state'], string> = { ready: 'ready', leased: 'leased', expired: 'lease ran out', parked: 'parked', delayed: 'delayed', held: 'held at a dead letter', paused: 'paused', blocked: 'waits for another message' };

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
  status: HTMLElement;
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

  /** @param empty What to say when the queue is empty. */
  constructor(empty = 'The queue is empty.') {
    setText(this.#empty, empty);
    this.el = h('div', { class: 'queue' }, this.#summary, this.#empty, this.#list);
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
      const free = !group.inFlight && group.messages.length > 0 && stoppedBy(group) === null;
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
    const status = h('span', { class: 'group-status' });
    const chips = h('ol', { class: 'chips', attrs: { 'aria-label': 'Messages, oldest first' } });
    const more = h('li', { class: 'more' });
    const el = h('li', { class: 'group', attrs: { 'data-testid': 'group', 'data-group': groupId } }, h('div', { class: 'group-head' }, h('div', { class: 'group-title' }, position, name), h('div', { class: 'group-meta' }, priority, status)), chips);
    return { el, name, priority, position, status, chips, more, bySeq: new Map() };
  }

  #updateRow(row: Row, group: GroupSnapshot, index: number, isNext: boolean, now: number): void {
    setText(row.position, `${index + 1}.`);
    setText(row.priority, `P${group.priority}`);
    setAttr(row.priority, 'title', `priority ${group.priority}: workers with a floor above ${group.priority} skip this group`);
    const head = group.messages[0];
    const waiting = head?.state === 'parked' || head?.state === 'delayed' ? head.state : null;
    const stopped = stoppedBy(group);
    const status =
      stopped === 'held'
        ? `held at dead letter #${String(group.heldBy)}`
        : stopped === 'paused'
          ? 'paused'
          : stopped === 'blocked'
            ? 'blocked: waits for another message'
            : waiting
              ? `blocked: ${waiting}`
              : group.inFlight
                ? 'blocked: in flight'
                : isNext
                  ? 'next to claim'
                  : 'waiting its turn';
    setText(row.status, status);
    setAttr(row.el, 'data-status', stopped ?? waiting ?? (group.inFlight ? 'in-flight' : isNext ? 'next' : 'waiting'));

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
      updateChip(chip, message, now);
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

/** Why a group delivers nothing whatever the time: held at a dead letter, paused, or its head waits on `after`; else null. */
function stoppedBy(group: GroupSnapshot): 'held' | 'paused' | 'blocked' | null {
  if (group.heldBy !== null) return 'held';
  const state = group.messages[0]?.state;
  return state === 'paused' || state === 'blocked' ? state : null;
}

function updateChip(chip: Chip, m: MessageSnapshot, now: number): void {
  chip.message = m;
  setAttr(chip.el, 'data-state', m.state);
  setAttr(chip.el, 'data-holder', m.holder);
  setAttr(chip.el, 'data-attempt', String(m.attempt));
  setAttr(chip.el, 'data-group', m.groupId);
  setIcon(chip.icon, m.state);
  setText(chip.state, STATE_LABEL[m.state]);
  setText(chip.attempt, m.attempt > 0 ? `try ${m.attempt}` : 'new');
  setText(chip.label, `#${m.seq} ${eventLabel(m.event)}`);
  setText(chip.detail, detail(m, now));
  const failed = m.lastError === null ? '' : `; last error: ${m.lastError}`;
  setAttr(chip.el, 'title', `${m.groupId}#${m.seq}: ${STATE_LABEL[m.state]}, ${m.attempt} deliver${m.attempt === 1 ? 'y' : 'ies'} so far${failed}`);
}

function detail(m: MessageSnapshot, now: number): string {
  const left = m.expiresAt === null ? 0 : Math.max(0, m.expiresAt - now);
  switch (m.state) {
    case 'leased':
      return `${m.holder} · ${seconds(left)} left`;
    case 'parked':
      return m.lastError === null ? `frees in ${seconds(left)}` : `${m.lastError} · retry in ${seconds(left)}`;
    case 'delayed':
      return `due in ${seconds(left)}`;
    case 'expired':
      return `${m.holder}'s lease ran out`;
    case 'held':
      return 'waits for its dead letter';
    case 'paused':
      return 'paused: waits for resume';
    case 'blocked':
      return 'waits for the messages it names';
    default:
      return m.attempt > 0 ? 'back in line' : 'waiting';
  }
}
