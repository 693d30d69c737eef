// The page: five notes to edit, what is pending per note, what this tab sent, and the dead letters.
import { openOutbox } from './outbox.js';

const NOTES = ['note-1', 'note-2', 'note-3', 'note-4', 'note-5'];
const $ = (selector, root = document) => root.querySelector(selector);
const sent = [];
let savedHere = 0;

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

function describeHead(head, now) {
  if (!head) return 'in sync';
  const attempt = head.attempt > 0 ? `, attempt ${head.attempt}` : '';
  if (head.state === 'leased') return `sending${attempt}`;
  if (head.state === 'parked') return `retry in ${Math.max(0, Math.ceil((head.expiresAt - now) / 1000))} s${attempt}`;
  if (head.state === 'expired') return `a closed tab was sending it; retrying${attempt}`;
  return navigator.onLine ? `waiting to send${attempt}` : `offline: kept until the network returns${attempt}`;
}

let outbox;
let rendering = null;
let again = false;

/** Redraws from the queue. Calls that arrive during a redraw are folded into one more. */
async function render() {
  if (rendering) {
    again = true;
    return rendering;
  }
  rendering = (async () => {
    do {
      again = false;
      // stats() reads no event: cheap enough to poll. inspect() reads them all, so only when needed.
      const [stats, owner] = await Promise.all([outbox.queue.stats(), outbox.db.owner()]);
      const snapshot = stats.queued + stats.dead > 0 ? await outbox.queue.inspect() : { now: Date.now(), groups: [], deadLetters: [] };
      draw(stats, snapshot, owner);
    } while (again);
  })().finally(() => (rendering = null));
  return rendering;
}

function draw(stats, snapshot, owner) {
  const groups = new Map(snapshot.groups.map((g) => [g.groupId, g]));
  for (const entity of NOTES) {
    const row = $(`[data-entity="${entity}"]`);
    const messages = groups.get(entity)?.messages ?? [];
    $('[data-testid=pending]', row).textContent = String(messages.length);
    $('[data-testid=head]', row).textContent = describeHead(messages[0], snapshot.now);
  }
  $('[data-testid=pending-total]').textContent = String(stats.queued);
  $('[data-testid=dead-total]').textContent = String(stats.dead);
  $('#network').textContent = navigator.onLine ? (outbox.sending ? 'online: sending' : 'online') : 'offline: edits are kept in this browser';
  $('#owner').textContent = owner.isThisTab ? 'this tab owns the database file' : 'another tab owns the database file';
  document.body.dataset.owner = owner.isThisTab ? 'this-tab' : 'other-tab';
  $('#sent').replaceChildren(...sent.slice(-12).reverse().map((s) => el('li', {}, `${s.entity}: “${s.text}”`, s.status === 200 ? ' (the server had it already)' : '')));
  $('[data-testid=sent-total]').textContent = String(sent.length);
  $('#dead').replaceChildren(
    ...snapshot.deadLetters.map((d) =>
      el(
        'li',
        { 'data-testid': 'dead-letter', 'data-seq': d.seq },
        `${d.groupId}: “${d.event.text.length > 40 ? `${d.event.text.slice(0, 40)}…` : d.event.text}”, refused ${d.attempt} times `,
        el('button', { 'data-testid': 'redrive', onclick: () => void outbox.redrive(d.seq).then(render) }, 'Redrive'),
      ),
    ),
  );
}

function buildNotes() {
  $('#notes').replaceChildren(
    ...NOTES.map((entity) => {
      const input = el('input', { 'aria-label': `${entity} text`, 'data-testid': 'text' });
      const save = async () => {
        await outbox.save(entity, input.value);
        savedHere += 1;
        $('[data-testid=saved-here]').textContent = String(savedHere);
        await render();
      };
      input.addEventListener('keydown', (event) => event.key === 'Enter' && void save());
      return el(
        'li',
        { 'data-testid': 'note', 'data-entity': entity },
        el('label', {}, entity, ' ', input),
        el('button', { 'data-testid': 'save', onclick: () => void save() }, 'Save'),
        ' pending ',
        el('span', { 'data-testid': 'pending' }, '0'),
        ' · ',
        el('span', { 'data-testid': 'head' }, ''),
      );
    }),
  );
}

async function main() {
  outbox = await openOutbox({
    onSent: (mutation, status) => {
      sent.push({ ...mutation, status });
      void render();
    },
    onChange: () => void render(),
  });
  buildNotes();
  outbox.db.onOwnerChange(() => void render());
  addEventListener('online', () => void render());
  addEventListener('offline', () => void render());
  // Leases and retries run out without a change notice: redraw now and then.
  setInterval(() => void render(), 1000);
  await render();
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
