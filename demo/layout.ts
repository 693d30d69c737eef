/**
 * The page's layout: header, lessons, then panels — the timeline across the top, the queue (and
 * under it lesson 11's server) and the side column (workers, executions, log), then the SQL at work, publishing and dead letters.
 * Each panel is a <details> whose open state is remembered.
 */
import type { Settings } from './settings.ts';
import { h, icon } from './views/dom.ts';

export interface Parts {
  time: HTMLElement;
  storage: HTMLElement;
  lessons: HTMLElement;
  timeline: HTMLElement;
  queue: HTMLElement;
  workers: HTMLElement;
  executions: HTMLElement;
  log: HTMLElement;
  sql: HTMLElement;
  publish: HTMLElement;
  dead: HTMLElement;
  server: HTMLElement;
}

const STATES: [string, string][] = [
  ['ready', 'ready: free to claim'],
  ['leased', 'leased: a worker holds it'],
  ['expired', 'expired: its lease ran out, the next claim takes it'],
  ['parked', 'parked: nacked with a delay, blocks its group'],
  ['delayed', 'delayed: published to wait, blocks its group until due'],
  ['held', 'held: waits behind its group’s dead letter (lesson 9)'],
  ['blocked', 'blocked: waits for the messages it names in after (lesson 12)'],
  ['dead', 'dead letter: gave up, or rejected'],
];

/** Builds the page; returns the panels by id (the loop asks whether one is open). */
export function layout(parts: Parts, settings: Settings, traceMax: number, save: () => void): Map<string, HTMLDetailsElement> {
  const panels = new Map<string, HTMLDetailsElement>();
  const panel = (id: string, title: string, hint: string, body: HTMLElement, open = true): HTMLDetailsElement => {
    const el = h('details', { class: `panel panel-${id}`, attrs: { 'data-panel': id } }, h('summary', {}, h('h2', { text: title }), h('span', { class: 'hint', text: hint })), body);
    el.open = settings.panels[id] ?? open;
    el.addEventListener('toggle', () => {
      settings.panels[id] = el.open;
      save();
    });
    panels.set(id, el);
    return el;
  };
  const legend = h('ul', { class: 'legend', attrs: { 'aria-label': 'Message states' } }, ...STATES.map(([state, text]) => h('li', { class: `legend-${state}` }, icon(state), ` ${text}`)));
  const timelineKey = h(
    'p',
    { class: 'hint tl-key' },
    'Bars: leases, coloured by holder, ending in ✓ when acked or a clock where the lease ran out; dashed: acked late. Hatched: parked or delayed. ',
    h('span', { class: 'tl-key-refused', text: '▼' }),
    ' a late ack or nack refused (fencing); ',
    h('span', { class: 'tl-key-dead', text: '⊗' }),
    ' a dead letter. The log below tells the same in words.',
  );
  document.body.replaceChildren(
    h(
      'header',
      { class: 'top' },
      h('div', { class: 'brand' }, h('h1', { text: 'leasehold' }), h('p', { text: 'Leases, parks and trace rings, live from the real library: an OPFS-backed SQLite queue in a worker, on a clock you control.' })),
      parts.time,
      parts.storage,
    ),
    parts.lessons,
    h(
      'main',
      { class: 'grid' },
      panel('timeline', 'Timeline', 'who held what, when — drag to look back', h('div', {}, timelineKey, parts.timeline)),
      h(
        'div',
        { class: 'main-col' },
        panel('queue', 'Queue', 'groups in the order the next claims visit them', h('div', {}, legend, parts.queue)),
        // Shown only while lesson 11's server runs (main.ts): under the queue it delivers from.
        panel('server', 'Server', 'leasehold/receiver: what it received, its receipts, the app’s table', parts.server),
      ),
      h(
        'div',
        { class: 'side' },
        panel('workers', 'Workers', 'this tab’s consumers', parts.workers),
        panel('executions', 'Executions', `trace rings of ${traceMax} slots`, parts.executions),
        panel('log', 'Log', 'what happened, and why', parts.log),
      ),
      panel('sql', 'SQL at work', 'the last claim and ack, as SQLite ran them', parts.sql, false),
      panel('publish', 'Publish', 'any group, any label', parts.publish, false),
      panel('dead', 'Dead letters', 'messages that failed too often or were rejected', parts.dead, false),
    ),
  );
  return panels;
}
