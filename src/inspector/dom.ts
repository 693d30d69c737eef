/**
 * DOM helpers of the inspector's views; of them, leasehold/inspector exports only the state icons.
 * Everything the user or the queue supplies (group names, event data) goes in through
 * `textContent` or attributes, never as HTML: no view sets innerHTML with data.
 */

type Child = Node | string | null | undefined | false;

/** What {@link h} sets on a new element. */
export interface Props {
  class?: string;
  text?: string;
  /** Attributes, including `data-*` and `aria-*`. */
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
}

/** A new element with `props` and `children` (strings become text nodes, never HTML). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value);
  for (const [type, listener] of Object.entries(props.on ?? {})) el.addEventListener(type, listener as EventListener);
  for (const child of children) if (child) el.append(child);
  return el;
}

/** Writes only on change: most of a frame's labels are unchanged, and writes cost layout. */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets (or, with null, removes) an attribute, writing only on change. */
export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/**
 * Puts `list`'s children in the order of `want` (elements not in `list` are inserted), moving
 * only those off the longest run already in order. A claim moves its group from the front of the
 * round-robin to the back: one move, where a naive pass moves every row after it, and each move
 * costs the browser a layout of the list (Firefox spent 25 ms a frame at 200 groups).
 */
export function reorder(list: Element, want: readonly Element[]): void {
  const at = new Map<Element, number>();
  for (let i = 0; i < list.children.length; i++) at.set(list.children[i]!, i);
  const stays = new Uint8Array(want.length);
  // Longest increasing run of old positions (patience sorting): `tails[k]` ends a run of k+1.
  const tails: number[] = [];
  const before = new Int32Array(want.length).fill(-1);
  want.forEach((el, i) => {
    const old = at.get(el);
    if (old === undefined) return;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (at.get(want[tails[mid]!]!)! < old) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) before[i] = tails[lo - 1]!;
    tails[lo] = i;
  });
  for (let i = tails.length ? tails[tails.length - 1]! : -1; i >= 0; i = before[i]!) stays[i] = 1;
  // From the end, each element that moves goes right before its successor, already in place.
  for (let i = want.length - 1; i >= 0; i--) if (!stays[i]) list.insertBefore(want[i]!, want[i + 1] ?? null);
}

const SVG = 'http://www.w3.org/2000/svg';

/** A new SVG element with `attrs` and `children`. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, ...children: SVGElement[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(child);
  return el;
}

/** Icon shapes (16×16, stroked): every state has one, so colour is never the only signal. */
const SHAPES: Record<string, string> = {
  ready: 'M8 3a5 5 0 1 0 0.01 0Z',
  leased: 'M4 7.5h8v6H4Z M5.5 7.5V5.5a2.5 2.5 0 0 1 5 0v2',
  expired: 'M8 2.5v5.5l3 2 M3.2 5.5A5.5 5.5 0 1 0 6 2.8',
  parked: 'M5.5 3.5v9 M10.5 3.5v9',
  delayed: 'M4 2.5h8 M4 13.5h8 M5 2.5c0 3 3 4 3 5.5S5 10.5 5 13.5 M11 2.5c0 3-3 4-3 5.5s3 2.5 3 5.5',
  dead: 'M4 4l8 8 M12 4l-8 8',
  // A no-entry sign: the group is stopped at its dead letter.
  held: 'M8 3a5 5 0 1 0 0.01 0Z M5.5 8h5',
  // An arrow against a wall: it waits for the messages it names.
  blocked: 'M3 8h6 M7 5.5 9.5 8 7 10.5 M12.5 3.5v9',
  idle: 'M3 8h10',
  working: 'M5 3.5l7 4.5-7 4.5Z',
  paused: 'M5.5 3.5v9 M10.5 3.5v9',
  stalled: 'M4 2.5h8 M4 13.5h8 M5 2.5c0 4 6 3.5 6 5.5s-6 1.5-6 5.5 M11 2.5c0 4-6 3.5-6 5.5s6 1.5 6 5.5',
  crashed: 'M4 4l8 8 M12 4l-8 8',
};

/** A 14×14 icon for a message or worker state (`ready`, `leased`, `dead`…); unknown names draw `ready`'s. */
export function icon(name: string): SVGSVGElement {
  const el = svg('svg', { viewBox: '0 0 16 16', width: 14, height: 14, class: 'icon', 'aria-hidden': 'true' });
  el.append(svg('path', { d: SHAPES[name] ?? SHAPES.ready!, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.6, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' }));
  return el;
}

/** Swaps an icon's shape in place (cheaper than a new element each frame). */
export function setIcon(el: SVGSVGElement, name: string): void {
  const path = el.firstElementChild;
  const d = SHAPES[name] ?? SHAPES.ready!;
  if (path && path.getAttribute('d') !== d) path.setAttribute('d', d);
}
