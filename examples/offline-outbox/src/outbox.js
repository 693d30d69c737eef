// The outbox: every user action becomes a mutation in a durable queue in this browser's OPFS
// database, and a consumer delivers them to the server's receiver, one record at a time and in order.
import { consume } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';
import { httpDelivery } from 'leasehold/http';

/** The server's receiver (server.mjs): deliveries, lost reports, and gaps at `?origin=`. */
export const RECEIVER = '/api/outbox';

/** The status while the browser says it is offline and no consumer runs (see start()). */
const BROWSER_OFFLINE = Object.freeze({ state: 'offline', nextTryAt: null, lastError: 'the browser is offline', lastDeliveredAt: null });

/** A short random id for a new record (`note-1a2b3c4d`): records are made offline, on any device. */
const newId = (kind) => `${kind}-${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;

/**
 * Opens the outbox in this tab. Every tab of the origin shares one queue (one tab owns the file,
 * the others forward to it), and each tab runs its own consumer while the browser is online.
 *
 * - `onSent(mutation, { status, repeat })` hears of each mutation this tab delivered (`repeat`:
 *   the server answered from its receipt, having applied it before).
 * - `retryMs`: the first wait after a try that got no answer, or a 503/429 without
 *   `Retry-After`; while that goes on the wait doubles, up to `maxRetryMs` (a minute).
 */
export async function openOutbox({ onSent = () => {}, retryMs = 3_000, maxRetryMs = 60_000 } = {}) {
  // onDeadLetter 'hold': a mutation the server refuses holds its record's later mutations (an
  // update must not reach a server that never got the create) until it is redriven or discarded.
  // maxAttempts counts failures only (a bug in the handler, say): outages and refusals spend none.
  const db = await openBrowserDatabase({ name: 'offline-outbox', maxAttempts: 5, onDeadLetter: 'hold' });
  const queue = db.queue('mutations');
  // The answer decides: 2xx acks; 400/409/410/413/422 is a dead letter with the server's reason;
  // no answer, 429 or 503 (after its Retry-After) and any other status are tried again later
  // without spending an attempt. Each delivery is named by its content (Idempotency-Key), so a
  // repeat after a crash or a lost answer is answered from the server's receipt.
  const deliver = httpDelivery({
    url: RECEIVER,
    retryMs,
    maxRetryMs,
    onDelivered: (response, mutation) => onSent(mutation, { status: response.status, repeat: response.headers.has('leasehold-repeat') }),
  });
  let consumer = null;
  /** Releases by earlier consumers of this tab (each `offline` ends one). */
  let retriedBefore = 0;
  const listeners = new Set();
  const changed = () => listeners.forEach((listener) => listener());

  function start() {
    if (consumer || !navigator.onLine) return;
    consumer = consume(queue, deliver, {
      concurrency: 5, // five records at once; each record's mutations still go one at a time
      visibilityMs: 10_000, // a crashed tab's deliveries go to another tab 10 s later
      backoff: { baseMs: 250, factor: 2, maxMs: 2_000 }, // after an unexpected error (not an outage, not a refusal)
      onError: (error, { phase }) => console.warn(`outbox ${phase}:`, error),
    });
    consumer.subscribe(changed);
    changed();
  }

  function stop() {
    const stopping = consumer?.stop({ graceMs: 0 }); // gives its leases back at once, no attempt spent
    retriedBefore += consumer?.retried ?? 0;
    consumer = null;
    changed();
    return stopping;
  }

  // While the browser says it is offline no consumer runs: a claim could only be given back, and
  // an edit made while a claim holds its note's pending edit would queue a second one instead of
  // merging. `online` starts sending at once. (The browser may say it is online when the server
  // is not reachable: then httpDelivery sees it, and the consumer waits without cost.) Leaving
  // the page gives back what this tab holds, so another tab sends it now rather than after
  // visibilityMs; a page restored from the back/forward cache starts again.
  addEventListener('online', start);
  addEventListener('offline', () => void stop());
  addEventListener('pagehide', () => void stop());
  addEventListener('pageshow', (event) => event.persisted && start());
  start();

  /** Publishes one mutation; resolves once it is in the database (it survives a crash from then on). */
  async function record(mutation, options) {
    await queue.publish(mutation.entity, mutation, options);
    return mutation;
  }

  return {
    queue,
    db,
    /**
     * This tab's consumer's status (`consumer.status`: offline, retrying, delivering, idle). While
     * the browser is offline, when none runs, `offline` with no next try; null after `pagehide`.
     */
    get status() {
      return consumer?.status ?? (navigator.onLine ? null : BROWSER_OFFLINE);
    },
    /** Calls `listener` when {@link status} changes. Returns the unsubscribe. */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Outage answers this tab waited out (each a release: no attempt spent). */
    get retried() {
      return retriedBefore + (consumer?.retried ?? 0);
    },
    /**
     * A new note. Its create is a message of its own (key: the mutation's id), never merged with
     * the note's edits.
     */
    createNote(text) {
      const mutation = { id: crypto.randomUUID(), op: 'create', entity: newId('note'), text, at: Date.now() };
      return record(mutation, { key: mutation.id });
    },
    /**
     * An edit. key = the note: while an edit of it is queued (and not on its way to the server),
     * the new one is merged into it (JSON Merge Patch: every field replaced), so typing offline
     * leaves one pending edit per note, with the last text, in the first edit's place. The merge
     * gives the delivery a new id, so the server applies the new text even if it had the old.
     */
    editNote(note, text) {
      const mutation = { id: crypto.randomUUID(), op: 'update', entity: note, text, at: Date.now() };
      return record(mutation, { key: note, onDuplicate: 'merge' });
    },
    /**
     * A new task under `note`: its own record (group), so later edits of the note do not hold it
     * up, but `after` what the note's record holds now (its create while pending or refused, and
     * its queued edits), resolved in the publish's transaction: the server never gets a task for
     * a note it does not have, and the page keeps no seqs.
     */
    addTask(note, text) {
      const mutation = { id: crypto.randomUUID(), op: 'create', entity: newId('task'), note, text, at: Date.now() };
      return record(mutation, { key: mutation.id, after: { group: note } });
    },
    /** Retry: the dead letter goes back to the head of its record, and the record goes on from it. */
    retry: (seq) => queue.redrive(seq),
    /**
     * Discard a dead letter for good. A refused create takes its record with it: the later
     * messages of its group (a note's edits) and, through `after`, the tasks created under it,
     * which would only be refused (the server has no such note). Resolves with the records dropped.
     */
    async discard(letter) {
      const create = letter.event.op === 'create';
      const { groups } = await queue.discard(letter.seq, { dependents: create });
      return create ? groups : [];
    },
  };
}
