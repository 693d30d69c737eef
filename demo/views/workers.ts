/**
 * The page's workers: what each holds, its lease's countdown, its settings, and the controls
 * that make the lessons happen (pause, stall, come back late, crash), plus a form to add one.
 */
import { seconds } from '../clock.ts';
import type { WorkerState } from '../history.ts';
import type { WorkerKind, WorkerSettings } from '../workers.ts';
import { h, icon, setAttr, setIcon, setText } from './dom.ts';

const STATUS_LABEL = { idle: 'idle: looking for work', working: 'working', paused: 'paused', stalled: 'stalled (frozen)', crashed: 'crashed' } as const;

export type WorkerAction = 'pause' | 'stall' | 'late' | 'crash';

export interface NewWorker {
  kind: WorkerKind;
  visibilityMs: number;
  minPriority: number;
  workMs: number;
}

interface Card {
  el: HTMLLIElement;
  icon: SVGSVGElement;
  status: HTMLElement;
  holds: HTMLElement;
  note: HTMLElement;
  pause: HTMLButtonElement;
  stall: HTMLButtonElement;
  late: HTMLButtonElement;
  crash: HTMLButtonElement;
}

export class WorkersView {
  readonly el: HTMLElement;
  readonly #list = h('ul', { class: 'workers', attrs: { 'data-testid': 'workers' } });
  /** Keyed by the settings object: one per worker, kept by past frames too (ids repeat across lessons). */
  readonly #cards = new Map<WorkerSettings, Card>();
  readonly #form: HTMLFormElement;
  readonly #onAction: (id: string, action: WorkerAction) => void;

  constructor(onAdd: (worker: NewWorker) => void, onAction: (id: string, action: WorkerAction) => void) {
    this.#onAction = onAction;
    const select = (name: string, label: string, options: [string, string][], value: string) => {
      const el = h('select', { attrs: { name, 'data-testid': `new-worker-${name}` } }, ...options.map(([v, text]) => h('option', { text, attrs: { value: v } })));
      el.value = value;
      return h('label', {}, h('span', { text: label }), el);
    };
    const form = h(
      'form',
      { class: 'add-worker', attrs: { 'aria-label': 'Add a worker' } },
      select('kind', 'Kind', [['plain', 'plain (claim, work, ack)'], ['runtime', 'runtime (executions)']], 'plain'),
      select('visibility', 'Lease', [['2000', '2 s'], ['5000', '5 s'], ['10000', '10 s']], '5000'),
      select('floor', 'Floor', [0, 1, 2, 3, 4].map((p) => [String(p), `P${p}`]), '0'),
      select('work', 'Works', [['500', '0.5 s'], ['1000', '1 s'], ['2000', '2 s'], ['4000', '4 s']], '1000'),
      h('button', { text: 'Add worker', attrs: { type: 'submit', 'data-testid': 'add-worker' } }),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const data = new FormData(form);
      onAdd({ kind: data.get('kind') as WorkerKind, visibilityMs: Number(data.get('visibility')), minPriority: Number(data.get('floor')), workMs: Number(data.get('work')) });
    });
    this.#form = form;
    this.el = h('div', {}, this.#list, form);
  }

  /** Draws `workers` as they are (`live`), or as they were at a past moment (controls off). */
  render(workers: readonly WorkerState[], now: number, live = true): void {
    const keep = new Set(workers.map((w) => w.settings));
    for (const [settings, card] of this.#cards) {
      if (!keep.has(settings)) {
        card.el.remove();
        this.#cards.delete(settings);
      }
    }
    workers.forEach((worker, i) => {
      let card = this.#cards.get(worker.settings);
      if (!card) {
        card = this.#card(worker);
        this.#cards.set(worker.settings, card);
      }
      if (this.#list.children[i] !== card.el) this.#list.insertBefore(card.el, this.#list.children[i] ?? null);
      this.#update(card, worker, now, live);
    });
    for (const control of this.#form.elements) (control as HTMLButtonElement).disabled = !live;
  }

  #card(worker: WorkerState): Card {
    const { id, kind, visibilityMs, minPriority, workMs } = worker.settings;
    const act = (action: WorkerAction) => () => this.#onAction(id, action);
    const button = (text: string, testid: string, action: () => void) => h('button', { text, attrs: { type: 'button', 'data-testid': testid, 'aria-label': `${text}: ${id}` }, on: { click: action } });
    const status = h('span', { class: 'worker-status' });
    const i = icon('idle');
    const pause = button('Pause', 'pause-worker', act('pause'));
    const stall = button('Stall', 'stall-worker', act('stall'));
    const late = button('Come back late', 'come-back', act('late'));
    const crash = button('Crash', 'crash-worker', act('crash'));
    const holds = h('p', { class: 'holds' });
    const note = h('p', { class: 'note' });
    const el = h(
      'li',
      { class: `worker kind-${kind}`, attrs: { 'data-testid': 'worker', 'data-worker': id } },
      h('div', { class: 'worker-head' }, h('strong', { text: id }), h('span', { class: 'badge', text: kind }), h('span', { class: 'status-line' }, i, status)),
      h('p', { class: 'worker-settings', text: `lease ${short(visibilityMs)} · floor P${minPriority} · works ${short(workMs)}` }),
      holds,
      note,
      h('div', { class: 'worker-buttons' }, pause, ...(kind === 'plain' ? [stall, late] : []), crash),
    );
    return { el, icon: i, status, holds, note, pause, stall, late, crash };
  }

  #update(card: Card, worker: WorkerState, now: number, live: boolean): void {
    const status = worker.status;
    setAttr(card.el, 'data-status', status);
    setIcon(card.icon, status);
    setText(card.status, STATUS_LABEL[status]);
    const lease = worker.lease;
    const holds = lease
      ? `${status === 'crashed' ? 'abandoned' : 'holds'} ${lease.groupId}#${lease.seq} (try ${lease.attempt}) · ${lease.expiresAt >= now ? `${seconds(lease.expiresAt - now)} left` : `ran out at ${seconds(lease.expiresAt)}`}`
      : 'holds nothing';
    setText(card.holds, holds);
    setText(card.note, worker.note);
    const gone = status === 'crashed' || !live;
    setText(card.pause, worker.paused ? 'Resume' : 'Pause');
    setAttr(card.pause, 'aria-label', `${worker.paused ? 'Resume' : 'Pause'}: ${worker.id}`);
    card.pause.disabled = gone || status === 'stalled';
    card.stall.disabled = gone || status === 'stalled';
    card.late.disabled = status !== 'stalled' || !live;
    card.crash.disabled = gone;
  }
}

/** "5 s", "0.5 s": settings are round numbers, so no trailing ".0". */
function short(ms: number): string {
  return `${ms / 1000} s`;
}
