// The outbox: every user action becomes a mutation in a durable queue in this tab's OPFS database,
// and a consumer sends the mutations to the server, one entity at a time and in order.
import { consume } from 'leasehold';
import { openBrowserDatabase } from 'leasehold/browser';

/** A refusal by the server: retrying cannot help, so it counts towards the dead letters. */
export class Refused extends Error {
  name = 'Refused';
}

/** Resolves after `ms`, or early when the browser comes back online; rejects when `signal` aborts. */
function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      removeEventListener('online', done);
      signal.removeEventListener('abort', abort);
      resolve();
    };
    const abort = () => {
      done();
      reject(signal.reason);
    };
    const timer = setTimeout(done, ms);
    addEventListener('online', done);
    signal.addEventListener('abort', abort);
  });
}

/**
 * Sends one mutation. The server stores it once by id, so a repeat (after a crash, or an answer
 * lost on the way back) is harmless. A network failure or a 5xx is an outage, not a fault of the
 * mutation: it is retried here, with back-off, under the same lease (consume() renews it), so an
 * outage of any length uses no delivery attempts. A 4xx throws: consume() retries it with its own
 * back-off and the database's maxAttempts moves it to the dead letters in the end.
 */
async function push(mutation, lease, { signal }) {
  for (let retry = 0; ; retry++) {
    let response;
    try {
      response = await fetch('/api/mutations', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(mutation),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      await pause(Math.min(30_000, 250 * 2 ** retry), signal);
      continue;
    }
    if (response.ok) return response.status;
    if (response.status >= 500 || response.status === 408 || response.status === 429) {
      await pause(Math.min(30_000, 250 * 2 ** retry), signal);
      continue;
    }
    const { error } = await response.json().catch(() => ({ error: response.statusText }));
    throw new Refused(`${response.status}: ${error}`);
  }
}

/**
 * Opens the outbox in this tab. Every tab of the origin shares one queue (one tab owns the file,
 * the others forward to it), and each tab runs its own consumer while the browser is online.
 * `onSent(mutation, status)` hears of each mutation this tab delivered; `onChange()` of anything
 * that may change what the page shows.
 */
export async function openOutbox({ onSent = () => {}, onChange = () => {} } = {}) {
  // maxAttempts: a mutation the server refuses 5 times is a dead letter (outages do not count).
  const db = await openBrowserDatabase({ name: 'offline-outbox', maxAttempts: 5 });
  const queue = db.queue('mutations');
  let consumer = null;

  function start() {
    if (consumer || !navigator.onLine) return;
    consumer = consume(
      queue,
      async (mutation, lease, context) => {
        const status = await push(mutation, lease, context);
        onSent(mutation, status);
      },
      {
        concurrency: 5, // five entities at once; each entity's mutations still go one at a time
        visibilityMs: 10_000, // a crashed tab's deliveries go to another tab 10 s later
        backoff: { baseMs: 250, factor: 2, maxMs: 2_000 }, // for refusals: 0.25 s, 0.5 s, 1 s, 2 s, 2 s, then dead
        onError: (error, { phase }) => {
          if (!(error instanceof Refused)) console.warn(`outbox ${phase}:`, error);
          onChange();
        },
      },
    );
  }

  function stop() {
    const stopping = consumer?.stop({ graceMs: 0 }); // gives its leases back at once
    consumer = null;
    return stopping;
  }

  // Offline, nothing is claimed, so no delivery attempt is spent on a connection that is not
  // there and a tab closed offline holds nothing. `online` starts sending at once.
  addEventListener('online', start);
  addEventListener('offline', () => void stop());
  addEventListener('pagehide', () => void stop());
  queue.onChange(onChange);
  start();

  return {
    queue,
    db,
    get sending() {
      return consumer !== null;
    },
    /** Records one user action durably; resolves once it is in the database (it survives a crash from then on). */
    async save(entity, text) {
      const mutation = { id: crypto.randomUUID(), entity, text, at: Date.now() };
      // group = the entity: its mutations go one at a time, in order. key = the mutation's id:
      // publishing it again (a retried click) while it is queued adds nothing.
      await queue.publish(entity, mutation, { key: mutation.id });
      return mutation;
    },
    redrive: (seq) => queue.redrive(seq),
  };
}
