/**
 * Storage faults in a real browser: a database file that is not a database, one a newer
 * leasehold wrote, and a pool held by a worker that never lets go. Each must be a clear
 * LeaseholdError, with nothing written and the page still usable afterwards.
 */
import { openBrowserDatabase } from 'leasehold/browser';
import { afterAll, describe, expect, it } from 'vitest';
import { LeaseholdError, SchemaTooNewError, StorageError } from '../../src/errors.js';
import { freshName, removeOpfsPool } from './harness.js';

const workers: Worker[] = [];
afterAll(() => workers.forEach((w) => w.terminate()));

function poolWorker(action: 'corrupt' | 'too-new' | 'hold', name: string): Promise<Worker> {
  const worker = new Worker(new URL('./fixtures/pool.worker.ts', import.meta.url), { type: 'module' });
  workers.push(worker);
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ ok: boolean; error?: string }>) => (event.data.ok ? resolve(worker) : reject(new Error(event.data.error)));
    worker.postMessage({ action, name });
  });
}

describe('storage faults', () => {
  it('a database file that is not a database: StorageError STORAGE_CORRUPT that says what to do', async () => {
    const name = freshName('corrupt');
    (await poolWorker('corrupt', name)).terminate();
    const error = await openBrowserDatabase({ name }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'STORAGE_CORRUPT' });
    expect((error as Error).message).toMatch(/not a valid SQLite database|damaged/);
    expect((error as Error).message).toMatch(/delete it|restore/i);
    // The page is still usable: another database opens and works.
    const fine = await openBrowserDatabase({ name: freshName('fine') });
    await fine.transport.publish('g', 1);
    expect((await fine.transport.claim('w', 1000))?.event).toBe(1);
    await fine.close();
    await removeOpfsPool(name);
  });

  it('a database a newer leasehold wrote: SchemaTooNewError SCHEMA_TOO_NEW, saying to upgrade, not to restore', async () => {
    const name = freshName('too-new');
    (await poolWorker('too-new', name)).terminate();
    const error = await openBrowserDatabase({ name }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).toMatchObject({ code: 'SCHEMA_TOO_NEW', component: 'core', found: 1000 });
    expect((error as Error).message).toMatch(/upgrade leasehold/i);
    expect((error as Error).message).not.toMatch(/restore|delete/i);
    await removeOpfsPool(name);
  });

  it('a pool held by a worker that never lets go: StorageError STORAGE_BUSY, not a hang', async () => {
    const name = freshName('held');
    const holder = await poolWorker('hold', name);
    // Not a hang: the open gives up after its bounded retries (a hang would fail on the test's
    // timeout). How long the retries take is not asserted: on a loaded machine it varies.
    const error = await openBrowserDatabase({ name }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseholdError);
    expect(error).toMatchObject({ code: 'STORAGE_BUSY' });
    expect((error as Error).message).toMatch(/held open by another page or worker/);
    // Once the holder is gone, the database opens.
    holder.terminate();
    const db = await openBrowserDatabase({ name });
    await db.transport.publish('g', 'after');
    await db.close();
    await removeOpfsPool(name);
  });

  it('refuses bad options before starting a worker or touching storage', async () => {
    const cases: [unknown, typeof TypeError | typeof RangeError][] = [
      [undefined, TypeError],
      [{ name: 42 }, TypeError],
      [{ name: '' }, RangeError],
      [{ name: '../escape' }, RangeError],
      [{ name: 'x'.repeat(65) }, RangeError],
      [{ name: 'ok', storage: 'disk' }, RangeError],
      [{ name: 'ok', durability: 'eventually' }, RangeError],
      [{ name: 'ok', clock: 5 }, TypeError],
      [{ name: 'ok', maxAttempts: 0 }, RangeError],
      [{ name: 'ok', traceMax: -1 }, RangeError],
      [{ name: 'ok', traceSql: 'yes' }, TypeError],
      [{ name: 'ok', build: 42 }, TypeError],
      [{ name: 'ok', build: '' }, RangeError],
      [{ name: 'ok', build: 'x'.repeat(201) }, RangeError],
    ];
    for (const [options, error] of cases) {
      await expect(openBrowserDatabase(options as never), JSON.stringify(options)).rejects.toThrow(error);
    }
  });
});
