/**
 * Lesson 11's server: the real `leasehold/receiver` over `sqliteReceipts`, on a SQLite database of
 * its own (sqlite-wasm in this page, in memory: the server's database, not the tab's queue), with
 * the app's table its apply writes; and the wire between the page's delivery workers and it, an
 * in-page `fetch` that hands each request to `receiver.handle`. While the lesson says so, the
 * wire loses the answer after the receiver has committed, as a dropped connection does.
 *
 * The page loads this module with import() when lesson 11 starts, so the other lessons never
 * load a second sqlite-wasm.
 */
import { createReceiver, type Receiver, sqliteReceipts } from 'leasehold/receiver';
import type { SqlDatabase, SqlStatement } from 'leasehold';
import { openWasmDatabase } from 'leasehold/sqlite-wasm';

/** How the server answered one request. */
export type Answered = 'applied' | 'repeat' | 'stale' | 'refused' | 'failed';

/** One request as the server saw it, and whether its answer reached the tab. */
export interface Received {
  at: number;
  /** The delivery id (`origin/queue/counter/revision`), as the Idempotency-Key carried it. */
  id: string;
  counter: number;
  revision: number;
  /** The note the event edits. */
  note: string;
  answered: Answered;
  status: number;
  body: string;
  /** The wire dropped the answer: the server committed, the tab never heard. */
  lost: boolean;
}

/** A row of `lh_receiver_receipts`, as the receiver wrote it. */
export interface ReceiptRow {
  /** The delivery id of the content it holds. */
  id: string;
  counter: number;
  revision: number;
  outcome: 'applied' | 'refused';
  status: number;
  body: string | null;
  at: number;
}

/** A row of the app's own table: what apply wrote, and how often apply ran for it. */
export interface NoteRow {
  id: string;
  text: string;
  applied: number;
}

/** What the server panel draws: plain data, so a past frame can be drawn too. */
export interface ServerState {
  received: Received[];
  receipts: ReceiptRow[];
  notes: NoteRow[];
}

/** The lesson's event: the note it edits and its text. */
interface NoteEdit {
  label: string;
  note: string;
}

const ANSWERS: Record<string, Answered> = { '1': 'repeat', stale: 'stale' };

export class LessonServer {
  /** Answers to requests that reach the server before this demo time are lost on the way back. */
  loseAnswersUntil = 0;
  readonly #received: Received[] = [];
  readonly #db: SqlDatabase;
  readonly #receiver: Receiver;
  readonly #clock: () => number;
  readonly #receipts: SqlStatement;
  readonly #notes: SqlStatement;

  constructor(db: SqlDatabase, clock: () => number) {
    this.#db = db;
    this.#clock = clock;
    db.exec('CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL, applied INTEGER NOT NULL)');
    const save = db.prepare('INSERT INTO notes (id, text, applied) VALUES (?, ?, 1) ON CONFLICT (id) DO UPDATE SET text = excluded.text, applied = applied + 1');
    this.#receiver = createReceiver<NoteEdit, SqlDatabase, true>({
      store: sqliteReceipts(db),
      clock,
      // On SQLite apply runs inside the receipt's transaction (`tx` is `db`): the note and the
      // receipt commit together, so a receipt never says "applied" of a write that was undone.
      apply: (edit) => {
        save.run(edit.note, edit.label);
        return { status: 201, body: { saved: edit.note, text: edit.label } };
      },
    });
    // Read after sqliteReceipts has created its table.
    this.#receipts = db.prepare('SELECT origin, queue, counter, revision, refused, status, body, at FROM lh_receiver_receipts ORDER BY origin, queue, counter');
    this.#notes = db.prepare('SELECT id, text, applied FROM notes ORDER BY id');
  }

  /** A `fetch` for `leasehold/http`: the request goes to the receiver; the answer comes back unless the wire loses it. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const edit = (await request.clone().json()) as NoteEdit;
    const response = await this.#receiver.handle(request);
    const at = this.#clock();
    const id = (request.headers.get('idempotency-key') ?? '').replace(/^"|"$/g, '');
    const [, , counter, revision] = id.split('/');
    const repeat = response.headers.get('leasehold-repeat');
    const answered: Answered = repeat !== null ? (ANSWERS[repeat] ?? 'repeat') : response.ok ? 'applied' : response.status === 500 || response.status === 503 ? 'failed' : 'refused';
    const lost = at < this.loseAnswersUntil;
    this.#received.push({ at, id, counter: Number(counter), revision: Number(revision), note: edit.note, answered, status: response.status, body: await response.clone().text(), lost });
    // What a browser's fetch does when the connection drops before the answer: a TypeError.
    if (lost) throw new TypeError('the connection dropped before the answer arrived');
    return response;
  };

  /** The requests, the receipts and the notes as they stand. */
  state(): ServerState {
    const receipts = this.#receipts
      .all<{ origin: string; queue: string; counter: number; revision: number; refused: number; status: number; body: string | null; at: number }>()
      .map((r) => ({
        id: `${r.origin}/${r.queue}/${r.counter}/${r.revision}`,
        counter: Number(r.counter),
        revision: Number(r.revision),
        outcome: Number(r.refused) === 1 ? ('refused' as const) : ('applied' as const),
        status: Number(r.status),
        body: r.body,
        at: Number(r.at),
      }));
    const notes = this.#notes.all<NoteRow>().map((n) => ({ id: n.id, text: n.text, applied: Number(n.applied) }));
    return { received: [...this.#received], receipts, notes };
  }

  close(): void {
    this.#db.close();
  }
}

/** A server on a fresh in-memory database, its receipts stamped by `clock` (demo time). */
export async function openLessonServer(clock: () => number): Promise<LessonServer> {
  return new LessonServer(await openWasmDatabase(), clock);
}
