// The page: notes and their tasks, each record's sync status (groupStatus), the outbox's
// (syncState, with this tab's consumer), the held ones with Retry and Discard, what this tab
// sent, and whether the browser kept the outbox's database.
import { reportLostOrigin } from 'leasehold/http';
import { groupStatus, queueStatus, syncState, watchQueue } from 'leasehold/watch';
import { openOutbox, RECEIVER } from './outbox.js';
import { loadRecords, onRecordsChange, updateRecords } from './records.js';

const $ = (selector, root = document) => root.querySelector(selector);
const sent = [];
let savedHere = 0;
let outbox;
let watch;
/** The note rows drawn, by note id: built once, so typing is never interrupted by a redraw. */
const rows = new Map();

/** Creates an element with attributes and children; text is always set as text, never as HTML. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'onclick') node.onclick = value;
    else node.setAttribute(name, String(value));
  }
  node.append(...children.map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
  return node;
}

const clip = (text) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);
/** A next try, as the page says it (a time already past: the try is under way). */
const nextTry = (at) => (at === null ? 'sent when the network is back' : at - Date.now() > 0 ? `next try in ${Math.ceil((at - Date.now()) / 1000)} s` : 'trying again now');
/** Number ranges `[[2, 3], [5, 5]]` as `#2–3, #5`. */
const ranges = (list) => list.map(([from, to]) => (from === to ? `#${from}` : `#${from}–${to}`)).join(', ');

/** One record's status (groupStatus) in words; `held` has its own controls. */
function describeGroup(status) {
  switch (status.state) {
    case 'delivered':
      return 'in sync';
    case 'sending':
      return 'sending';
    case 'retrying':
      return `not sent: ${status.lastError}; ${nextTry(status.nextTryAt)}`;
    case 'blocked':
      return 'waits for its note to reach the server';
    case 'paused':
      return 'paused';
    case 'dead':
      return 'the server refused a change of it';
    default:
      return 'waiting to send'; // pending, and any word a later leasehold adds
  }
}

/** The outbox's one word (syncState of the queue and this tab's consumer) in words. */
function describeSync(state, queue, consumer) {
  switch (state) {
    case null:
      return 'reading the outbox…';
    case 'offline':
      return `offline: changes are kept in this browser (${consumer.lastError}); ${nextTry(consumer.nextTryAt)}`;
    case 'retrying': {
      const { lastError, nextTryAt } = consumer?.state === 'retrying' ? consumer : queue;
      return `the server is busy (${lastError}); ${nextTry(nextTryAt)}`;
    }
    case 'held':
      return `held: the server refused ${queue.held.length === 1 ? 'a change' : `changes of ${queue.held.length} records`}; retry or discard below`;
    case 'delivered':
      return 'delivered: the server has every change';
    case 'dead':
      return 'the server refused some changes (see Dead letters)';
    case 'sending':
    case 'paused':
      return state;
    default:
      return 'waiting to send'; // pending, and any word a later leasehold adds
  }
}

/** Marks one user action done: counted, drawn, and (the first time) the browser asked to keep our storage. */
function acted() {
  savedHere += 1;
  $('[data-testid=saved-here]').textContent = String(savedHere);
  if (savedHere === 1) void outbox.db.persist().then(showPersisted);
}

function showPersisted(persisted) {
  $('[data-testid=persisted]').textContent = persisted === null ? 'unknown' : persisted ? 'yes' : 'not yet';
}

/** The reason a record is held, with Retry and Discard: `letter` is the dead letter holding it. */
function heldControls(letter, reason) {
  const what = letter.event.op === 'create' ? 'create' : 'edit';
  return el(
    'span',
    { 'data-testid': 'held', 'data-seq': letter.seq },
    `held: the server refused its ${what} (${reason ?? `failed ${letter.attempt} times`}) `,
    el('button', { 'data-testid': 'retry', onclick: () => void outbox.retry(letter.seq).then(watch.refresh) }, 'Retry'),
    ' ',
    el('button', { 'data-testid': 'discard', onclick: () => void discard(letter) }, 'Discard'),
  );
}

async function discard(letter) {
  const dropped = await outbox.discard(letter);
  updateRecords((records) => {
    records.notes = records.notes.filter((note) => !dropped.includes(note.id));
    for (const note of records.notes) note.tasks = note.tasks.filter((task) => !dropped.includes(task.id));
  });
  drawRows();
  watch.refresh();
}

/** One note's row: its text, Save, its pending state, its tasks and Add task. */
function buildRow(note) {
  const input = el('input', { 'aria-label': `${note.id} text`, 'data-testid': 'text' });
  input.value = note.text;
  const save = async () => {
    await outbox.editNote(note.id, input.value);
    updateRecords((records) => {
      const stored = records.notes.find((n) => n.id === note.id);
      if (stored) stored.text = input.value;
    });
    acted();
  };
  input.addEventListener('keydown', (event) => event.key === 'Enter' && void save());
  const taskText = el('input', { 'aria-label': `a task for ${note.id}`, 'data-testid': 'task-text', placeholder: 'a task' });
  const addTask = async () => {
    const mutation = await outbox.addTask(note.id, taskText.value);
    updateRecords((records) => records.notes.find((n) => n.id === note.id)?.tasks.push({ id: mutation.entity, text: mutation.text }));
    taskText.value = '';
    drawRows();
    acted();
  };
  return el(
    'li',
    { 'data-testid': 'note', 'data-entity': note.id },
    el('label', {}, note.id, ' ', input),
    ' ',
    el('button', { 'data-testid': 'save', onclick: () => void save() }, 'Save'),
    ' pending ',
    el('span', { 'data-testid': 'pending' }, '0'),
    ' · ',
    el('span', { 'data-testid': 'head' }, ''),
    el('ul', { class: 'tasks' }),
    el('span', {}, taskText, ' ', el('button', { 'data-testid': 'add-task', onclick: () => void addTask() }, 'Add task')),
  );
}

/** Adds rows for new notes and tasks, removes dropped ones (other tabs' changes included). */
function drawRows() {
  const { notes } = loadRecords();
  for (const [id, row] of rows) {
    if (notes.some((n) => n.id === id)) continue;
    row.remove();
    rows.delete(id);
  }
  for (const note of notes) {
    if (!rows.has(note.id)) {
      rows.set(note.id, buildRow(note));
      $('#notes').append(rows.get(note.id));
    }
    const list = $('.tasks', rows.get(note.id));
    const ids = note.tasks.map((task) => task.id).join(' ');
    if (list.dataset.ids !== ids) {
      list.dataset.ids = ids;
      list.replaceChildren(...note.tasks.map((task) => el('li', { 'data-testid': 'task', 'data-entity': task.id }, `${task.text} · `, el('span', { 'data-testid': 'task-state' }, ''))));
    }
  }
  draw();
}

/** Draws the latest read (the watch's) and this tab's consumer's status into the rows and the totals. */
function draw() {
  const state = watch.getSnapshot();
  if (!state?.stats || !state.snapshot) return;
  const { stats, snapshot } = state;
  const queue = queueStatus(snapshot);
  const dead = new Map(snapshot.deadLetters.map((d) => [d.seq, d]));
  /** One record's status into `into`: held (its reason, Retry and Discard), or in words. */
  const describe = (id, into) => {
    const status = groupStatus(snapshot, id);
    const letter = status.heldBy ? dead.get(status.heldBy.seq) : undefined;
    if (into.dataset.held !== String(letter?.seq ?? '')) {
      into.dataset.held = String(letter?.seq ?? '');
      into.replaceChildren(letter ? heldControls(letter, status.heldBy.reason) : '');
    }
    if (!letter) into.textContent = describeGroup(status);
    return status.queued;
  };
  for (const [id, row] of rows) {
    $('[data-testid=pending]', row).textContent = String(describe(id, $('[data-testid=head]', row)));
    for (const task of row.querySelectorAll('[data-testid=task]')) describe(task.dataset.entity, $('[data-testid=task-state]', task));
  }
  const word = syncState(queue, outbox.status);
  document.body.dataset.sync = word ?? '';
  $('[data-testid=sync]').textContent = describeSync(word, queue, outbox.status);
  $('[data-testid=pending-total]').textContent = String(stats.queued);
  $('[data-testid=held-total]').textContent = String(stats.held);
  $('[data-testid=dead-total]').textContent = String(stats.dead);
  $('[data-testid=retried]').textContent = String(outbox.retried);
  $('#sent').replaceChildren(...sent.slice(-12).reverse().map((s) => el('li', {}, `${s.entity}: ${s.op} “${clip(s.text)}”`, s.repeat ? ' (a repeat: answered from the server\'s receipt)' : '')));
  $('[data-testid=sent-total]').textContent = String(sent.length);
  $('#dead').replaceChildren(
    ...snapshot.deadLetters.map((d) =>
      el('li', { 'data-testid': 'dead-letter', 'data-seq': d.seq }, `${d.groupId}: ${d.event.op} “${clip(d.event.text)}”: ${d.reason ?? `failed ${d.attempt} times`}`),
    ),
  );
}

async function showOwner() {
  const owner = await outbox.db.owner();
  $('#owner').textContent = owner.isThisTab ? 'this tab owns the database file' : 'another tab owns the database file';
  document.body.dataset.owner = owner.isThisTab ? 'this-tab' : 'other-tab';
}

/**
 * Tells the server's receiver which database this browser lost (`reportLostOrigin`), and shows
 * what the server never received from it: those changes are gone. Sent again when the network
 * comes back, until the server has it.
 */
function reportLoss(origin) {
  const show = (text) => ($('[data-testid=lost-report]').textContent = text);
  if (origin === null) return show('');
  const send = () =>
    reportLostOrigin({ url: RECEIVER, origin }).then(
      (report) => {
        removeEventListener('online', send);
        const lost = report?.queues.flatMap((q) => q.lost) ?? [];
        if (report === null) show('The server never received a change from it.');
        else show(lost.length === 0 ? 'The server received every change it knew of.' : `The server never received changes ${ranges(lost)} of the lost database.`);
      },
      () => show('The server will be told when the network is back.'),
    );
  addEventListener('online', send);
  void send();
}

/** Asks the receiver what it has from this browser's database (its gaps report) and shows it. */
async function checkGaps() {
  const show = (text) => ($('[data-testid=gaps]').textContent = text);
  const response = await fetch(`${RECEIVER}?origin=${outbox.db.origin}`).catch(() => null);
  if (!response?.ok) return show(response?.status === 404 ? 'The server has received nothing from this browser yet.' : 'The server cannot be reached.');
  const { queues } = await response.json();
  show(queues.map((q) => `received ${q.received} (up to #${q.highest}); still to come: ${ranges(q.stillToCome) || 'none'}; removed here on purpose: ${ranges(q.removed) || 'none'}`).join(' · '));
}

async function main() {
  // ?outage-ms=200: a short, fixed wait after a try that got no answer (for trying it out, and
  // for the tests): no back-off.
  const outageMs = Number(new URLSearchParams(location.search).get('outage-ms'));
  outbox = await openOutbox({
    onSent: (mutation, answer) => {
      sent.push({ ...mutation, ...answer });
      draw();
    },
    ...(outageMs > 0 ? { retryMs: outageMs, maxRetryMs: outageMs } : {}),
  });
  // 'lost': this browser had the database and it is gone (cleared, or evicted for space):
  // whatever it held and had not sent is gone too. Say so; an empty outbox is not "all sent".
  const { opened } = outbox.db;
  $('[data-testid=opened]').textContent = opened;
  $('#lost').hidden = opened !== 'lost';
  if (opened === 'lost') reportLoss(outbox.db.lostOrigin);
  void outbox.db.storage().then((facts) => showPersisted(facts.persisted));

  // Reads stats() and inspect() after every change notice (from any tab), when a retry's wait
  // ends, and each second (a claim raises no notice): at most one read at a time.
  watch = watchQueue(outbox.queue, { inspect: true, pollMs: 1_000 });
  const first = new Promise((resolve) => watch.subscribe(() => (draw(), resolve())));
  $('#new-note').addEventListener('submit', (event) => {
    event.preventDefault();
    const input = $('[data-testid=new-note-text]');
    void outbox.createNote(input.value).then((mutation) => {
      updateRecords((records) => records.notes.push({ id: mutation.entity, text: mutation.text, tasks: [] }));
      document.body.dataset.lastCreated = mutation.entity;
      input.value = '';
      drawRows();
      acted();
    });
  });
  $('[data-testid=check-gaps]').addEventListener('click', () => void checkGaps());
  onRecordsChange(drawRows);
  drawRows();
  outbox.db.onOwnerChange(() => void showOwner());
  outbox.subscribe(draw);
  // Countdowns move with time, not with the queue.
  setInterval(draw, 1000);
  await Promise.all([first, showOwner()]);
  document.body.dataset.ready = 'true';
  $('#status').textContent = 'ready';
}

// The app shell (this page, its scripts and the wasm) from a service worker's cache, so a reload
// while offline still opens the page. The outbox itself needs no service worker.
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  navigator.serviceWorker.register('./sw.js').then(
    () => navigator.serviceWorker.ready.then(() => (document.body.dataset.offlineReady = 'true')),
    (error) => console.warn('no offline app shell:', error),
  );
}

main().catch((error) => {
  $('#status').textContent = `could not open the outbox: ${error.message}`;
  throw error;
});
