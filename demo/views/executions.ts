/**
 * Executions and their trace rings. The store keeps the last `traceMax` steps of each execution
 * with an index that keeps climbing; the ring shows that literally: `traceMax` slots around a
 * circle, step `i` in slot `i mod traceMax`, so a new step overwrites the oldest one. A workflow
 * execution also lists its steps as the store records them, each with the runs of its code that
 * the shop's ledger saw (which tab, which worker, how often).
 */
import type { Execution, TraceStep } from 'leasehold';
import type { WorkflowSnapshot } from 'leasehold/workflow';
import { seconds } from '../clock.ts';
import type { StepRun } from '../workflow.ts';
import { h, setAttr, setText, svg } from './dom.ts';

export interface ExecutionView {
  execution: Execution | undefined;
  trace: TraceStep[];
  /** Where the workflow stands, if the execution runs one… */
  workflow?: WorkflowSnapshot | undefined;
  /** …and the runs of its steps' code, oldest first. */
  runs?: StepRun[];
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
  workflow: HTMLElement;
}

export class ExecutionsView {
  readonly el: HTMLElement;
  readonly #list = h('ul', { class: 'executions', attrs: { 'data-testid': 'executions' } });
  readonly #empty = h('p', { class: 'empty', text: 'No executions yet. Lesson 6 creates one, handled by a runtime worker; lesson 10 starts a workflow.' });
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
    const workflow = h('div', { class: 'workflow', attrs: { 'data-testid': 'workflow' } });
    workflow.hidden = true;
    const el = h('li', { class: 'execution', attrs: { 'data-testid': 'execution', 'data-execution': id } }, h('h3', { text: id }), state, workflow, h('div', { class: 'exe-body' }, ring, h('div', {}, key, steps)));
    return { el, state, slots, centre, centreSub, steps, workflow };
  }

  #update(panel: Panel, view: ExecutionView): void {
    const { execution, trace } = view;
    const handled = Number(execution?.handled ?? 0);
    if (view.workflow) setText(panel.state, `workflow ${view.workflow.workflow} · ${view.workflow.status} · version ${execution?.version ?? 0}`);
    else setText(panel.state, execution ? `version ${execution.version} · ${handled} event${handled === 1 ? '' : 's'} handled · last: ${String(execution.last ?? '—')}` : 'not created yet');
    this.#workflow(panel, view);
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

  /**
   * The workflow's steps, oldest first: each recorded step with the runs of its code, then the
   * step whose code runs now (in the ledger, not recorded yet). Rebuilt only when it changed.
   */
  #workflow(panel: Panel, view: ExecutionView): void {
    const snapshot = view.workflow;
    panel.workflow.hidden = !snapshot;
    if (!snapshot) return;
    const runs = view.runs ?? [];
    const rows = snapshot.steps.map((step) => ({
      name: step.name,
      kind: step.kind,
      state: step.pending ? 'pending' : 'recorded',
      runs: step.kind === 'run' ? runs.filter((r) => r.step === step.name) : [],
    }));
    const recorded = new Set(snapshot.steps.map((step) => step.name));
    const running = runs.filter((r) => !recorded.has(r.step));
    if (snapshot.status === 'running' && running.length > 0) {
      const name = running.at(-1)!.step;
      rows.push({ name, kind: 'run', state: 'running', runs: running.filter((r) => r.step === name) });
    }
    const result = snapshot.status === 'completed' ? `Result, from the record: ${String(snapshot.result)}` : '';
    const signature = JSON.stringify([rows, snapshot.status, result]);
    if (panel.workflow.dataset.signature === signature) return;
    panel.workflow.dataset.signature = signature;
    setAttr(panel.workflow, 'data-status', snapshot.status);
    const items = rows.map((row, i) => {
      const who = row.runs.map((r) => `${r.worker} in ${r.tab} at ${seconds(r.at)}`).join(', then ');
      const what =
        row.kind === 'sleep'
          ? row.state === 'pending' ? 'waiting on a store timer (kept in the database, not in a tab)' : 'its store timer fired'
          : `${row.state === 'running' ? 'running, not recorded yet' : 'recorded'} · ran ${row.runs.length}× (${who || 'no run seen'})`;
      return h(
        'li',
        { attrs: { 'data-testid': 'wf-step', 'data-step': row.name, 'data-state': row.state, 'data-runs': String(row.runs.length), 'data-ran-by': row.runs.map((r) => r.worker).join(',') } },
        h('span', { class: 'step-index', text: `${i + 1}. ${row.name}` }),
        ` · ${what}`,
      );
    });
    panel.workflow.replaceChildren(
      h('p', { class: 'hint', text: 'Recorded: the store holds the step’s result, and every replay returns it. Ran: how often the step’s code ran, as the shop’s ledger (outside the database) saw it.' }),
      h('ol', { class: 'wf-steps', attrs: { 'aria-label': `recorded steps of ${snapshot.id}` } }, ...items),
      ...(result ? [h('p', { class: 'wf-result', attrs: { 'data-testid': 'wf-result' }, text: result })] : []),
    );
  }
}
