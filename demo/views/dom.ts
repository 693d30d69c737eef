/**
 * The demo's DOM helpers: a page's own small hyperscript, as any app would write it (leasehold
 * exports queue views, not DOM utilities). The state icons are the inspector's (from the source
 * tree), so the demo's legend and worker cards draw each state as the inspector's views do.
 */
export { icon, setIcon } from '../../src/inspector/dom.js';

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

/** A new SVG element with `attrs` and `children`. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}, ...children: SVGElement[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const child of children) el.append(child);
  return el;
}
