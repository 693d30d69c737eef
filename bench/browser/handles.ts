/**
 * The floor under every OPFS figure: what one FileSystemSyncAccessHandle call costs in this
 * context. In a private (incognito) window Chromium keeps OPFS in the browser process's memory
 * and every call is a synchronous round trip to it; with a profile on disk a call is a file
 * operation. A WAL commit of one page is two writes (frame header + page).
 */
export interface HandleRequest {
  calls: number;
  runs: number;
}

export interface HandleResult {
  label: string;
  /** Microseconds per call, one figure per timed run. */
  micros: number[];
}

interface SyncHandle {
  write(data: Uint8Array, options: { at: number }): number;
  flush(): void;
  getSize(): number;
  truncate(size: number): void;
  close(): void;
}

const FILE = 'leasehold-bench-handles.bin';

self.onmessage = async (event: MessageEvent<HandleRequest>) => {
  try {
    postMessage({ results: await measure(event.data) });
  } catch (error) {
    postMessage({ error: String(error) });
  }
};

async function measure({ calls, runs }: HandleRequest): Promise<HandleResult[]> {
  const root = await navigator.storage.getDirectory();
  const file = await root.getFileHandle(FILE, { create: true });
  const handle = await (file as unknown as { createSyncAccessHandle(): Promise<SyncHandle> }).createSyncAccessHandle();
  const header = new Uint8Array(24);
  const page = new Uint8Array(8192).fill(7);
  const micros = new Map<string, number[]>();
  const time = (label: string, body: (i: number) => void) => {
    const start = performance.now();
    for (let i = 0; i < calls; i++) body(i);
    const perCall = ((performance.now() - start) * 1000) / calls;
    micros.set(label, [...(micros.get(label) ?? []), perCall]);
    return perCall;
  };
  try {
    // The first round warms up and is dropped.
    for (let run = 0; run <= runs; run++) {
      handle.truncate(0);
      time('write 24 B (a WAL frame header)', (i) => handle.write(header, { at: i * 8216 }));
      time('write 8 KB (a page)', (i) => handle.write(page, { at: i * 8216 + 24 }));
      time('getSize', () => handle.getSize());
      // flush after a fresh 8 KB write each time, less the write: what a sync to disk adds.
      const withFlush = time('write 8 KB + flush', (i) => {
        handle.write(page, { at: i * 8192 });
        handle.flush();
      });
      const write = time('write 8 KB again', (i) => handle.write(page, { at: i * 8192 }));
      micros.set('flush (after an 8 KB write)', [...(micros.get('flush (after an 8 KB write)') ?? []), Math.max(0, withFlush - write)]);
      if (run === 0) micros.clear();
    }
  } finally {
    handle.close();
    await root.removeEntry(FILE).catch(() => undefined);
  }
  const shown = ['write 24 B (a WAL frame header)', 'write 8 KB (a page)', 'flush (after an 8 KB write)', 'getSize'];
  return shown.map((label) => ({ label, micros: micros.get(label)! }));
}
