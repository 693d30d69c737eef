/**
 * Drawing the timeline as SVG: one lane (a group's, or a worker's) at a time, so the live view
 * draws only the lanes in sight and the export draws them all with the same code. Colours are
 * written as attributes, not CSS, so an exported file looks the same anywhere. Every bar has a
 * shape or a glyph besides its colour: ✓ acked, a clock where a lease ran out, hatching for waits,
 * a ▼! for a refused call, ✕ for a dead letter.
 */
import { svg } from '../dom.js';
import { seconds, workerLabel } from '../format.js';
import type { Item, LeaseSpan, Mark, TimelineModel, WaitSpan } from './model.js';

/** A lane per group, or a lane per worker (its leases in every group). */
export type LaneMode = 'group' | 'worker';

/** Maps time (`from`..`to`, ms) to x (`x0`..`x1`, px). */
export interface Scale {
  from: number;
  to: number;
  x0: number;
  x1: number;
}

/** A lane's height (px). */
export const LANE = 24;
/** The width of the lane labels left of the plot (px): a scale's `x0` at least. */
export const LABEL = 112;
/** The colour of text and lines. */
export const INK = '#17202c';
const MUTED = '#5b6676';
const REFUSED = '#b91c1c';
const WAIT = { park: '#6d28d9', delay: '#0f766e' } as const;
/** Holders' colours: distinct in hue and lightness, all dark enough for white text. */
const PALETTE = ['#1d4ed8', '#047857', '#a16207', '#be185d', '#0e7490', '#334155', '#4d7c0f', '#9a3412'];

/** The x of time `t` on `scale`, clamped to the plot. */
export function x(scale: Scale, t: number): number {
  const span = Math.max(1, scale.to - scale.from);
  return scale.x0 + ((Math.min(Math.max(t, scale.from), scale.to) - scale.from) / span) * (scale.x1 - scale.x0);
}

/** The colour of `worker`'s bars: by its place in `model.workers`, from a palette of eight. */
export function colour(model: TimelineModel, worker: string): string {
  const i = model.workers.indexOf(worker);
  return PALETTE[(i < 0 ? 0 : i) % PALETTE.length]!;
}

/** Items by lane, rebuilt when the model changed: lanes in sight are drawn every frame. */
export function byLane(model: TimelineModel, mode: LaneMode): Map<string, Item[]> {
  const lanes = new Map<string, Item[]>((mode === 'group' ? model.groups : model.workers).map((lane) => [lane, []]));
  for (const span of model.leases) lanes.get(mode === 'group' ? span.group : span.worker)?.push(span);
  if (mode === 'group') for (const wait of model.waits) lanes.get(wait.group)?.push(wait);
  for (const mark of model.marks) lanes.get(mode === 'group' || !mark.worker ? mark.group : mark.worker)?.push(mark);
  return lanes;
}

/** Hatch patterns for parks and delays. Include once per SVG. */
export function patterns(): SVGDefsElement {
  const defs = svg('defs');
  for (const [kind, stroke] of Object.entries(WAIT)) {
    const pattern = svg('pattern', { id: `tl-hatch-${kind}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' });
    pattern.append(svg('rect', { width: 6, height: 6, fill: '#ffffff' }), svg('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke, 'stroke-width': 2.5 }));
    defs.append(pattern);
  }
  return defs;
}

/** One lane at vertical offset `y`: its label and everything that happened in it. */
export function drawLane(model: TimelineModel, mode: LaneMode, lane: string, items: Item[], index: number, y: number, scale: Scale, now: number): SVGGElement {
  const g = svg('g', { 'data-testid': 'tl-lane', 'data-lane': lane });
  g.append(svg('rect', { x: 0, y, width: scale.x1 + 8, height: LANE, fill: index % 2 ? '#f8fafc' : '#ffffff' }));
  const label = svg('text', { x: 6, y: y + LANE / 2 + 4, fill: INK, 'font-size': 12, 'font-weight': 600 });
  // A worker's lane by its short label (`consume-3f2a`), a group's by its id; both whole in the tooltip.
  const name = mode === 'worker' ? workerLabel(lane) : lane;
  label.textContent = name.length > 15 ? `${name.slice(0, 14)}…` : name;
  label.append(svg('title'));
  label.lastElementChild!.textContent = lane;
  g.append(label);
  for (const item of items) {
    if (item.kind === 'lease') g.append(lease(model, mode, item, y, scale, now));
    else if (item.kind === 'park' || item.kind === 'delay') g.append(wait(item, y, scale));
  }
  // Marks go on top of the bars they explain.
  for (const item of items) if (item.kind === 'refused' || item.kind === 'dead') g.append(mark(item, y, scale));
  return g;
}

function lease(model: TimelineModel, mode: LaneMode, span: LeaseSpan, y: number, scale: Scale, now: number): SVGGElement {
  const fill = colour(model, span.worker);
  const heldUntil = span.end ?? now;
  const solidEnd = Math.min(heldUntil, span.expiresAt);
  const x0 = x(scale, span.start);
  const x1 = Math.max(x0 + 2, x(scale, solidEnd));
  const ranOut = span.how === 'expired' || (span.end === null && now > span.expiresAt);
  const state = span.how ?? (ranOut ? 'expired' : 'held');
  const g = svg('g', {
    'data-testid': 'tl-lease',
    'data-group': span.group,
    'data-seq': span.seq,
    'data-attempt': span.attempt,
    'data-worker': span.worker,
    'data-start': span.start,
    'data-state': state,
  });
  const title = svg('title');
  title.textContent = `${span.worker} held ${span.group}#${span.seq} (try ${span.attempt}) from ${seconds(span.start)}, lease until ${seconds(span.expiresAt)}: ${describe(span, state)}`;
  g.append(title, svg('rect', { x: x0, y: y + 4, width: x1 - x0, height: LANE - 8, rx: 3, fill }));
  if (span.end !== null && span.end > span.expiresAt) {
    // Acked or nacked after the lease ran out (nobody had claimed it again): the late stretch.
    g.append(svg('rect', { x: x1, y: y + 5, width: Math.max(1, x(scale, span.end) - x1), height: LANE - 10, fill: 'none', stroke: fill, 'stroke-dasharray': '3 2' }));
  }
  const long = mode === 'group' ? `${workerLabel(span.worker)} · try ${span.attempt}` : `${span.group}#${span.seq}`;
  const short = mode === 'group' ? `try ${span.attempt}` : `#${span.seq}`;
  const text = [long, short].find((t) => x1 - x0 > t.length * 6.2 + 6);
  if (text) {
    const t = svg('text', { x: x0 + 4, y: y + LANE / 2 + 4, fill: '#ffffff', 'font-size': 11 });
    t.textContent = text;
    g.append(t);
  }
  const endX = span.end === null ? x1 : Math.max(x1, x(scale, span.end));
  if (span.how === 'acked') g.append(glyph('M2 6.5l2.6 2.6L10 3.5', endX + 2, y, INK));
  // The clock sits inside the bar's end when it fits, so the next holder's bar does not cover it.
  if (ranOut) g.append(x1 - x0 > 18 ? glyph(CLOCK, x1 - 14, y, '#ffffff') : glyph(CLOCK, x1 + 2, y, '#a14b06'));
  return g;
}

function wait(span: WaitSpan, y: number, scale: Scale): SVGGElement {
  const x0 = x(scale, span.start);
  const x1 = Math.max(x0 + 2, x(scale, span.until));
  const g = svg('g', { 'data-testid': `tl-${span.kind}`, 'data-group': span.group, 'data-seq': span.seq, 'data-until': span.until });
  const title = svg('title');
  title.textContent = `${span.group}#${span.seq} ${span.kind === 'park' ? 'parked' : 'delayed'} until ${seconds(span.until)}: its group waits`;
  g.append(title, svg('rect', { x: x0, y: y + 6, width: x1 - x0, height: LANE - 12, fill: `url(#tl-hatch-${span.kind})`, stroke: WAIT[span.kind], 'stroke-width': 1 }));
  return g;
}

function mark(m: Mark, y: number, scale: Scale): SVGGElement {
  const cx = x(scale, m.at);
  const g = svg('g', { 'data-testid': `tl-${m.kind}`, 'data-group': m.group, 'data-seq': m.seq, 'data-time': m.at, 'data-attempt': m.attempt });
  const title = svg('title');
  if (m.kind === 'refused') {
    title.textContent = `${seconds(m.at)}: ${m.worker}'s late ${m.what} of ${m.group}#${m.seq} (try ${m.attempt}) was refused — LeaseLostError (fencing)`;
    // Outlined in white, so it stands out on any holder's colour.
    g.append(
      title,
      svg('line', { x1: cx, y1: y + 9, x2: cx, y2: y + LANE - 1, stroke: '#ffffff', 'stroke-width': 4 }),
      svg('line', { x1: cx, y1: y + 9, x2: cx, y2: y + LANE - 1, stroke: REFUSED, 'stroke-width': 2 }),
      svg('path', { d: `M${cx - 7} ${y}h14l-7 10Z`, fill: REFUSED, stroke: '#ffffff', 'stroke-width': 1.5, 'stroke-linejoin': 'round' }),
    );
  } else {
    title.textContent = `${seconds(m.at)}: ${m.group}#${m.seq} went to the dead letters after ${m.attempt} attempts`;
    g.append(title, svg('circle', { cx, cy: y + LANE / 2, r: 7, fill: '#ffffff', stroke: REFUSED, 'stroke-width': 2 }), svg('path', { d: `M${cx - 3} ${y + LANE / 2 - 3}l6 6m0 -6l-6 6`, stroke: REFUSED, 'stroke-width': 2 }));
  }
  return g;
}

const CLOCK = 'M6 1.5a4.5 4.5 0 1 0 0.01 0Z M6 3.5v2.8l1.8 1.2';

function glyph(d: string, gx: number, y: number, stroke: string): SVGPathElement {
  return svg('path', { d, transform: `translate(${gx} ${y + 6})`, fill: 'none', stroke, 'stroke-width': 1.8, 'stroke-linecap': 'round' });
}

function describe(span: LeaseSpan, state: string): string {
  switch (state) {
    case 'acked':
      return `acked at ${seconds(span.end!)}`;
    case 'released':
      return `given back (nack) at ${seconds(span.end!)}`;
    case 'parked':
      return `parked at ${seconds(span.end!)}`;
    case 'rejected':
      return `rejected at ${seconds(span.end!)}: a dead letter at once`;
    case 'gone':
      return 'finished in another tab';
    case 'expired':
      return `ran out at ${seconds(span.expiresAt)}`;
    default:
      return 'held now';
  }
}

/** The time axis: a tick every 1, 2, 5 or 10 s, whichever keeps them apart. */
export function drawAxis(scale: Scale, height: number): SVGGElement {
  const g = svg('g', { 'aria-hidden': 'true' });
  const span = scale.to - scale.from;
  const step = [1000, 2000, 5000, 10_000, 30_000, 60_000].find((s) => (s / span) * (scale.x1 - scale.x0) >= 48) ?? 60_000;
  for (let t = Math.ceil(scale.from / step) * step; t <= scale.to; t += step) {
    const tx = x(scale, t);
    const label = svg('text', { x: tx, y: height - 6, fill: MUTED, 'font-size': 11, 'text-anchor': 'middle' });
    label.textContent = `${t / 1000} s`;
    g.append(svg('line', { x1: tx, y1: height - 3, x2: tx, y2: height, stroke: MUTED }), label);
  }
  return g;
}
