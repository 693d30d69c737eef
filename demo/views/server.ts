/**
 * Lesson 11's server, beside the queue: each request as the receiver answered it (its delivery
 * id and revision, applied or a repeat answered from the receipt, the answer, and whether that
 * answer reached the tab), the receiver's own table of receipts as SQLite holds it, and the app's
 * table its apply writes, with how often apply ran for each row — the count that says whether
 * anything was applied twice.
 */
import { seconds } from '../clock.ts';
import type { Answered, ServerState } from '../server.ts';
import { shortId } from '../workers.ts';
import { h, icon } from './dom.ts';

/** How each answer reads, in words as well as colour. */
const ANSWERED: Record<Answered, string> = {
  applied: 'applied',
  repeat: 'repeat: answered from the receipt',
  stale: 'stale: older than the receipt, not applied',
  refused: 'refused',
  failed: 'failed: nothing recorded',
};

function table(caption: string, testid: string, head: string[], rows: HTMLTableRowElement[], empty: string): HTMLElement {
  return h(
    'section',
    { class: 'server-part' },
    h('h3', { text: caption }),
    rows.length === 0
      ? h('p', { class: 'empty', text: empty })
      : h('div', { class: 'sql-table-wrap' }, h('table', { attrs: { 'data-testid': testid } }, h('thead', {}, h('tr', {}, ...head.map((text) => h('th', { text, attrs: { scope: 'col' } })))), h('tbody', {}, ...rows))),
  );
}

const cell = (text: string): HTMLTableCellElement => h('td', { text });

export class ServerView {
  readonly el: HTMLElement;
  #key = '';

  constructor() {
    this.el = h('div', { class: 'server', attrs: { 'data-testid': 'server' } });
    this.render(undefined);
  }

  /** Draws `state` (undefined: no server runs); unchanged state is not redrawn. */
  render(state: ServerState | undefined): void {
    const key = state ? JSON.stringify(state) : '';
    if (key === this.#key && this.el.childElementCount > 0) return;
    this.#key = key;
    if (!state) {
      this.el.replaceChildren(h('p', { class: 'empty', text: 'Lesson 11 runs a server here: leasehold/receiver on a SQLite database in this page.' }));
      return;
    }
    const received = state.received.map((r) =>
      h(
        'tr',
        { attrs: { 'data-testid': 'server-request', 'data-note': r.note, 'data-id': r.id, 'data-revision': String(r.revision), 'data-answered': r.answered, 'data-lost': String(r.lost), 'data-time': String(r.at) } },
        cell(seconds(r.at)),
        h('td', { class: 'id', text: shortId(r.id), attrs: { title: r.id } }),
        cell(String(r.revision)),
        h('td', { class: `answered answered-${r.answered}`, text: ANSWERED[r.answered] }),
        h('td', { class: 'body', text: `${r.status} ${r.body}` }),
        h('td', { class: r.lost ? 'wire-lost' : 'wire-ok' }, r.lost ? icon('dead') : null, r.lost ? ' lost on the way back' : '✓ reached the tab'),
      ),
    );
    const receipts = state.receipts.map((r) =>
      h(
        'tr',
        { attrs: { 'data-testid': 'receipt', 'data-id': r.id, 'data-counter': String(r.counter), 'data-revision': String(r.revision), 'data-outcome': r.outcome } },
        h('td', { class: 'id', text: shortId(r.id), attrs: { title: r.id } }),
        cell(String(r.counter)),
        cell(String(r.revision)),
        h('td', { class: `answered answered-${r.outcome}`, text: r.outcome }),
        h('td', { class: 'body', text: `${r.status} ${r.body ?? '(pruned)'}` }),
        cell(seconds(r.at)),
      ),
    );
    const notes = state.notes.map((n) =>
      h('tr', { attrs: { 'data-testid': 'note', 'data-note': n.id, 'data-applied': String(n.applied) } }, cell(n.id), cell(n.text), cell(`${n.applied}×`)),
    );
    this.el.replaceChildren(
      table('What it received', 'server-requests', ['at', 'delivery id', 'rev', 'answered', 'answer', 'to the tab'], received, 'Nothing yet: the workers’ first requests arrive at 1 s.'),
      table('Its receipts (lh_receiver_receipts)', 'receipts', ['delivery id', 'counter', 'rev', 'outcome', 'kept answer', 'at'], receipts, 'No receipt yet.'),
      table('The app’s notes (written by apply, in the receipt’s transaction)', 'notes', ['note', 'text', 'apply ran'], notes, 'No note yet.'),
    );
  }
}
