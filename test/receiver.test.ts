/**
 * leasehold/receiver on every receipt store (better-sqlite3, sqlite-wasm, the PostgreSQL server,
 * PGlite): each delivered content applied once in the app's transaction, repeats answered from
 * the receipt, stale content never applied, a refusal undone and applied again once redriven,
 * gaps sorted as docs/offline-first.md defines them, answers pruned without breaking dedupe,
 * identical deliveries at once applied once, and every malformed request answered 4xx with
 * nothing written.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { LeaseholdError, SchemaTooNewError, StorageError } from '../src/errors.js';
import { createReceiver, Refusal, sqliteReceipts, type ReceiptStore, type Receiver } from '../src/receiver/index.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { receiptBackends, type ReceiptHarness } from './support/receiver-stores.js';

interface Note {
  note: string;
  text: string;
  /** Refuse it (after writing the note: the write must be undone). */
  refuse?: string;
  refuseStatus?: 400 | 409 | 410 | 422;
  /** Throw a plain error (after writing). */
  fail?: boolean;
}

const newOrigin = () => randomUUID().replaceAll('-', '');
const URL_ = 'http://receiver.test/outbox';

interface Send {
  origin: string;
  queue?: string;
  counter: number;
  revision?: number;
  lowWater?: number;
  attempt?: number;
  event?: unknown;
}

/** A delivery request as leasehold/http sends it. */
function delivery({ origin, queue = 'default', counter, revision = 0, lowWater = 1, attempt = 1, event }: Send): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': `"${origin}/${encodeURIComponent(queue)}/${counter}/${revision}"`,
      'leasehold-low-water': String(lowWater),
      'leasehold-attempt': String(attempt),
    },
    body: JSON.stringify(event ?? { note: `n${counter}`, text: `text ${counter}.${revision}` }),
  });
}

async function answer(response: Response): Promise<{ status: number; body: unknown; repeat: string | null }> {
  return { status: response.status, body: (await response.json()) as unknown, repeat: response.headers.get('leasehold-repeat') };
}

for (const backend of receiptBackends()) {
  describe(`leasehold/receiver on ${backend.name}`, () => {
    let h: ReceiptHarness;
    let receiver: Receiver;
    let applied: { note: string; text: string; counter: number; revision: number }[];
    let clock: ManualClock;
    let errors: unknown[];

    const makeReceiver = (options: { maxBodyBytes?: number } = {}) =>
      createReceiver<Note, unknown, boolean>({
        store: h.store,
        clock: clock.now,
        onError: (error) => void errors.push(error),
        ...options,
        apply: ((event: Note, { delivery: d, tx }: { delivery: { counter: number; revision: number }; tx: unknown }) => {
          const written = h.write(tx, event.note, event.text);
          const finish = () => {
            if (event.refuse) throw new Refusal(event.refuse, event.refuseStatus ? { status: event.refuseStatus } : {});
            if (event.fail) throw new Error('the app failed');
            applied.push({ note: event.note, text: event.text, counter: d.counter, revision: d.revision });
            return { status: 201, body: { saved: event.note, text: event.text } };
          };
          return written instanceof Promise ? written.then(finish) : finish();
        }) as never,
      });

    beforeEach(async () => {
      h = await backend.make();
      applied = [];
      errors = [];
      clock = new ManualClock(1_000_000);
      receiver = makeReceiver();
    });
    afterEach(async () => {
      await h.dispose();
    });

    /** Everything the store and the app hold, to show a request changed nothing. */
    const everything = async () => ({ receipts: await h.receipts(), notes: await h.notes(), lost: await h.lost() });

    it('applies a new delivery once and answers its repeat with the stored answer, without running apply', async () => {
      const origin = newOrigin();
      const first = await answer(await receiver.handle(delivery({ origin, counter: 1 })));
      expect(first).toEqual({ status: 201, body: { saved: 'n1', text: 'text 1.0' }, repeat: null });
      const again = await answer(await receiver.handle(delivery({ origin, counter: 1, attempt: 2 })));
      expect(again).toEqual({ status: 201, body: { saved: 'n1', text: 'text 1.0' }, repeat: '1' });
      expect(applied).toHaveLength(1);
      expect(await h.notes()).toEqual({ n1: 'text 1.0' });
      expect(await h.receipts()).toEqual([{ origin, queue: 'default', counter: 1, revision: 0, refused: false, status: 201, body: '{"saved":"n1","text":"text 1.0"}', lowWater: 1 }]);
    });

    it('applies a higher revision (a merged edit) and answers a lower one as stale, never applying it', async () => {
      const origin = newOrigin();
      await receiver.handle(delivery({ origin, counter: 4, revision: 0 }));
      const merged = await answer(await receiver.handle(delivery({ origin, counter: 4, revision: 2 })));
      expect(merged).toMatchObject({ status: 201, body: { text: 'text 4.2' }, repeat: null });
      // The late request of a lost lease, carrying revision 1: older than what was applied.
      const stale = await answer(await receiver.handle(delivery({ origin, counter: 4, revision: 1 })));
      expect(stale).toEqual({ status: 201, body: { saved: 'n4', text: 'text 4.2' }, repeat: 'stale' });
      expect(applied.map((a) => a.revision)).toEqual([0, 2]);
      expect(await h.notes()).toEqual({ n4: 'text 4.2' });
      expect((await h.receipts()).map((r) => [r.counter, r.revision])).toEqual([[4, 2]]);
    });

    it('undoes a refused apply, records the number as received, and applies it again when redriven', async () => {
      const origin = newOrigin();
      const refused = await answer(await receiver.handle(delivery({ origin, counter: 1, event: { note: 'n1', text: 'x'.repeat(10), refuse: 'text too long' } })));
      expect(refused).toEqual({ status: 422, body: { error: 'text too long' }, repeat: null });
      expect(await h.notes()).toEqual({}); // the note written before the refusal is undone
      expect(await h.receipts()).toMatchObject([{ counter: 1, refused: true, status: 422 }]);
      expect((await receiver.gaps(origin)).queues[0]).toMatchObject({ received: 1, removed: [], stillToCome: [] });
      // The user fixed it on the device and redrove the dead letter: same number, same revision.
      const fixed = await answer(await receiver.handle(delivery({ origin, counter: 1, attempt: 1, event: { note: 'n1', text: 'short' } })));
      expect(fixed).toEqual({ status: 201, body: { saved: 'n1', text: 'short' }, repeat: null });
      expect(await h.notes()).toEqual({ n1: 'short' });
      expect(await h.receipts()).toMatchObject([{ counter: 1, refused: false, status: 201 }]);
    });

    it('answers a refusal with its own status, and refuses a Refusal that is not a refusal status', async () => {
      const origin = newOrigin();
      const conflict = await answer(await receiver.handle(delivery({ origin, counter: 1, event: { note: 'n1', text: 't', refuse: 'no such note', refuseStatus: 409 } })));
      expect(conflict).toEqual({ status: 409, body: { error: 'no such note' }, repeat: null });
      expect(() => new Refusal('down', { status: 503 as never })).toThrow(RangeError);
      expect(() => new Refusal('')).toThrow(TypeError);
    });

    it('rolls back an apply that throws: 500, nothing recorded, told to onError; the retry applies', async () => {
      const origin = newOrigin();
      const failed = await receiver.handle(delivery({ origin, counter: 1, event: { note: 'n1', text: 't', fail: true } }));
      expect(failed.status).toBe(500);
      expect(await failed.json()).toEqual({ error: 'the receiver failed; nothing was recorded' });
      expect(await everything()).toEqual({ receipts: [], notes: {}, lost: [] });
      expect(errors).toEqual([expect.objectContaining({ message: 'the app failed' })]);
      await expect(receiver.receive({ idempotencyKey: `"${origin}/default/1/0"`, lowWater: 1, event: { note: 'n1', text: 't', fail: true } })).rejects.toThrow('the app failed');
      expect((await receiver.handle(delivery({ origin, counter: 1 }))).status).toBe(201);
      expect(await h.notes()).toEqual({ n1: 'text 1.0' });
    });

    it.skipIf(!backend.synchronous)('refuses an async apply on a synchronous store, recording nothing', async () => {
      const asyncReceiver = createReceiver({ store: h.store, apply: (async () => {}) as never });
      const origin = newOrigin();
      await expect(asyncReceiver.receive({ idempotencyKey: `"${origin}/default/1/0"`, lowWater: 1, body: '{}' })).rejects.toThrow(/apply returned a promise.*synchronous transaction/);
      expect(await everything()).toEqual({ receipts: [], notes: {}, lost: [] });
    });

    it('answers every malformed request with its 4xx and writes nothing', async () => {
      const origin = newOrigin();
      await receiver.handle(delivery({ origin, counter: 1 })); // an origin it knows, for the lost and gaps cases
      const before = await everything();
      const small = makeReceiver({ maxBodyBytes: 64 });
      const key = (value: string) => ({ 'idempotency-key': value, 'leasehold-low-water': '1' });
      const post = (headers: Record<string, string>, body = '{"note":"x","text":"y"}') => new Request(URL_, { method: 'POST', headers, body });
      const cases: [string, Request, number, Receiver?][] = [
        ['no Idempotency-Key', post({ 'leasehold-low-water': '1' }), 400],
        ['a key that is not an sf-string', post(key(`${origin}/default/2/0`)), 400],
        ['a key with a raw quote inside', post(key(`"${origin}/de"fault/2/0"`)), 400],
        ['a key of 3 parts', post(key(`"${origin}/default/2"`)), 400],
        ['a key of 5 parts', post(key(`"${origin}/default/2/0/1"`)), 400],
        ['an upper-case origin', post(key(`"${origin.toUpperCase()}/default/2/0"`)), 400],
        ['an origin of 31 digits', post(key(`"${origin.slice(1)}/default/2/0"`)), 400],
        ['an empty queue', post(key(`"${origin}//2/0"`)), 400],
        ['a queue of bad percent-encoding', post(key(`"${origin}/%zz/2/0"`)), 400],
        ['a queue encoded otherwise than encodeURIComponent', post(key(`"${origin}/%64efault/2/0"`)), 400],
        ['counter 0', post(key(`"${origin}/default/0/0"`)), 400],
        ['a counter with a leading zero', post(key(`"${origin}/default/02/0"`)), 400],
        ['a counter that is not an integer', post(key(`"${origin}/default/2.5/0"`)), 400],
        ['a counter beyond safe integers', post(key(`"${origin}/default/9007199254740993/0"`)), 400],
        ['a negative revision', post(key(`"${origin}/default/2/-1"`)), 400],
        ['a revision with a leading zero', post(key(`"${origin}/default/2/01"`)), 400],
        ['no Low-Water', post({ 'idempotency-key': `"${origin}/default/2/0"` }), 400],
        ['a Low-Water that is not an integer', post({ 'idempotency-key': `"${origin}/default/2/0"`, 'leasehold-low-water': 'one' }), 400],
        ['Low-Water 0', post({ 'idempotency-key': `"${origin}/default/2/0"`, 'leasehold-low-water': '0' }), 400],
        ['a Low-Water above the counter', post({ 'idempotency-key': `"${origin}/default/2/0"`, 'leasehold-low-water': '3' }), 400],
        ['attempt 0', post({ ...key(`"${origin}/default/2/0"`), 'leasehold-attempt': '0' }), 400],
        ['a body that is not JSON', post(key(`"${origin}/default/2/0"`), '{"note":'), 400],
        ['a body that is not UTF-8', new Request(URL_, { method: 'POST', headers: key(`"${origin}/default/2/0"`), body: new Uint8Array([0x7b, 0xff, 0x7d]) }), 400],
        ['a body over the limit', post(key(`"${origin}/default/2/0"`), JSON.stringify({ note: 'x', text: 'y'.repeat(100) })), 413, small],
        ['a declared length over the limit', post({ ...key(`"${origin}/default/2/0"`), 'content-length': '1000000' }, '{}'), 413, small],
        ['PUT', new Request(URL_, { method: 'PUT', headers: key(`"${origin}/default/2/0"`), body: '{}' }), 405],
        ['a gaps report without an origin', new Request(URL_), 400],
        ['a gaps report of a malformed origin', new Request(`${URL_}?origin=${origin.slice(2)}`), 400],
        ['a gaps report of an unknown origin', new Request(`${URL_}?origin=${newOrigin()}`), 404],
        ['a lost report of an unknown origin', new Request(URL_, { method: 'POST', headers: { 'leasehold-lost': newOrigin() } }), 404],
        ['a lost report of a malformed origin', new Request(URL_, { method: 'POST', headers: { 'leasehold-lost': 'lost' } }), 400],
      ];
      for (const [name, request, status, which] of cases) {
        const response = await (which ?? receiver).handle(request);
        expect({ name, status: response.status }).toEqual({ name, status });
        const body = (await response.json()) as { error?: unknown };
        expect({ name, error: typeof body.error }).toEqual({ name, error: 'string' });
      }
      expect(await everything()).toEqual(before);
      expect(applied).toHaveLength(1);
      expect(errors).toEqual([]);
      // The plain function answers the same and throws only for a call that is wrong in code.
      expect(await receiver.receive({ idempotencyKey: `"${origin}/default/2/0"`, lowWater: 5, body: '{}' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/above the delivery's counter/) } });
      expect(await small.receive({ idempotencyKey: `"${origin}/default/2/0"`, lowWater: 1, body: 'x'.repeat(65) })).toMatchObject({ status: 413 });
      await expect(receiver.receive({ idempotencyKey: `"${origin}/default/2/0"`, lowWater: 1 })).rejects.toThrow(/exactly one of body/);
      await expect(receiver.gaps('nope')).rejects.toThrow(RangeError);
      await expect(receiver.gaps(newOrigin())).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(receiver.reportLost(newOrigin())).rejects.toBeInstanceOf(LeaseholdError);
      expect(await everything()).toEqual(before);
    });

    it('sorts the numbers never received: below the mark removed, from it still to come, lost once reported', async () => {
      const origin = newOrigin();
      for (const [counter, lowWater] of [[1, 1], [3, 1], [6, 3], [9, 5]] as const) await receiver.handle(delivery({ origin, queue: 'notes', counter, lowWater }));
      await receiver.handle(delivery({ origin, queue: 'tasks/ä', counter: 2, lowWater: 2 }));
      const other = newOrigin();
      await receiver.handle(delivery({ origin: other, counter: 3, lowWater: 1 }));
      const report = await receiver.gaps(origin);
      expect(report).toEqual({
        origin,
        lost: false,
        queues: [
          { queue: 'notes', received: 4, highest: 9, lowWater: 5, removed: [[2, 2], [4, 4]], stillToCome: [[5, 5], [7, 8]], lost: [] },
          { queue: 'tasks/ä', received: 1, highest: 2, lowWater: 2, removed: [[1, 1]], stillToCome: [], lost: [] },
        ],
      });
      expect(await (await receiver.handle(new Request(`${URL_}?origin=${origin}`))).json()).toEqual(report);
      // A repeat carrying a higher mark raises it: 5–8 left the device meanwhile.
      await receiver.handle(delivery({ origin, queue: 'notes', counter: 9, lowWater: 9 }));
      expect((await receiver.gaps(origin)).queues[0]).toMatchObject({ lowWater: 9, removed: [[2, 2], [4, 5], [7, 8]], stillToCome: [] });
      await receiver.handle(delivery({ origin, queue: 'notes', counter: 12, lowWater: 10 }));
      const lost = await answer(await receiver.handle(new Request(URL_, { method: 'POST', headers: { 'leasehold-lost': origin } })));
      expect(lost.status).toBe(200);
      expect(lost.body).toEqual({
        origin,
        lost: true,
        queues: [
          { queue: 'notes', received: 5, highest: 12, lowWater: 10, removed: [[2, 2], [4, 5], [7, 8]], stillToCome: [], lost: [[10, 11]] },
          { queue: 'tasks/ä', received: 1, highest: 2, lowWater: 2, removed: [[1, 1]], stillToCome: [], lost: [] },
        ],
      });
      expect(await receiver.reportLost(origin)).toEqual(lost.body); // idempotent
      expect(await h.lost()).toEqual([origin]);
      expect((await receiver.gaps(other)).lost).toBe(false);
    });

    it('prunes answers below the mark, keeping dedupe exact, and applies a redriven number below it', async () => {
      const origin = newOrigin();
      await receiver.handle(delivery({ origin, counter: 1, lowWater: 1, event: { note: 'n1', text: 't', refuse: 'bad' } }));
      await receiver.handle(delivery({ origin, counter: 2, lowWater: 1 }));
      clock.advance(1000);
      await receiver.handle(delivery({ origin, counter: 3, lowWater: 2 }));
      await receiver.handle(delivery({ origin, counter: 4, lowWater: 4 }));
      // Only 2 and 3 are applied answers below the mark (4); `before` leaves 3 (written later).
      expect(await receiver.prune({ before: 1_000_500 })).toBe(1);
      expect(await receiver.prune()).toBe(1);
      expect(await receiver.prune()).toBe(0);
      expect((await h.receipts()).map((r) => [r.counter, r.body === null])).toEqual([[1, false], [2, true], [3, true], [4, false]]);
      const repeat = await answer(await receiver.handle(delivery({ origin, counter: 2, lowWater: 1 })));
      expect(repeat).toEqual({ status: 200, body: { duplicate: true }, repeat: '1' });
      expect(await answer(await receiver.handle(delivery({ origin, counter: 4, lowWater: 4 })))).toMatchObject({ status: 201, repeat: '1' });
      // Number 1 was a dead letter, now redriven under its old number, below the mark: applied.
      const redriven = await answer(await receiver.handle(delivery({ origin, counter: 1, lowWater: 1, event: { note: 'n1', text: 'fixed' } })));
      expect(redriven).toEqual({ status: 201, body: { saved: 'n1', text: 'fixed' }, repeat: null });
      expect(applied.map((a) => a.counter)).toEqual([2, 3, 4, 1]);
      await expect(receiver.prune({ before: Number.NaN })).rejects.toThrow(RangeError);
      await expect(receiver.prune({ befor: 1 } as never)).rejects.toThrow(/did you mean "before"/);
    });

    it('applies identical deliveries arriving at once exactly once; every one gets the first answer', async () => {
      const origin = newOrigin();
      const answers = await Promise.all(Array.from({ length: 8 }, () => receiver.handle(delivery({ origin, counter: 7, lowWater: 3 })).then(answer)));
      expect(applied).toHaveLength(1);
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      expect(answers.map((a) => a.body)).toEqual(Array(8).fill({ saved: 'n7', text: 'text 7.0' }));
      expect(answers.filter((a) => a.repeat === null)).toHaveLength(1);
      expect(answers.filter((a) => a.repeat === '1')).toHaveLength(7);
      // Different numbers at once do not wait for each other's receipts, and all land.
      await Promise.all(Array.from({ length: 8 }, (_, i) => receiver.handle(delivery({ origin, counter: 10 + i, lowWater: 3 }))));
      expect((await receiver.gaps(origin)).queues[0]).toMatchObject({ received: 9, highest: 17 });
    });

    it('takes a delivery as a plain function, from raw text or an event its router parsed', async () => {
      const origin = newOrigin();
      const fromText = await receiver.receive({ idempotencyKey: `"${origin}/default/1/0"`, lowWater: '1', attempt: '1', body: '{"note":"a","text":"b"}' });
      expect(fromText).toEqual({ status: 201, body: { saved: 'a', text: 'b' }, repeat: false });
      const repeat = await receiver.receive({ idempotencyKey: `"${origin}/default/1/0"`, lowWater: 1, event: { note: 'a', text: 'changed?' } });
      expect(repeat).toEqual({ status: 201, body: { saved: 'a', text: 'b' }, repeat: 'same' });
      expect(await h.notes()).toEqual({ a: 'b' });
    });
  });
}

describe('createReceiver and the SQLite tables', () => {
  it('refuses bad options before anything happens, naming a misspelt one', async () => {
    const db = await openWasmDatabase();
    const store = sqliteReceipts(db);
    expect(() => createReceiver({ store, apply: () => {}, maxBodyByte: 10 } as never)).toThrow(/did you mean "maxBodyBytes"/);
    expect(() => createReceiver({ store, apply: 'no' } as never)).toThrow(TypeError);
    expect(() => createReceiver({ store: {}, apply: () => {} } as never)).toThrow(TypeError);
    expect(() => createReceiver({ store, apply: () => {}, maxBodyBytes: 0 })).toThrow(RangeError);
    db.close();
  });

  it('reads the body of a Request without a body stream (Firefox), and still refuses one over the limit', async () => {
    const db = await openWasmDatabase();
    const receiver = createReceiver<Note, unknown, true>({ store: sqliteReceipts(db), maxBodyBytes: 64, apply: (event) => ({ status: 201, body: { saved: event.note } }) });
    // What Firefox hands a service worker or a page: `body` is not implemented on Request.
    const streamless = (request: Request): Request => Object.defineProperty(request, 'body', { value: undefined });
    const origin = newOrigin();
    expect(await answer(await receiver.handle(streamless(delivery({ origin, counter: 1, event: { note: 'n1', text: 'a' } }))))).toEqual({ status: 201, body: { saved: 'n1' }, repeat: null });
    const large = streamless(delivery({ origin, counter: 2, event: { note: 'n2', text: 'y'.repeat(100) } }));
    expect((await receiver.handle(large)).status).toBe(413);
    db.close();
  });

  it('creates its tables once, as the receiver component, and refuses tables a newer leasehold wrote', async () => {
    const db = await openWasmDatabase();
    sqliteReceipts(db);
    sqliteReceipts(db); // current: nothing to do
    expect(db.schemaVersion('receiver')).toBe(1);
    db.transaction(() => db.setSchemaVersion('receiver', 2));
    expect(() => sqliteReceipts(db)).toThrow(SchemaTooNewError);
    db.close();
  });

  it('answers 503 (try later) when the store fails, 500 for a closed one, and tells onError', async () => {
    const onError = vi.fn();
    const down: ReceiptStore<unknown, false> = {
      synchronous: false,
      label: 'a store that is down',
      deliver: () => Promise.reject(new StorageError('STORAGE_UNAVAILABLE', 'cannot reach the database')),
      counts: () => Promise.reject(new StorageError('STORAGE_UNAVAILABLE', 'cannot reach the database')),
      markLost: () => Promise.resolve(false),
      prune: () => Promise.resolve(0),
    };
    const unavailable = await createReceiver({ store: down, apply: () => {}, onError }).handle(delivery({ origin: newOrigin(), counter: 1 }));
    expect([unavailable.status, unavailable.headers.get('retry-after')]).toEqual([503, '5']);
    const db = await openWasmDatabase();
    const receiver = createReceiver({ store: sqliteReceipts(db), apply: () => {}, onError });
    db.close();
    expect((await receiver.handle(delivery({ origin: newOrigin(), counter: 1 }))).status).toBe(500);
    expect(onError).toHaveBeenCalledTimes(2);
  });
});
