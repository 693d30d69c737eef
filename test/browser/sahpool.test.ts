import { describe, expect, it } from 'vitest';

describe('sqlite-wasm in Chromium', () => {
  it('a worker writes and reads a WAL database on opfs-sahpool', async () => {
    const worker = new Worker(new URL('./fixtures/sahpool.worker.ts', import.meta.url), { type: 'module' });
    const answer = await new Promise<{ read?: string; journal?: string; files?: string[]; error?: string }>((resolve) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.postMessage({ value: 'héllo <b>OPFS</b>' });
    });
    worker.terminate();
    expect(answer.error).toBeUndefined();
    expect(answer.read).toBe('héllo <b>OPFS</b>');
    expect(answer.journal).toBe('wal');
    expect(answer.files).toContain('/smoke.db');
  });
});
