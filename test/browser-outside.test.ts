// leasehold/browser opened where there is no browser (here: Node, as in a test runner's Node
// environment or a server render): a StorageError that says so and where to go, never
// `ReferenceError: Worker is not defined`, and nothing started.
import { openBrowserDatabase } from 'leasehold/browser';
import { describe, expect, it } from 'vitest';
import { StorageError } from '../src/errors.js';

describe('leasehold/browser outside a browser', () => {
  it('says it needs a browser, names the runtime and the backends to use instead', async () => {
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe('undefined');
    const error = await openBrowserDatabase({ name: 'app' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    const { message } = error as Error;
    expect(message).toMatch(/leasehold\/browser runs in a browser/);
    expect(message).toMatch(/Node has no Worker/);
    expect(message).toMatch(/leasehold\/better-sqlite3/);
    expect(message).not.toMatch(/is not defined/);
  });

  it('still checks its options first: bad input is a TypeError or RangeError, as in a browser', async () => {
    await expect(openBrowserDatabase({ name: '../x' })).rejects.toThrow(RangeError);
    await expect(openBrowserDatabase(undefined as never)).rejects.toThrow(TypeError);
  });
});
