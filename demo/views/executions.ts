/**
 * Executions and their trace rings. The store keeps the last `traceMax` steps of each execution
 * with an index that keeps climbing; the ring shows that literally: `traceMax` slots around a
 * circle, step `i` in slot `i mod traceMax`, so a new step overwrites the oldest one.
 */
import type { Execution, TraceStep } from 'leasehold';
import { h, setAttr, setText, svg } from './dom.ts';

export interface ExecutionView {
  execution: Execution | undefined;
  trace: TraceStep[];
}

const SIZE = 168;
const CENTER = SIZE / 2;
const RADIUS = 62;

interface Panel {
  el: HTMLLIElement;
  state: HTMLElement;
  slots: { group: SVGGElement; circle: SVGCircleElement; text: SVGTextElement }[];
  centre: SVGTextElement;
  centreSub: SVGTextElement;
  steps: HTMLUListElement;
}

export class ExecutionsView {
  readonly el: HTMLElement;
  readonly #list = h('ul', { class: 'executions', attrs: { 'data-testid': 'executions' } });
  readonly #empty = h('p', { class: 'empty', text: 'No executions yet. Lesson 6 creates one; a runtime worker handles its events.' });
  readonly #panels = new Map<string, Panel>();
  readonly #traceMax: number;

  constructor(traceMax: number) {
    this.#traceMax = traceMax;
    this.el = h('div', {}, this.#empty, this.#list);
  }

  render(views: Map<string, ExecutionView>): void {
    for (const [id, panel] of this.#panels) {
      if (!views.has(id)) {
        panel.el.remove();
        this.#panels.delete(id);
      }
    }
    for (const [id, view] of views) {
      let panel = this.#panels.get(id);
      if (!panel) {
        panel = this.#panel(id);
        this.#panels.set(id, panel);
        this.#list.append(panel.el);
      }
      this.#update(panel, view);
    }
    this.#empty.hidden = views.size > 0;
  }

  #panel(id: string): Panel {
    const ring = svg('svg', { viewBox: `0 0 ${SIZE} ${SIZE}`, class: 'ring', role: 'img', 'aria-label': `trace ring of ${id}: ${this.#traceMax} slots` });
    ring.append(svg('circle', { cx: CENTER, cy: CENTER, r: RADIUS, class: 'ring-track' }));
    const slots = Array.from({ length: this.#traceMax }, (_, slot) => {
      const angle = (slot / this.#traceMax) * 2 * Math.PI - Math.PI / 2;
      const x = CENTER + RADIUS * Math.cos(angle);
      const y = CENTER + RADIUS * Math.sin(angle);
      const circle = svg('circle', { cx: x, cy: y, r: 15, class: 'slot' });
      const text = svg('text', { x, y: y + 4, 'text-anchor': 'middle', class: 'slot-index' });
      const group = svg('g', { 'data-testid': 'ring-slot', 'data-slot': slot }, circle, text);
      ring.append(group);
      return { group, circle, text };
    });
    const centre = svg('text', { x: CENTER, y: CENTER - 2, 'text-anchor': 'middle', class: 'ring-centre' });
    const centreSub = svg('text', { x: CENTER, y: CENTER + 16, 'text-anchor': 'middle', class: 'ring-sub' });
    ring.append(centre, centreSub);
    const state = h('p', { class: 'exe-state' });
    const steps = h('ul', { class: 'steps', attrs: { 'aria-label': `kept trace steps of ${id}, oldest first` } });
    const key = h('p', { class: 'hint', text: 'Filled: the newest step. Dashed: the oldest kept, the next to be overwritten.' });
    const el = h('li', { class: 'execution', attrs: { 'data-testid': 'execution', 'data-execution': id } }, h('h3', { text: id }), state, h('div', { class: 'exe-body' }, ring, h('div', {}, key, steps)));
    return { el, state, slots, centre, centreSub, steps };
  }

  #update(panel: Panel, view: ExecutionView): void {
    const { execution, trace } = view;
    const handled = Number(execution?.handled ?? 0);
    setText(panel.state, execution ? `version ${execution.version} · ${handled} event${handled === 1 ? '' : 's'} handled · last: ${String(execution.last ?? '—')}` : 'not created yet');
    const indices = trace.map((step) => Number(step.index));
    const newest = indices.length ? Math.max(...indices) : -1;
    const oldest = indices.length ? Math.min(...indices) : -1;
    const bySlot = new Map(indices.map((index) => [index % this.#traceMax, index]));
    panel.slots.forEach((slot, i) => {
      const index = bySlot.get(i);
      setText(slot.text, index === undefined ? '' : String(index));
      const role = index === undefined ? 'empty' : index === newest ? 'newest' : index === oldest ? 'oldest' : 'kept';
      setAttr(slot.group, 'data-role', role);
      setAttr(slot.group, 'data-index', index === undefined ? null : String(index));
    });
    setText(panel.centre, `${newest + 1} step${newest === 0 ? '' : 's'}`);
    setText(panel.centreSub, `${trace.length} of ${this.#traceMax} kept`);
    setAttr(panel.el, 'data-kept', indices.join(','));

    // The kept steps, oldest first; rebuilt only when the newest index moved.
    if (panel.steps.dataset.newest === String(newest)) return;
    panel.steps.dataset.newest = String(newest);
    panel.steps.replaceChildren(
      ...trace.map((step) =>
        h('li', {}, h('span', { class: 'step-index', text: `#${String(step.index)}` }), ` ${String(step.label ?? step.event ?? '')} · ${String(step.worker ?? '')} · try ${String(step.attempt ?? '')}`),
      ),
    );
  }
}
