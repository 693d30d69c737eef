/**
 * WebKit for what it can run on Linux (WebKitGTK, `npm run test:webkit`): the browser
 * primitives leasehold's tabs rely on — Web Locks election and release, BroadcastChannel, the
 * link broker in a SharedWorker pairing two hosts with a MessagePort, module workers — and an
 * in-memory database through the real host worker. OPFS is gated by a capability probe: WebKitGTK
 * has no synchronous access handles (its worker file handle is Apple-only), so the test asserts
 * that the probe names the missing call and that openBrowserDatabase says the same; where the
 * probe finds nothing missing, the database must open on OPFS and work instead. Under WebDriver
 * the storage is ephemeral and getDirectory() already fails; a window started as a user starts it
 * keeps OPFS on disk and gets as far as the sync access handle, which is what Linux WebKit lacks.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type Plugin, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/ports.mjs';
import { openMiniBrowser, startWebKit, type WebKitSession } from './webdriver.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: ViteDevServer;
let webkit: WebKitSession;
let origin: string;
/** What pages opened without WebDriver post to /__webkit/report/<name>, by name. */
const reports: Record<string, (body: string) => void> = {};

/** Pages for a MiniBrowser without WebDriver, and the route they report to. */
const pages: Record<string, string> = {
  'normal-window.html': `<script type="module">
    const { openBrowserDatabase } = await import('/@fs${root}src/browser/index.ts');
    const outcome = await openBrowserDatabase({ name: 'wk-normal' }).then(
      async (db) => { await db.close(); return { opened: true }; },
      (e) => ({ opened: false, name: e.name, code: e.code, message: e.message }),
    );
    await fetch('/__webkit/report/normalWindow', { method: 'POST', body: JSON.stringify(outcome) });
  </script>`,
};

const reportRoute: Plugin = {
  name: 'webkit-report',
  configureServer(vite) {
    vite.middlewares.use('/__webkit/', (request, response) => {
      const name = request.url!.replace(/^\//, '');
      if (request.method === 'POST' && name.startsWith('report/')) {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => (response.end(), reports[name.slice('report/'.length)]?.(body)));
        return;
      }
      response.setHeader('content-type', 'text/html');
      response.end(pages[name] ?? '');
    });
  },
};

beforeAll(async () => {
  const port = await freePort();
  server = await createServer({
    configFile: `${root}vite.config.ts`,
    logLevel: 'warn',
    plugins: [reportRoute],
    server: { host: '127.0.0.1', port, strictPort: true, fs: { allow: [root, realpathSync(`${root}node_modules`)] } },
  });
  await server.listen();
  origin = `http://127.0.0.1:${port}`;
  webkit = await startWebKit();
  await webkit.goto(`${origin}/lab.html`);
  // The lab page puts the public API on window.leasehold once its module ran (first load transforms it).
  await webkit.run(`for (let i = 0; i < 600 && !window.leasehold; i++) await new Promise((r) => setTimeout(r, 50)); if (!window.leasehold) throw new Error('lab page did not load');`);
}, 120_000);

afterAll(async () => {
  await webkit?.close();
  await server?.close();
});

describe(`WebKitGTK`, () => {
  it('is a secure context with Web Locks, BroadcastChannel, SharedWorker and module workers', async () => {
    const found = await webkit.run<Record<string, unknown>>(`
      const worker = new Worker(URL.createObjectURL(new Blob(['self.onmessage = (e) => postMessage(e.data * 2)'], { type: 'text/javascript' })), { type: 'module' });
      const doubled = await new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); worker.postMessage(21); });
      worker.terminate();
      return { secure: isSecureContext, locks: typeof navigator.locks?.request, channel: typeof BroadcastChannel, shared: typeof SharedWorker, doubled };
    `);
    expect(found).toEqual({ secure: true, locks: 'function', channel: 'function', shared: 'function', doubled: 42 });
  });

  it('Web Locks elect one holder; the next waiter is granted the lock when the holder lets go', async () => {
    const order = await webkit.run<string[]>(`
      const name = 'wk-election-' + Math.random();
      const order = [];
      let release;
      const first = navigator.locks.request(name, () => { order.push('first granted'); return new Promise((r) => (release = r)); });
      await new Promise((r) => setTimeout(r, 20));
      const second = navigator.locks.request(name, () => void order.push('second granted'));
      const none = await navigator.locks.request(name, { ifAvailable: true }, (lock) => lock);
      order.push(none === null ? 'taken while held: no' : 'taken while held: yes');
      await new Promise((r) => setTimeout(r, 50));
      order.push('release');
      release();
      await first; await second;
      return order;
    `);
    expect(order).toEqual(['first granted', 'taken while held: no', 'release', 'second granted']);
  });

  it('BroadcastChannel: a message reaches the other channels of the name, not the sender', async () => {
    const heard = await webkit.run<string[]>(`
      const name = 'wk-channel-' + Math.random();
      const [a, b, c] = [new BroadcastChannel(name), new BroadcastChannel(name), new BroadcastChannel(name)];
      const heard = [];
      a.onmessage = () => heard.push('a');
      const got = (ch, id) => new Promise((r) => (ch.onmessage = (e) => (heard.push(id + ':' + e.data.kind), r())));
      const both = Promise.all([got(b, 'b'), got(c, 'c')]);
      a.postMessage({ kind: 'owner' });
      await both;
      await new Promise((r) => setTimeout(r, 50));
      [a, b, c].forEach((ch) => ch.close());
      return heard.sort();
    `);
    expect(heard).toEqual(['b:owner', 'c:owner']);
  });

  it("the link broker (leasehold's SharedWorker) holds its Web Lock and pairs two hosts with a MessagePort that carries calls both ways", async () => {
    const url = `/@fs${root}src/browser/broker.worker.ts`;
    const result = await webkit.run<{ alive: boolean; held: boolean; sides: string[]; echoed: unknown }>(
      `
      const [url] = args;
      const name = 'wk-broker-' + Math.random();
      const owner = new SharedWorker(url, { type: 'module', name }).port;
      const caller = new SharedWorker(url, { type: 'module', name }).port;
      const next = (port, kind) => new Promise((resolve) => port.addEventListener('message', function on(e) { if (e.data.kind === kind) { port.removeEventListener('message', on); resolve(e.data); } }));
      owner.start(); caller.start();
      const alive = await next(owner, 'alive');
      const held = (await navigator.locks.query()).held.some((l) => l.name === alive.lock);
      const links = Promise.all([next(owner, 'link'), next(caller, 'link')]);
      owner.postMessage({ kind: 'serve', hostId: 'A' });
      caller.postMessage({ kind: 'connect', from: 'B', to: 'A' });
      const [ownerSide, callerSide] = await links;
      ownerSide.port.onmessage = (e) => ownerSide.port.postMessage({ kind: 'answer', id: e.data.call.id, ok: true, value: e.data.call.args[0] * 2 });
      const echoed = await new Promise((resolve) => { callerSide.port.onmessage = (e) => resolve(e.data); callerSide.port.postMessage({ kind: 'call', from: 'B', call: { id: 'c1', args: [21] } }); });
      return { alive: typeof alive.lock === 'string', held, sides: [ownerSide.side + ':' + ownerSide.peer, callerSide.side + ':' + callerSide.peer], echoed };
    `,
      url,
    );
    expect(result).toEqual({ alive: true, held: true, sides: ['owner:B', 'caller:A'], echoed: { kind: 'answer', id: 'c1', ok: true, value: 42 } });
  });

  it("storage: 'memory' works through the real host worker: publish, claim, ack, a named queue, the store", async () => {
    const result = await webkit.run<Record<string, unknown>>(`
      const db = await window.leasehold.openBrowserDatabase({ name: 'wk-memory', storage: 'memory' });
      await db.transport.publish('g', { n: 1 });
      await db.transport.publish('g', { n: 2 });
      const first = await db.transport.claim('w', 10000);
      const blocked = await db.transport.claim('w', 10000);
      await db.transport.ack(first);
      const second = await db.transport.claim('w', 10000);
      await db.transport.ack(second);
      const mail = db.queue('mail');
      await mail.publish('m', 'hi');
      const mailLease = await mail.claim('w', 10000);
      await db.store.save({ id: 'exe', version: 0, step: 'a' });
      const loaded = await db.store.load('exe');
      const owner = await db.owner();
      await db.close();
      return { first: first.event, blocked, second: second.event, mail: mailLease.event, loaded, via: owner.via };
    `);
    expect(result).toEqual({ first: { n: 1 }, blocked: null, second: { n: 2 }, mail: 'hi', loaded: { id: 'exe', version: 1, step: 'a' }, via: 'self' });
  });

  it('OPFS, gated by a capability probe: what is missing is named, by the probe and by openBrowserDatabase', async () => {
    const { probe, opened } = await webkit.run<{ probe: { call: string; error: string } | null; opened: { ok: boolean; name?: string; code?: string; message?: string } }>(`
      const source = \`
        const fail = (call, e) => postMessage({ call, error: String(e && e.name || e) });
        (async () => {
          let root;
          try { root = await navigator.storage.getDirectory(); } catch (e) { return fail('navigator.storage.getDirectory', e); }
          let file;
          try { file = await root.getFileHandle('wk-probe', { create: true }); } catch (e) { return fail('getFileHandle', e); }
          try { (await file.createSyncAccessHandle()).close(); } catch (e) { return fail('createSyncAccessHandle', e); }
          postMessage(null);
        })();\`;
      const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })), { type: 'module' });
      const probe = await new Promise((resolve) => (worker.onmessage = (e) => resolve(e.data)));
      worker.terminate();
      const opened = await window.leasehold.openBrowserDatabase({ name: 'wk-opfs' }).then(
        async (db) => { await db.transport.publish('g', 1); const lease = await db.transport.claim('w', 1000); await db.close(); return { ok: lease.event === 1 }; },
        (e) => ({ ok: false, name: e.name, code: e.code, message: e.message }),
      );
      return { probe, opened };
    `);
    console.log(`WebKitGTK ${webkit.version} OPFS probe: ${probe ? `${probe.call}() fails with ${probe.error}` : 'everything present'}; openBrowserDatabase: ${opened.message ?? 'opened'}`);
    if (probe === null) {
      expect(opened).toEqual({ ok: true });
      return;
    }
    expect(opened).toMatchObject({ ok: false, name: 'StorageError', code: 'STORAGE_UNAVAILABLE' });
    expect(opened.message).toContain(probe.call.replace('navigator.storage.', ''));
    expect(opened.message).toMatch(/storage: 'memory'/);
    expect(opened.message).not.toMatch(/not a secure context/);
  });

  it('in a normal window (storage on disk), OPFS opens but sync access handles are refused: openBrowserDatabase names them', async () => {
    // No WebDriver here: a page of the dev server opens the database and posts what happened
    // back to the server (the `reports` route below), which hands it to this test.
    const reported = new Promise<string>((resolve) => (reports.normalWindow = resolve));
    const dataDir = mkdtempSync(join(tmpdir(), 'leasehold-webkit-'));
    const stop = await openMiniBrowser(`${origin}/__webkit/normal-window.html`, dataDir);
    try {
      const outcome = JSON.parse(await reported) as { opened: boolean; name?: string; code?: string; message?: string };
      console.log(`WebKitGTK ${webkit.version}, a normal window: ${outcome.message ?? 'opened'}`);
      expect(outcome).toMatchObject({ opened: false, name: 'StorageError', code: 'STORAGE_UNAVAILABLE' });
      expect(outcome.message).toMatch(/createSyncAccessHandle/);
      expect(outcome.message).toMatch(/storage: 'memory'/);
      expect(outcome.message).not.toMatch(/getDirectory|not a secure context|private/);
    } finally {
      stop();
      // WebKit's network process may still be writing its cache for a moment after the browser
      // is gone (an ENOTEMPTY here once): rmSync retries that, and EBUSY, before giving up.
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });
});
