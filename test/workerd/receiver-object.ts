/**
 * A Worker for test/durable-object-receiver.test.ts: a Durable Object whose storage keeps a
 * receiver's receipts (`sqliteReceipts(fromDurableObjectStorage(ctx.storage))`) beside the app's
 * notes, written by a synchronous apply in the receipt's transaction. `/<object>/outbox` is the
 * receiver's URL; `/<object>/rows` answers what the object holds; `/<object>/prune` prunes.
 */
import { DurableObject } from 'cloudflare:workers';
import { fromDurableObjectStorage } from '../../src/durable-object/driver.js';
import type { DurableObjectStateLike } from '../../src/durable-object/types.js';
import { createReceiver, Refusal, sqliteReceipts, type Receiver } from '../../src/receiver/index.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';

interface Note {
  note: string;
  text: string;
  refuse?: string;
}

export class ReceiverObject extends DurableObject {
  readonly #db: SqlDatabase;
  readonly #receiver: Receiver;

  constructor(ctx: DurableObjectStateLike, env: unknown) {
    super(ctx, env);
    this.#db = fromDurableObjectStorage(ctx.storage);
    this.#db.exec('CREATE TABLE IF NOT EXISTS app_notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)');
    const save = this.#db.prepare('INSERT INTO app_notes (id, text) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET text = excluded.text');
    this.#receiver = createReceiver<Note, SqlDatabase, true>({
      store: sqliteReceipts(this.#db),
      apply: (event) => {
        save.run(event.note, event.text);
        if (event.refuse) throw new Refusal(event.refuse);
        return { status: 201, body: { saved: event.note, text: event.text } };
      },
      onError: () => {},
    });
  }

  async fetch(request: Request): Promise<Response> {
    const action = new URL(request.url).pathname.split('/')[2];
    if (action === 'outbox') return this.#receiver.handle(request);
    if (action === 'prune') return Response.json(await this.#receiver.prune());
    if (action === 'rows') {
      const sql = this.ctx.storage.sql;
      return Response.json({
        receipts: sql.exec('SELECT counter, revision, refused, status, body, low_water FROM lh_receiver_receipts ORDER BY origin, queue, counter').toArray(),
        notes: sql.exec('SELECT id, text FROM app_notes ORDER BY id').toArray(),
        versions: sql.exec("SELECT component, version FROM lh_schema_versions WHERE component = 'receiver'").toArray(),
      });
    }
    return new Response('no such action', { status: 404 });
  }
}

interface Env {
  QUEUE: { idFromName(name: string): unknown; get(id: unknown): { fetch(request: Request): Promise<Response> } };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const name = new URL(request.url).pathname.split('/')[1];
    if (!name || name === 'ready') return new Response('ready');
    return env.QUEUE.get(env.QUEUE.idFromName(name)).fetch(request);
  },
};
