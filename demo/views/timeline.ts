/**
 * The lease timeline: time across, a lane per group (or per worker), drawn live. Only the lanes
 * in sight are drawn (the list scrolls), so 200 groups cost what 12 do. Dragging across it, or
 * the slider under it (arrow keys, Page Up/Down, Home, End), picks a past moment to look at; the
 * page then shows the queue, workers and rings as they were (see history.ts) — the database is
 * never touched. The log is its text alternative: the same events, in words.
 */
import { seconds } from '../clock.ts';
import { byLane, drawAxis, drawLane, LABEL, LANE, type LaneMode, patterns, type Scale, colour, x } from '../timeline/draw.ts';
import { exportPng, exportSvg } from '../timeline/export.ts';
import type { Item, TimelineModel } from '../timeline/model.ts';
import { h, setAttr, setText, svg } from './dom.ts';

const AXIS = 22;
/** The window shown: the last two minutes at most, growing in 5 s steps so the scale rarely moves. */
const WINDOW_MS = 120_000;

export class TimelineView {
  readonly el: HTMLElement;
  readonly #model: TimelineModel;
  readonly #axis = svg('svg', { class: 'tl-axis', height: AXIS, 'aria-hidden': 'true' });
  readonly #lanes = svg('svg', { class: 'tl-lanes', role: 'img', 'aria-details': 'log', 'data-testid': 'timeline' });
  readonly #scroll = h('div', { class: 'tl-scroll' });
  readonly #slider = h('input', { class: 'tl-scrub', attrs: { type: 'range', min: '0', max: '0', step: '100', value: '0', 'aria-label': 'Look back in time', 'data-testid': 'tl-scrub' } });
  readonly #status = h('p', { class: 'tl-status', attrs: { 'data-testid': 'tl-status' } });
  readonly #live = h('button', { text: 'Back to live', attrs: { type: 'button', 'data-testid': 'tl-live' } });
  readonly #legend = h('ul', { class: 'tl-legend', attrs: { 'aria-label': 'Lease holders' } });
  #mode: LaneMode = 'group';
  #width = 800;
  #drawn = '';
  #index: { version: number; mode: LaneMode; lanes: Map<string, Item[]> } | undefined;
  #scale: Scale = { from: 0, to: 10_000, x0: LABEL, x1: 780 };
  #now = 0;
  #view: number | null = null;
  #reducedMotion = false;
  readonly #patterns = patterns();
  readonly #laneGroup = svg('g');
  readonly #nowLines = svg('g');
  #laneCache = new Map<string, { key: string; g: SVGGElement }>();

  /** `onScrub(t)`: look at moment `t`; `null`: back to the present. */
  constructor(model: TimelineModel, onScrub: (t: number | null) => void) {
    this.#model = model;
    const mode = (value: LaneMode, text: string) => {
      const input = h('input', { attrs: { type: 'radio', name: 'tl-mode', value, 'data-testid': `tl-mode-${value}` } });
      input.checked = value === 'group';
      input.addEventListener('change', () => {
        this.#mode = value;
        this.#scroll.scrollTop = 0;
        this.#drawn = '';
      });
      return h('label', {}, input, ` ${text}`);
    };
    const button = (text: string, testid: string, action: () => void) => h('button', { text, attrs: { type: 'button', 'data-testid': testid }, on: { click: action } });
    const toolbar = h(
      'div',
      { class: 'tl-toolbar' },
      h('fieldset', {}, h('legend', { text: 'Lanes' }), mode('group', 'one per group'), mode('worker', 'one per worker')),
      this.#legend,
      h('span', { class: 'tl-export' }, button('Export SVG', 'export-svg', () => exportSvg(this.#exportArgs())), button('Export PNG', 'export-png', () => void exportPng(this.#exportArgs()))),
    );
    this.#scroll.append(this.#lanes);
    this.#scroll.addEventListener('scroll', () => (this.#drawn = ''), { passive: true });
    this.#live.addEventListener('click', () => onScrub(null));
    this.#slider.addEventListener('input', () => onScrub(Number(this.#slider.value) >= this.#now ? null : Number(this.#slider.value)));
    // Drag across the lanes or the axis to scrub; a press outside the plot does nothing.
    for (const target of [this.#lanes, this.#axis]) {
      target.addEventListener('pointerdown', (event) => {
        const at = this.#timeAt(event);
        if (at === null) return;
        target.setPointerCapture(event.pointerId);
        onScrub(at >= this.#now ? null : at);
        const move = (e: PointerEvent) => {
          const t = this.#timeAt(e);
          if (t !== null) onScrub(t >= this.#now ? null : t);
        };
        target.addEventListener('pointermove', move);
        target.addEventListener('pointerup', () => target.removeEventListener('pointermove', move), { once: true });
      });
    }
    this.el = h('div', { class: 'timeline' }, toolbar, this.#axis, this.#scroll, h('div', { class: 'tl-scrubber' }, this.#slider, this.#status, this.#live));
    // The drawing follows the panel's width; the SVGs never push the panel wider (see styles).
    const resized = new ResizeObserver(() => {
      this.#width = Math.max(300, Math.floor(this.#scroll.clientWidth || this.el.clientWidth));
      this.#drawn = '';
    });
    resized.observe(this.el);
    resized.observe(this.#scroll);
  }

  /** Under reduced motion the live edge moves in steps (4 per second), not every frame. */
  set reducedMotion(reduced: boolean) {
    this.#reducedMotion = reduced;
  }

  /** Redraws if anything in sight changed. `view`: the moment being looked at, null when live. */
  render(now: number, view: number | null): void {
    this.#now = now;
    this.#view = view;
    const to = Math.max(10_000, Math.ceil((now + 500) / 5_000) * 5_000);
    this.#scale = { from: Math.max(0, to - WINDOW_MS), to, x0: LABEL, x1: this.#width - 12 };
    // Redraw when the live edge moved a whole pixel (under reduced motion: every 250 ms).
    const step = this.#reducedMotion && view === null ? 250 : (this.#scale.to - this.#scale.from) / Math.max(1, this.#scale.x1 - this.#scale.x0);
    const shownNow = Math.floor(now / step) * step;
    const lanes = this.#lanesByMode();
    const first = Math.floor(this.#scroll.scrollTop / LANE);
    const count = Math.ceil((this.#scroll.clientHeight || 300) / LANE) + 1;
    const key = `${this.#model.version}|${this.#mode}|${shownNow}|${view}|${first}|${count}|${this.#width}|${lanes.size}`;
    if (key === this.#drawn) return;
    this.#drawn = key;
    const names = [...lanes.keys()];
    const height = Math.max(LANE, names.length * LANE);
    const width = this.#width;
    setAttr(this.#lanes, 'width', String(width));
    setAttr(this.#lanes, 'height', String(height));
    setAttr(this.#axis, 'width', String(width));
    // A lane is drawn anew only when its items changed, the scale moved, or it holds an open
    // lease (whose bar grows with the clock): rebuilding every lane in sight each frame cost
    // Chromium 3.8 ms a frame at 200 groups, 1.5 ms with this.
    const { from, x1 } = this.#scale;
    const drawn = new Map<string, { key: string; g: SVGGElement }>();
    const next = names.slice(first, first + count).map((lane, i) => {
      const index = first + i;
      const items = lanes.get(lane)!;
      let open = 0;
      for (const item of items) if (item.kind === 'lease' && item.end === null) open++;
      const key = `${this.#mode}|${index}|${from}|${to}|${x1}|${items.length}|${open}|${open ? shownNow : ''}`;
      const cached = this.#laneCache.get(lane);
      const entry = cached?.key === key ? cached : { key, g: drawLane(this.#model, this.#mode, lane, items, index, index * LANE, this.#scale, shownNow) };
      drawn.set(lane, entry);
      return entry.g;
    });
    this.#laneCache = drawn;
    const shown = this.#laneGroup.children;
    // Swap the lanes that changed in place; rebuild the list only when lanes came or went.
    if (shown.length === next.length && next.every((g, i) => g === shown[i] || !g.isConnected)) {
      next.forEach((g, i) => g !== shown[i] && shown[i]!.replaceWith(g));
    } else this.#laneGroup.replaceChildren(...next);
    if (this.#lanes.firstChild !== this.#patterns) this.#lanes.replaceChildren(this.#patterns, this.#laneGroup);
    this.#nowLines.replaceChildren(...this.#lines(height, shownNow));
    if (this.#nowLines.parentNode !== this.#lanes) this.#lanes.append(this.#nowLines);
    this.#axis.replaceChildren(drawAxis(this.#scale, AXIS), ...this.#lines(AXIS, shownNow));
    setAttr(this.#lanes, 'aria-label', `Lease timeline, ${names.length} ${this.#mode === 'group' ? 'group' : 'worker'} lane${names.length === 1 ? '' : 's'}, ${seconds(this.#scale.from)} to ${seconds(now)}${view === null ? '' : `, looking at ${seconds(view)}`}. The log lists the same events in words.`);
    setAttr(this.#lanes, 'data-lanes', String(names.length));
    setAttr(this.#lanes, 'data-first', String(first));
    setAttr(this.#lanes, 'data-drawn', String(Math.min(count, Math.max(0, names.length - first))));
    this.#renderScrubber(now, view);
    this.#renderLegend();
  }

  #renderScrubber(now: number, view: number | null): void {
    setAttr(this.#slider, 'min', String(this.#scale.from));
    setAttr(this.#slider, 'max', String(now));
    const value = String(view ?? now);
    if (this.#slider.value !== value) this.#slider.value = value;
    setAttr(this.#slider, 'aria-valuetext', view === null ? `${seconds(now)}, now` : `${seconds(view)}, in the past (now ${seconds(now)})`);
    setText(this.#status, view === null ? 'Live. Drag across the timeline, or use this slider, to look back.' : `Looking back at ${seconds(view)}: the queue, workers and rings as they were then. The database is at ${seconds(now)}, untouched.`);
    this.#live.hidden = view === null;
    setAttr(this.el, 'data-view', view === null ? 'live' : String(view));
  }

  #renderLegend(): void {
    const key = this.#model.workers.join(',');
    if (this.#legend.dataset.key === key) return;
    this.#legend.dataset.key = key;
    this.#legend.replaceChildren(...this.#model.workers.map((w) => h('li', {}, h('span', { class: 'tl-swatch', attrs: { style: `background:${colour(this.#model, w)}` } }), ` ${w}`)));
  }

  #lines(height: number, now: number): SVGElement[] {
    const lines: SVGElement[] = [svg('line', { class: 'tl-now', x1: x(this.#scale, now), x2: x(this.#scale, now), y1: 0, y2: height, stroke: '#1f6feb', 'stroke-width': 2, 'data-testid': 'tl-now' })];
    if (this.#view !== null) {
      const sx = x(this.#scale, this.#view);
      lines.push(svg('line', { x1: sx, x2: sx, y1: 0, y2: height, stroke: '#f59e0b', 'stroke-width': 3, 'data-testid': 'tl-view' }));
    }
    return lines;
  }

  #lanesByMode(): Map<string, Item[]> {
    const version = this.#model.version;
    if (this.#index?.version !== version || this.#index.mode !== this.#mode) this.#index = { version, mode: this.#mode, lanes: byLane(this.#model, this.#mode) };
    return this.#index.lanes;
  }

  #timeAt(event: PointerEvent): number | null {
    const box = (event.currentTarget as SVGSVGElement).getBoundingClientRect();
    const px = event.clientX - box.left;
    const { from, to, x0, x1 } = this.#scale;
    if (px < x0 - 4 || x1 <= x0) return null;
    const t = from + ((Math.min(px, x1) - x0) / (x1 - x0)) * (to - from);
    return Math.max(from, Math.min(this.#now, Math.round(Math.max(0, t) / 100) * 100));
  }

  #exportArgs() {
    return { model: this.#model, mode: this.#mode, lanes: this.#lanesByMode(), now: this.#now, view: this.#view, width: Math.max(this.#width, 720), scale: this.#scale };
  }
}
