/**
 * The demo page's wiring: layout, the animation-frame loop that moves the clock and redraws, and
 * the snapshot fetch (one `inspect()` in flight at a time, only when something may have changed).
 */
import './styles.css';
import type { ExecutionView } from './views/executions.ts';
import { Demo } from './app.ts';
import { DemoClock } from './clock.ts';
import { TRACE_MAX } from './database.ts';
import { LESSONS } from './lessons.ts';
import { loadSettings, saveSettings } from './settings.ts';
import { joinTabs } from './sync.ts';
import { StorageControls, TimeControls } from './views/controls.ts';
import { h, icon } from './views/dom.ts';
import { ExecutionsView } from './views/executions.ts';
import { LessonBar } from './views/lessons.ts';
import { LogView } from './views/log.ts';
import { DeadLettersView, PublishForm } from './views/publish.ts';
import { QueueView } from './views/queue.ts';
import { WorkersView } from './views/workers.ts';

const settings = await loadSettings();
// A memory database starts empty on every load, so its timeline does too.
settings.time.memory = 0;
const clock = new DemoClock(settings.time[settings.storage], settings.speed, settings.paused);
const demo = new Demo(clock, settings);
const tabs = joinTabs(clock, () => demo.settings.storage === 'opfs');

const save = (): void => {
  settings.speed = clock.speed;
  settings.paused = clock.paused;
  settings.time[settings.storage] = clock.now();
  saveSettings(settings);
};
const onControl = (): void => {
  save();
  tabs.announce();
};

const time = new TimeControls(clock, onControl);
const storage = new StorageControls(settings.storage, (choice) => void switchStorage(choice));
const lessons = new LessonBar(LESSONS, (id) => void pickLesson(id));
const queue = new QueueView();
const workers = new WorkersView((options) => demo.addWorker(options));
const executions = new ExecutionsView(TRACE_MAX);
const dead = new DeadLettersView((seq) => void demo.redrive(seq));
const publish = new PublishForm(
  ({ groupId, event, priority }) => void demo.publish(groupId, event, priority).catch((error: unknown) => demo.log.add({ at: clock.now(), kind: 'info', text: `publish refused: ${String(error)}` })),
  () => void bulkLoad(),
);
const log = new LogView(demo.log);

/** A collapsible panel whose open state is remembered. */
function panel(id: string, title: string, hint: string, body: HTMLElement, open = true): HTMLDetailsElement {
  const el = h('details', { class: `panel panel-${id}`, attrs: { 'data-panel': id } }, h('summary', {}, h('h2', { text: title }), h('span', { class: 'hint', text: hint })), body);
  el.open = settings.panels[id] ?? open;
  el.addEventListener('toggle', () => {
    settings.panels[id] = el.open;
    save();
  });
  return el;
}

const legend = h(
  'ul',
  { class: 'legend', attrs: { 'aria-label': 'Message states' } },
  ...[
    ['ready', 'ready: free to claim'],
    ['leased', 'leased: a worker holds it'],
    ['expired', 'lease ran out: the next claim takes it'],
    ['parked', 'parked: nacked with a delay, blocks its group'],
    ['dead', 'dead letter: gave up'],
  ].map(([state, text]) => h('li', { class: `legend-${state}` }, icon(state!), ` ${text}`)),
);

document.body.replaceChildren(
  h(
    'header',
    { class: 'top' },
    h('div', { class: 'brand' }, h('h1', { text: 'leasehold' }), h('p', { text: 'Leases, parks and trace rings, live from the real library: an OPFS-backed SQLite queue in a worker, on a clock you control.' })),
    time.el,
    storage.el,
  ),
  lessons.el,
  h(
    'main',
    { class: 'grid' },
    panel('queue', 'Queue', 'groups in the order the next claims visit them', h('div', {}, legend, queue.el)),
    h(
      'div',
      { class: 'side' },
      panel('workers', 'Workers', 'this tab’s consumers', workers.el),
      panel('executions', 'Executions', `trace rings of ${TRACE_MAX} slots`, executions.el),
      panel('log', 'Log', 'what happened, and why', log.el),
    ),
    panel('publish', 'Publish', 'any group, any label', publish.el, false),
    panel('dead', 'Dead letters', 'messages that failed too often', dead.el, false),
  ),
);

async function switchStorage(choice: 'opfs' | 'memory'): Promise<void> {
  save();
  settings.storage = choice;
  clock.set(settings.time[choice]);
  await demo.open(choice);
  save();
}

async function pickLesson(id: number): Promise<void> {
  lessons.show(id);
  await demo.startLesson(id);
  onControl();
  tabs.announce(true);
}

async function bulkLoad(): Promise<void> {
  const at = clock.now();
  const batch: Promise<number>[] = [];
  for (let g = 1; g <= 200; g++) for (let m = 1; m <= 10; m++) batch.push(demo.publish(`bulk-${String(g).padStart(3, '0')}`, { label: `item ${m}` }, g % 5));
  await demo.activity.track(Promise.all(batch));
  demo.log.add({ at, kind: 'info', text: 'Published 200 groups × 10 messages' });
}

// The loop: move the clock, fetch a snapshot when something may have changed, redraw.
let fetching = false;
let seenChanges = -1;
let lastFetch = 0;
/** How long the last snapshot took (inspect, executions, render). */
let fetchMs = 0;
let lastSave = 0;
let last = performance.now();
async function fetchSnapshot(): Promise<void> {
  fetching = true;
  seenChanges = demo.changes;
  lastFetch = performance.now();
  try {
    const db = demo.db;
    const snapshot = await db.transport.inspect();
    const views = new Map<string, ExecutionView>();
    for (const id of demo.executions) views.set(id, { execution: await db.store.load(id), trace: await db.store.readTrace(id) });
    demo.setSnapshot(snapshot);
    queue.render(snapshot);
    dead.render(snapshot.deadLetters);
    executions.render(views);
  } catch {
    // The database closed under the fetch (storage switched): the next frame fetches again.
    seenChanges = -1;
  } finally {
    fetching = false;
    fetchMs = performance.now() - lastFetch;
  }
}

function frame(now: number): void {
  clock.tick(now - last);
  last = now;
  // Another tab's workers change the queue without a notice here: look again now and then.
  const stale = !clock.paused || demo.changes !== seenChanges || now - lastFetch > 500;
  // With a big backlog an inspect takes tens of milliseconds of the database's time: leave it
  // twice that for the workers' claims before asking again. Countdowns still move every frame.
  const due = now - lastFetch >= 2 * fetchMs;
  if (!fetching && stale && due && demo.db) void fetchSnapshot();
  time.render();
  queue.tick(clock.now());
  workers.render(demo.workers, clock.now());
  const owner = demo.owner;
  storage.show(settings.storage, settings.storage === 'memory' ? 'In memory: this tab alone uses it.' : !owner ? 'opening…' : owner.isThisTab ? 'This tab owns the database file (it holds the Web Lock); other open tabs forward their calls to it.' : 'Another tab owns the database file; this tab forwards its calls there.');
  document.body.dataset.owner = owner ? String(owner.isThisTab) : '';
  document.body.dataset.settled = String(demo.activity.pending === 0 && !fetching && demo.changes === seenChanges);
  if (now - lastSave > 1000 && !clock.paused) {
    lastSave = now;
    save();
    tabs.announce();
  }
  requestAnimationFrame(frame);
}

clock.onChange(() => demo.changed());
// Marked at once, not at the next frame: a test that clicks "step" and then waits for the page
// to settle must never see the answer from before its click.
demo.onChange(() => (document.body.dataset.settled = 'false'));
addEventListener('pagehide', save);
await demo.open(settings.storage);
lessons.show(settings.lesson);
document.body.dataset.ready = 'true';
requestAnimationFrame(frame);
