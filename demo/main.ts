/**
 * The demo page's wiring: the views, the animation-frame loop that moves the clock and redraws,
 * the snapshot fetch (one `inspect()` in flight at a time, only when something may have
 * changed), looking back in time (views drawn from kept frames while the clock stands still),
 * and the scene in the address.
 */
import './styles.css';
import type { ExecutionView } from './views/executions.ts';
import { Demo } from './app.ts';
import { DemoClock } from './clock.ts';
import { TRACE_MAX } from './database.ts';
import { type Frame, workerState } from './history.ts';
import { layout } from './layout.ts';
import { LESSONS, policyOf } from './lessons.ts';
import { playTo } from './replay.ts';
import { loadSettings, saveSettings } from './settings.ts';
import { readScene, writeScene } from './share.ts';
import { joinTabs } from './sync.ts';
import { StorageControls, TimeControls } from './views/controls.ts';
import { ExecutionsView } from './views/executions.ts';
import { LessonBar } from './views/lessons.ts';
import { LogView } from './views/log.ts';
import { DeadLettersView, VIEW_CSS } from 'leasehold/inspector';
import { PublishForm } from './views/publish.ts';
import { seconds } from './clock.ts';
import { QueueView } from './views/queue.ts';
import { ServerView } from './views/server.ts';
import { SqlView } from './views/sql.ts';
import { TimelineView } from './views/timeline.ts';
import { WorkersView } from './views/workers.ts';
import { ledger } from './workflow.ts';

// The queue and dead-letter views are leasehold/inspector's: their styles come with them.
document.head.append(Object.assign(document.createElement('style'), { textContent: VIEW_CSS }));
const settings = await loadSettings();
const linked = readScene();
const scene = linked && (!linked.own || linked.scene.join) ? linked.scene : null;
// A link replays its lesson from 0 (below); a lesson's second tab (7, 10) joins the shared file.
if (scene && (scene.join || LESSONS.find((l) => l.id === scene.lesson)?.storage === 'opfs')) settings.storage = 'opfs';
// A memory database starts empty on every load, so its timeline does too.
settings.time.memory = 0;
// Reduced motion: nothing moves until asked (the clock starts paused), the live edge of the
// timeline moves in steps, and the styles drop transitions.
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');
const clock = new DemoClock(settings.time[settings.storage], scene?.speed ?? settings.speed, settings.paused || reducedMotion.matches || !!scene);
const demo = new Demo(clock, settings);
const tabs = joinTabs(clock, () => demo.settings.storage === 'opfs');
let joined = scene?.join ?? false;
/** The moment being looked at; null: the present. */
let view: number | null = null;
/** A link's scene is being played to its time: the page is not settled until it is there. */
let replaying = false;

const save = (): void => {
  settings.speed = clock.speed;
  settings.paused = clock.paused;
  settings.time[settings.storage] = clock.now();
  saveSettings(settings);
  writeScene({ lesson: settings.lesson, speed: clock.speed, time: view ?? clock.now(), join: joined });
};
const onControl = (): void => {
  save();
  tabs.announce();
};
/** Anything that acts on the queue first comes back to the present. */
const live = <A extends unknown[]>(action: (...args: A) => void) => (...args: A): void => {
  scrub(null);
  action(...args);
};
const logError = (what: string) => (error: unknown) => demo.log.add({ at: clock.now(), kind: 'info', text: `${what} refused: ${String(error)}` });

const time = new TimeControls(clock, onControl);
const storage = new StorageControls(settings.storage, (choice) => void switchStorage(choice));
const lessons = new LessonBar(LESSONS, (id) => void pickLesson(id));
const queue = new QueueView('The queue is empty. Pick a lesson, or publish a message below.');
const workers = new WorkersView(live((options) => void demo.addWorker(options)), live((id, action) => demo.workerAction(id, action)));
const executions = new ExecutionsView(TRACE_MAX);
const dead = new DeadLettersView({
  onRedrive: live((seq) => void demo.redrive(seq).catch(logError('redrive'))),
  onDiscard: live((seq, dependents) => void demo.discard(seq, dependents).catch(logError('discard'))),
  time: seconds,
});
const publish = new PublishForm(
  live(({ groupId, event, priority, delayMs }) => void demo.publish(groupId, event, priority, delayMs).catch(logError('publish'))),
  live(() => void bulkLoad()),
);
const log = new LogView(demo.log);
const sql = new SqlView();
const server = new ServerView();
const timeline = new TimelineView(demo.timeline, (t) => scrub(t));
const panels = layout(
  { time: time.el, storage: storage.el, lessons: lessons.el, timeline: timeline.el, queue: queue.el, workers: workers.el, executions: executions.el, log: log.el, sql: sql.el, publish: publish.el, dead: dead.el, server: server.el },
  settings,
  TRACE_MAX,
  save,
);
// Nothing to show until lesson 11 starts its server.
panels.get('server')!.hidden = true;
const applyMotion = (): void => {
  timeline.reducedMotion = reducedMotion.matches;
  document.body.dataset.motion = reducedMotion.matches ? 'reduced' : 'full';
};
reducedMotion.addEventListener('change', applyMotion);
applyMotion();

/** Looks at moment `t` (the clock stops: the present must hold still), or back at the present. */
function scrub(t: number | null): void {
  const next = t === null || t >= clock.now() ? null : Math.max(demo.history.start, t);
  if (next === view) return;
  if (next !== null && !clock.paused) clock.setPaused(true);
  view = next;
  shown = undefined;
  if (view === null && latest) drawFrame(latest, clock.now(), true);
  onControl();
}

async function switchStorage(choice: 'opfs' | 'memory'): Promise<void> {
  scrub(null);
  save();
  settings.storage = choice;
  clock.set(settings.time[choice]);
  await demo.open(choice);
  save();
}

async function pickLesson(id: number): Promise<void> {
  scrub(null);
  joined = false;
  lessons.show(id);
  if (LESSONS.find((l) => l.id === id)?.storage === 'opfs' && settings.storage !== 'opfs') await switchStorage('opfs');
  // A lesson on another dead-letter policy runs on that policy's own database.
  if (policyOf(id) !== demo.policy) await demo.open(settings.storage, policyOf(id));
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

/** Draws one frame's queue, dead letters and rings; workers and countdowns follow each animation frame. */
function drawFrame(frame: Frame, now: number, isLive: boolean): void {
  queue.render(frame.snapshot);
  queue.tick(now);
  dead.render(frame.snapshot.deadLetters);
  executions.render(frame.executions);
  workers.render(isLive ? demo.workers : frame.workers, now, isLive);
  panels.get('server')!.hidden = frame.server === undefined;
  server.render(frame.server);
}

// The loop: move the clock, fetch a snapshot when something may have changed, redraw.
let fetching = false;
let seenChanges = -1;
let lastFetch = 0;
/** How long the last snapshot took (inspect, executions, render). */
let fetchMs = 0;
let lastSave = 0;
let last = performance.now();
let latest: Frame | undefined;
let shown: Frame | undefined;
async function fetchSnapshot(): Promise<void> {
  fetching = true;
  seenChanges = demo.changes;
  lastFetch = performance.now();
  try {
    const db = demo.db;
    const snapshot = await db.transport.inspect();
    const views = new Map<string, ExecutionView>();
    const runs = ledger.read();
    for (const id of demo.executions) {
      const execution = await db.store.load(id);
      const view: ExecutionView = { execution, trace: await db.store.readTrace(id) };
      // A workflow keeps its state in the execution's `$workflow` field (docs/workflows.md).
      if (execution?.$workflow !== undefined) Object.assign(view, { workflow: await demo.workflows.get(id), runs: runs.filter((r) => r.execution === id) });
      views.set(id, view);
    }
    if (panels.get('sql')!.open) sql.render(await db.sqlTrace());
    demo.setSnapshot(snapshot);
    latest = { at: snapshot.now, snapshot, workers: demo.workers.map(workerState), executions: views, server: demo.server?.state() };
    demo.history.add(latest);
    if (view === null) drawFrame(latest, clock.now(), true);
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
  // Playing is the present: pressing play while looking back comes back.
  if (view !== null && !clock.paused) scrub(null);
  // Another tab's workers change the queue without a notice here: look again now and then.
  const stale = !clock.paused || demo.changes !== seenChanges || now - lastFetch > 500;
  // With a big backlog an inspect takes tens of milliseconds of the database's time: leave it
  // twice that for the workers' claims before asking again. Countdowns still move every frame.
  const due = now - lastFetch >= 2 * fetchMs;
  if (!fetching && stale && due && demo.db) void fetchSnapshot();
  time.render();
  if (view === null) {
    queue.tick(clock.now());
    workers.render(demo.workers, clock.now());
  } else {
    const past = demo.history.at(view);
    if (past && past !== shown) drawFrame(past, view, false);
    shown = past;
  }
  log.setView(view);
  if (panels.get('timeline')!.open) timeline.render(clock.now(), view);
  const owner = demo.owner;
  storage.show(settings.storage, settings.storage === 'memory' ? 'In memory: this tab alone uses it.' : !owner ? 'opening…' : owner.isThisTab ? 'This tab owns the database file (it holds the Web Lock); other open tabs forward their calls to it.' : 'Another tab owns the database file; this tab forwards its calls there.');
  document.body.dataset.owner = owner ? String(owner.isThisTab) : '';
  document.body.dataset.settled = String(demo.activity.pending === 0 && !fetching && demo.changes === seenChanges && !replaying);
  if (now - lastSave > 1000 && !clock.paused) {
    lastSave = now;
    save();
    tabs.announce();
  }
  requestAnimationFrame(frame);
}

document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && view !== null) scrub(null);
});
clock.onChange(() => demo.changed());
// Marked at once, not at the next frame: a test that clicks "step" and then waits for the page
// to settle must never see the answer from before its click.
demo.onChange(() => (document.body.dataset.settled = 'false'));
addEventListener('pagehide', save);
await demo.open(settings.storage, policyOf(scene?.lesson ?? settings.lesson));
requestAnimationFrame(frame);
const joining = scene?.join ? LESSONS.find((l) => l.id === scene.lesson) : undefined;
if (joining) {
  // A second tab (lessons 7 and 10): the queue is the first tab's; this tab only adds its own worker.
  demo.workerPrefix = 'tab2-';
  settings.lesson = joining.id;
  lessons.show(joining.id, true);
  joining.join?.({ addWorker: (s) => demo.addWorker(s), trackExecution: (id) => demo.trackExecution(id) });
} else if (scene && scene.lesson > 0) {
  replaying = true;
  await pickLesson(scene.lesson);
  await playTo(clock, demo.activity, scene.time);
  replaying = false;
} else {
  lessons.show(settings.lesson);
}
save();
document.body.dataset.ready = 'true';
