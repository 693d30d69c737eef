/**
 * The dead letters, each with why it died and, when the page allows it, buttons to redrive it
 * (back into its group) or discard it, alone or with what depends on it. Redrawn only when the
 * list changes.
 */
import type { DeadLetter } from '../transport/contract.js';
import { h, setText } from './dom.js';
import { checkPreview, type EventPreview, previewText } from './format.js';

/** Options of {@link DeadLettersView}. */
export interface DeadLettersViewOptions {
  /** Shows a Redrive button on each dead letter that calls this; none without it. */
  onRedrive?: (seq: number) => void;
  /**
   * Shows a Discard button on each dead letter that calls this with `dependents` false, and a
   * "Discard with dependents" button that calls it with true (the dead letter, the later
   * messages of its group and what waits on them: `transport.discard(seq, { dependents })`);
   * none without it.
   */
  onDiscard?: (seq: number, dependents: boolean) => void;
  /** How `deadAt` is written. Default: the local time of day. */
  time?: (ms: number) => string;
  /** How each dead letter's event is written (see {@link EventPreview}). Default `defaultPreview`. */
  preview?: EventPreview | null;
}

/** The list of dead letters; `render` draws a list (reusing nothing: it is short and rarely changes). */
export class DeadLettersView {
  /** The view's root element. */
  readonly el: HTMLElement;
  readonly #list = h('ul', { class: 'dead', attrs: { 'data-testid': 'dead-letters' } });
  readonly #count = h('p', { class: 'hint', attrs: { 'data-testid': 'dead-count' } });
  readonly #options: DeadLettersViewOptions;
  #preview: EventPreview;
  #key = '';

  /** @throws TypeError if `options.preview` is given and is not a function. */
  constructor(options: DeadLettersViewOptions = {}) {
    this.#options = options;
    this.#preview = checkPreview('options.preview', options.preview);
    this.el = h('div', {}, this.#count, this.#list);
  }

  /**
   * How events are written; null sets the default back. Takes effect at the next `render`.
   * @throws TypeError for anything but a function or null.
   */
  get preview(): EventPreview {
    return this.#preview;
  }

  set preview(value: EventPreview | null) {
    this.#preview = checkPreview('preview', value);
    this.#key = '';
  }

  /** Draws `letters` (in the order given) if they differ from the last ones drawn. */
  render(letters: readonly DeadLetter[]): void {
    const key = letters.map((l) => l.seq).join(',');
    if (key === this.#key) return;
    this.#key = key;
    const { onRedrive, onDiscard, time = (ms: number) => new Date(ms).toLocaleTimeString() } = this.#options;
    setText(this.#count, letters.length ? `${letters.length} message${letters.length === 1 ? '' : 's'} given up: too many attempts, or rejected.` : 'None: no message has failed too often or been rejected.');
    this.#list.replaceChildren(
      ...letters.map((letter) => {
        const name = `${letter.groupId}#${letter.seq}`;
        const tries = `${letter.attempt} ${letter.attempt === 1 ? 'try' : 'tries'}`;
        const why = letter.reason === null ? tries : `${tries}: ${letter.reason}`;
        const event = previewText(this.#preview, letter.event);
        return h(
          'li',
          { class: 'dead-letter', attrs: { 'data-testid': 'dead-letter', 'data-seq': String(letter.seq) } },
          h('span', { class: 'state-dead', text: '✕ dead' }),
          h('span', { class: 'dead-text', text: ` ${name} ${event.text} · ${why} · at ${time(letter.deadAt)} `, attrs: { title: event.full } }),
          onRedrive && h('button', { text: 'Redrive', attrs: { type: 'button', 'aria-label': `redrive ${name}` }, on: { click: () => onRedrive(letter.seq) } }),
          onDiscard && h('button', { text: 'Discard', attrs: { type: 'button', 'aria-label': `discard ${name}` }, on: { click: () => onDiscard(letter.seq, false) } }),
          onDiscard &&
            h('button', {
              text: 'Discard with dependents',
              attrs: { type: 'button', 'aria-label': `discard ${name} with dependents`, title: 'also cancel the later messages of its group and every message waiting on them (after)' },
              on: { click: () => onDiscard(letter.seq, true) },
            }),
        );
      }),
    );
  }
}
