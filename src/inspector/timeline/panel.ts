/**
 * The inspector's timeline: a lane per group over the last minute, each lease a bar in its
 * holder's colour (ended by ✓ when acked, a clock where it ran out), parks and delays hatched,
 * ✕ where a message went to the dead letters. Fed by snapshots alone (`TimelineModel.reconcile`),
 * so it works on any transport, a remote one too: a lease is drawn from where a snapshot first
 * saw it. Times are seconds since the inspector's first snapshot.
 */
import type { TransportSnapshot } from '../../transport/contract.js';
import { h, svg } from '../dom.js';
import { byLane, drawAxis, drawLane, LABEL, LANE, patterns } from './draw.js';
import { TimelineModel } from './model.js';

/** How much time the panel shows, back from now. */
const WINDOW_MS = 60_000;
/** Lanes drawn at most (the groups seen most recently); the rest are counted. */
const MAX_LANES = 24;
const WIDTH = 720;

/** The timeline panel; `update` with each snapshot, `draw` as time passes. */
export class TimelinePanel {
  /** The panel's root element. */
  readonly el: HTMLElement;
  // Private: what it keeps is the panel's business, fed by `update` alone.
  readonly #model = new TimelineModel();
  readonly #figure = h('div', { class: 'timeline', attrs: { 'data-testid': 'timeline' } });
  readonly #note = h('p', { class: 'hint' });
  #base: number | null = null;
  #drawn = { version: -1, second: -1 };

  constructor() {
    this.el = h('div', {}, this.#figure, this.#note);
  }

  /** Adds what `snapshot` shows (times taken relative to the first snapshot) and redraws. */
  update(snapshot: TransportSnapshot): void {
    const base = (this.#base ??= snapshot.now);
    const at = (t: number) => t - base;
    const shifted: TransportSnapshot = {
      ...snapshot,
      now: at(snapshot.now),
      groups: snapshot.groups.map((g) => ({ ...g, messages: g.messages.map((m) => ({ ...m, expiresAt: m.expiresAt === null ? null : at(m.expiresAt) })) })),
      deadLetters: snapshot.deadLetters.map((d) => ({ ...d, deadAt: at(d.deadAt) })),
    };
    this.#model.reconcile(shifted);
    this.draw(snapshot.now);
  }

  /** Redraws at `now` (the transport's clock) if anything moved or a second passed. */
  draw(now: number): void {
    if (this.#base === null) return;
    const t = now - this.#base;
    const second = Math.floor(t / 1000);
    if (this.#model.version === this.#drawn.version && second === this.#drawn.second) return;
    this.#drawn = { version: this.#model.version, second };
    const scale = { from: Math.max(0, t - WINDOW_MS), to: Math.max(t, 1000), x0: LABEL, x1: WIDTH - 8 };
    const lanes = [...byLane(this.#model, 'group')].slice(-MAX_LANES);
    const height = lanes.length * LANE + 22;
    const root = svg('svg', { viewBox: `0 0 ${WIDTH} ${height}`, width: '100%', role: 'img', 'aria-label': 'Leases, waits and dead letters per group over the last minute' }, patterns());
    lanes.forEach(([lane, items], i) => root.append(drawLane(this.#model, 'group', lane, items, i, i * LANE, scale, t)));
    root.append(drawAxis(scale, height));
    this.#figure.replaceChildren(root);
    const hidden = this.#model.groups.length - lanes.length;
    this.#note.textContent = hidden > 0 ? `${hidden} older group${hidden === 1 ? '' : 's'} not drawn.` : 'Bars: leases in their holder’s colour (✓ acked); hatched: parks and delays; ✕: a dead letter.';
  }
}
