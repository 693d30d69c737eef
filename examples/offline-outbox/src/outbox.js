// The outbox: every user action becomes a mutation in a durable queue in this browser's OPFS
// database, and a consumer sends the mutations to the server, one record at a time and in order.
import { consume, RejectError, RetryLaterError } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';
import { retryAfterMs } from './retry-after.js';

/** A short random id for a new record (`note-1a2b3c4d`): records are made offline, on any device. */
const newId = (kind) => `${kind}-${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;

/**
 * Opens the outbox in this tab. Every tab of the origin shares one queue (one tab owns the file,
 * the others forward to it), and each tab runs its own consumer while the browser is online.
 *
 * - `onSent(mutation, status)` hears of each mutation this tab delivered.
 * - `outage`: the wait after a network failure or a 5xx/429 that gave no `Retry-After`, doubling
 *   from `baseMs` up to `maxMs` while the outage lasts (default 1 s to 30 s).
 */
export async function openOutbox({ onSent = () => {}, outage = { baseMs: 1_000, maxMs: 30_000 } } = {}) {
  // onDeadLetter 'hold': a mutation the server refuses holds its record's later mutations (an
  // update must not reach a server that never got the create) until it is redriven or discarded.
  // maxAttempts counts failures only (a bug in the handler, say): outages and refusals spend none.
  const db = await openBrowserDatabase({ name: 'offline-outbox', maxAttempts: 5, onDeadLetter: 'hold' });
  const queue = db.queue('mutations');
  let consumer = null;
  /** Releases by earlier consumers of this tab (each `offline` ends one). */
  let retriedBefore = 0;
  /** Outage answers in a row: the back-off grows with them, and the next success resets it. */
  let outages = 0;

  const outageDelay = () => Math.min(outage.maxMs, outage.baseMs * 2 ** outages++);

  /**
   * Sends one mutation. The server applies it once by id, so a repeat (after a crash, or an answer
   * lost on the way back) is harmless. What the answer means for the message:
   * - 2xx: sent; the consumer acks it.
   * - no answer, 5xx, 408, 429: an outage, nothing wrong with the mutation. RetryLaterError gives
   *   it back without spending an attempt and the consumer claims nothing meanwhile, for
   *   `Retry-After` if the server said, else a growing back-off.
   * - any other 4xx: refused for good. RejectError makes it a dead letter at once, with the
   *   server's reason, and holds its record.
   */
  async function push(mutation, lease, { signal }) {
    let response;
    try {
      response = await fetch('/api/mutations', {
        method: 'POST',
        // The attempt travels along so the server can show that outages spent none; origin,
        // counter and low-water mark so it can tell a missing mutation from one still to come.
        headers: {
          'content-type': 'application/json',
          'leasehold-attempt': String(lease.attempt),
          'leasehold-origin': lease.origin,
          'leasehold-counter': String(lease.counter),
          'leasehold-low-water': String(lease.lowWater),
        },
        body: JSON.stringify(mutation),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new RetryLaterError({ afterMs: outageDelay() }, `the server cannot be reached (${error.message})`);
    }
    if (response.ok) {
      outages = 0;
      return response.status;
    }
    if (response.status >= 500 || response.status === 408 || response.status === 429) {
      const asked = retryAfterMs(response.headers.get('retry-after'));
      const afterMs = asked ?? outageDelay();
      if (asked !== null) outages = 0;
      throw new RetryLaterError({ afterMs }, `the server answered ${response.status}`);
    }
    const { error } = await response.json().catch(() => ({ error: response.statusText }));
    throw new RejectError(`${response.status}: ${error}`);
  }

  function start() {
    if (consumer || !navigator.onLine) return;
    consumer = consume(
      queue,
      async (mutation, lease, context) => {
        const status = await push(mutation, lease, context);
        onSent(mutation, status);
      },
      {
        concurrency: 5, // five records at once; each record's mutations still go one at a time
        visibilityMs: 10_000, // a crashed tab's deliveries go to another tab 10 s later
        backoff: { baseMs: 250, factor: 2, maxMs: 2_000 }, // after an unexpected error (not an outage, not a refusal)
        onError: (error, { phase }) => console.warn(`outbox ${phase}:`, error),
      },
    );
  }

  function stop() {
    const stopping = consumer?.stop({ graceMs: 0 }); // gives its leases back at once, no attempt spent
    retriedBefore += consumer?.retried ?? 0;
    consumer = null;
    return stopping;
  }

  /** The seqs of `note`'s create while it is queued or a dead letter: what a task under it waits for. */
  async function pendingCreate(note) {
    const { groups, deadLetters } = await queue.inspect();
    const messages = [...(groups.find((g) => g.groupId === note)?.messages ?? []), ...deadLetters.filter((d) => d.groupId === note)];
    return messages.filter((m) => m.event?.op === 'create').map((m) => m.seq);
  }

  // Offline, nothing is claimed, so no delivery is tried on a connection that is not there and a
  // tab closed offline holds nothing. `online` starts sending at once. (The browser may say it is
  // online when the server is not reachable: then push() sees it, and waits without cost.)
  addEventListener('online', start);
  addEventListener('offline', () => void stop());
  addEventListener('pagehide', () => void stop());
  start();

  /** Publishes one mutation; resolves once it is in the database (it survives a crash from then on). */
  async function record(mutation, options) {
    await queue.publish(mutation.entity, mutation, options);
    return mutation;
  }

  return {
    queue,
    db,
    get sending() {
      return consumer !== null;
    },
    /** Outage answers this tab waited out (each a release: no attempt spent). */
    get retried() {
      return retriedBefore + (consumer?.retried ?? 0);
    },
    /**
     * A new note. Its create is a message of its own (key: the mutation's id, so a retried click
     * adds nothing), never merged with the note's edits.
     */
    createNote(text) {
      const mutation = { id: crypto.randomUUID(), op: 'create', entity: newId('note'), text, at: Date.now() };
      return record(mutation, { key: mutation.id });
    },
    /**
     * An edit. key = the note: while an edit of it is queued (and not on its way to the server),
     * the new one is merged into it (JSON Merge Patch: every field replaced), so typing offline
     * leaves one pending edit per note, with the last text, in the first edit's place.
     */
    editNote(note, text) {
      const mutation = { id: crypto.randomUUID(), op: 'update', entity: note, text, at: Date.now() };
      return record(mutation, { key: note, onDuplicate: 'merge' });
    },
    /**
     * A new task under `note`: its own record (group), so it does not wait behind the note's
     * edits, but `after` its note's create while that is pending or refused: the server never
     * gets a task for a note it does not have.
     */
    async addTask(note, text) {
      const mutation = { id: crypto.randomUUID(), op: 'create', entity: newId('task'), note, text, at: Date.now() };
      const after = await pendingCreate(note);
      return record(mutation, after.length > 0 ? { key: mutation.id, after } : { key: mutation.id });
    },
    /** Retry: the dead letter goes back to the head of its record, and the record goes on from it. */
    retry: (seq) => queue.redrive(seq),
    /**
     * Discard a dead letter for good. A refused note create takes the note with it: its queued
     * edits and its tasks are cancelled first (they would only be refused: the server has no such
     * note). Resolves with the entities dropped.
     */
    async discard(letter) {
      const { op, entity, note } = letter.event;
      if (op !== 'create' || note !== undefined) {
        await queue.discard(letter.seq);
        return op === 'create' ? [entity] : [];
      }
      const { groups } = await queue.inspect();
      const dropped = new Set([entity]);
      for (const group of groups) {
        for (const message of group.messages) {
          if (group.groupId !== entity && message.event?.note !== entity) continue;
          dropped.add(group.groupId);
          // One being sent right now is refused by the server and becomes a dead letter itself.
          await queue.cancel(message.seq).catch((error) => {
            if (error?.code !== 'MESSAGE_LEASED') throw error;
          });
        }
      }
      await queue.discard(letter.seq);
      return [...dropped];
    },
  };
}
