/**
 * `<leasehold-inspector>`: the queue, its groups, leases with countdowns, parks, delays, dead
 * letters and a timeline, for any Transport, in the app's own page. It reads nothing until it is in the
 * document and a transport is set, and stops reading when it leaves; it changes nothing unless
 * the page allows actions (`actions` attribute or property), and then only redrive and discard.
 * Its views live in an open shadow root with their own styles, so the page's CSS and its never
 * mix. Every group id, event and reason is written as text, never parsed as HTML.
 */
import type { Transport } from '../transport/contract.js';
import { type QueueWatch, watchQueue } from '../watch/watch.js';
import { DeadLettersView } from './dead.js';
import { h, setText } from './dom.js';
import { checkPreview, type EventPreview } from './format.js';
import { QueueView } from './queue.js';
import { THEME_CSS, VIEW_CSS } from './styles.js';
import { TimelinePanel } from './timeline/panel.js';

/** What the page sets on a `<leasehold-inspector>`. */
export interface LeaseholdInspectorElement extends HTMLElement {
  /** The queue to show: any Transport (local, a browser database's, `connectLeasehold`'s, `httpTransport`'s). */
  transport: Transport | null;
  /** A browser database (or anything with a `transport`): shows its `transport`. */
  database: { readonly transport: Transport } | null;
  /** Show Redrive and Discard on dead letters. Mirrors the `actions` attribute. Default false. */
  actions: boolean;
  /**
   * Read again this often (ms) besides change notices, to show leases taken (a claim raises no
   * notice) and other processes' changes; null: on notices and hold ends only. Default 1000.
   */
  pollMs: number | null;
  /**
   * How a message card and a dead letter write their event: `(event) => string`, shown as text
   * (never HTML), shortened at a word's end past 120 characters with the whole in a tooltip; a
   * preview that throws shows why on the card. Default (and after setting null) `defaultPreview`:
   * a small event whole as JSON, a larger one by its telling fields (`type`, `op`, `text`…)
   * before its ids. Reading it gives the function in use.
   * @throws TypeError (on set) for anything but a function or null.
   */
  preview: EventPreview | null;
}

/** The counts line, in stats()'s own words and order of a group's life; the groups' words are these. */
const COUNTS = ['queued', 'groups', 'ready', 'leased', 'waiting', 'blocked', 'held', 'dead'] as const;

/** Made on first define: `HTMLElement` exists only in a browser, and the entry must import anywhere. */
function makeClass(): CustomElementConstructor {
  return class LeaseholdInspector extends HTMLElement implements LeaseholdInspectorElement {
    static observedAttributes = ['actions'];
    #transport: Transport | null = null;
    #pollMs: number | null = 1_000;
    #watch: QueueWatch | null = null;
    #unsubscribe: (() => void) | null = null;
    #frame = 0;
    /** The snapshot's clock reading, and when (page time) it arrived: countdowns run from there. */
    #at = { now: 0, page: 0 };
    readonly #queue = new QueueView();
    readonly #timeline = new TimelinePanel();
    readonly #counts = h('p', { class: 'counts', attrs: { 'data-testid': 'inspector-counts', 'aria-live': 'polite' } });
    readonly #error = h('p', { class: 'error', attrs: { role: 'alert', 'data-testid': 'inspector-error' } });
    #dead = this.#deadView();

    constructor() {
      super();
      const root = this.attachShadow({ mode: 'open' });
      const style = document.createElement('style');
      style.textContent = THEME_CSS + VIEW_CSS;
      this.#error.hidden = true;
      root.append(style, h('h2', { text: 'Queue' }), this.#counts, this.#error, this.#queue.el, h('h2', { text: 'Dead letters' }), this.#dead.el, h('h2', { text: 'Timeline' }), this.#timeline.el);
    }

    get transport(): Transport | null {
      return this.#transport;
    }

    set transport(value: Transport | null) {
      if (value !== null && (typeof value !== 'object' || typeof (value as Partial<Transport>).inspect !== 'function')) {
        throw new TypeError('transport must be a leasehold Transport or null');
      }
      this.#transport = value;
      this.#rewatch();
    }

    get pollMs(): number | null {
      return this.#pollMs;
    }

    set pollMs(value: number | null) {
      if (value !== null && (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))) throw new RangeError(`pollMs must be a finite number > 0 or null, got ${String(value)}`);
      this.#pollMs = value;
      this.#rewatch();
    }

    #rewatch(): void {
      this.#stop();
      this.#watch?.close();
      const transport = this.#transport;
      this.#watch = transport ? watchQueue(transport, this.#pollMs === null ? { inspect: true } : { inspect: true, pollMs: this.#pollMs }) : null;
      if (this.isConnected) this.#start();
    }

    get preview(): EventPreview {
      return this.#queue.preview;
    }

    set preview(value: EventPreview | null) {
      const preview = checkPreview('preview', value);
      this.#queue.preview = preview;
      this.#dead.preview = preview;
      this.#draw();
    }

    get database(): { readonly transport: Transport } | null {
      return this.#transport ? { transport: this.#transport } : null;
    }

    set database(value: { readonly transport: Transport } | null) {
      if (value !== null && (typeof value !== 'object' || typeof value.transport !== 'object')) throw new TypeError('database must have a transport, or be null');
      this.transport = value ? value.transport : null;
    }

    get actions(): boolean {
      return this.hasAttribute('actions');
    }

    set actions(value: boolean) {
      if (typeof value !== 'boolean') throw new TypeError('actions must be a boolean');
      this.toggleAttribute('actions', value);
    }

    attributeChangedCallback(): void {
      const fresh = this.#deadView();
      fresh.preview = this.#queue.preview;
      this.#dead.el.replaceWith(fresh.el);
      this.#dead = fresh;
      this.#draw();
    }

    connectedCallback(): void {
      this.#start();
    }

    disconnectedCallback(): void {
      this.#stop();
    }

    #start(): void {
      if (!this.#watch || this.#unsubscribe) return;
      this.#unsubscribe = this.#watch.subscribe(() => this.#draw());
      this.#draw();
      const tick = () => {
        const now = this.#at.now + (performance.now() - this.#at.page);
        this.#queue.tick(now);
        this.#timeline.draw(now);
        this.#frame = requestAnimationFrame(tick);
      };
      this.#frame = requestAnimationFrame(tick);
    }

    #stop(): void {
      this.#unsubscribe?.();
      this.#unsubscribe = null;
      cancelAnimationFrame(this.#frame);
    }

    #draw(): void {
      const state = this.#watch?.getSnapshot();
      if (!state) return setText(this.#counts, 'Reading…');
      const { stats, snapshot, error } = state;
      this.#error.hidden = error === null;
      setText(this.#error, error === null ? '' : `The last read failed: ${String(error)}`);
      if (stats) setText(this.#counts, COUNTS.map((name) => `${name} ${stats[name]}`).join(' · '));
      if (!snapshot) return;
      this.#at = { now: snapshot.now, page: performance.now() };
      this.#queue.render(snapshot);
      this.#dead.render(snapshot.deadLetters);
      this.#timeline.update(snapshot);
    }

    #deadView(): DeadLettersView {
      if (!this.hasAttribute('actions')) return new DeadLettersView();
      const act = (what: string, call: (transport: Transport, seq: number) => Promise<unknown>) => (seq: number) => {
        const transport = this.#transport;
        if (!transport) return;
        call(transport, seq).then(
          () => this.#watch?.refresh(),
          (error: unknown) => {
            this.#error.hidden = false;
            setText(this.#error, `${what} #${seq} was refused: ${String(error)}`);
          },
        );
      };
      const redrive = act('redrive', (transport, seq) => transport.redrive(seq));
      const discard = act('discard', (transport, seq) => transport.discard(seq));
      const discardAll = act('discard with dependents', (transport, seq) => transport.discard(seq, { dependents: true }));
      return new DeadLettersView({ onRedrive: redrive, onDiscard: (seq, dependents) => (dependents ? discardAll : discard)(seq) });
    }
  };
}

/**
 * Defines the `<leasehold-inspector>` element (or `name`, a valid custom element name) in this
 * page, once: later calls return the same class. Load the entry when the inspector is first
 * shown (`await import('leasehold/inspector')`) and it costs the page nothing before.
 * @throws TypeError outside a browser (no `customElements`), or for a name that is not a string.
 * @throws DOMException (SyntaxError) for a name the browser refuses, or one taken by another element.
 */
export function defineInspector(name = 'leasehold-inspector'): CustomElementConstructor {
  if (typeof name !== 'string') throw new TypeError('name must be a string');
  if (typeof customElements === 'undefined') throw new TypeError('defineInspector needs a browser page (customElements)');
  const existing = customElements.get(name);
  if (existing) return existing;
  const element = makeClass();
  customElements.define(name, element);
  return element;
}

declare global {
  interface HTMLElementTagNameMap {
    'leasehold-inspector': LeaseholdInspectorElement;
  }
}
