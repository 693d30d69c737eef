/**
 * WebKitGTK driven over classic WebDriver (WebKitWebDriver, Debian's `webkit2gtk-driver`) under
 * Xvfb, with nothing but fetch: MiniBrowser has no headless mode, and neither Playwright's WebKit
 * nor a Vitest provider works with Debian's build. One session, one page; scripts run in it with
 * execute/async and return JSON strings (WebKitWebDriver mangles nested objects).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { findWebKit } from '../../scripts/browsers.mjs';
import { freePort } from '../../scripts/ports.mjs';

/** The features MiniBrowser needs switched on for navigator.storage and OPFS to exist at all. */
const FEATURES = 'StorageAPI,StorageAPIEstimate,FileSystem,AccessHandle,FileSystemWritableStream';

export interface WebKitSession {
  version: string;
  /** Loads `url` in the page. */
  goto(url: string): Promise<void>;
  /** Runs `body` (an async function's body, given `args`) in the page; its JSON-able result. */
  run<T>(body: string, ...args: unknown[]): Promise<T>;
  close(): Promise<void>;
}

/** Starts Xvfb on a display it picks itself (-displayfd); the display's name, e.g. ':3'. */
async function startXvfb(xvfbPath: string, children: ChildProcess[]): Promise<string> {
  const xvfb = spawn(xvfbPath, ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x800x24'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] });
  children.push(xvfb);
  const [chunk] = (await once(xvfb.stdio[3]!, 'data')) as [Buffer];
  return `:${chunk.toString().trim()}`;
}

/**
 * MiniBrowser as a user starts it, without `--automation` (so not under WebDriver): a normal
 * window whose website data — OPFS included — is kept on disk, here under `dataDir` (its
 * XDG_DATA_HOME and XDG_CACHE_HOME). It opens `url`; a page reports back by its own means (a
 * fetch to the server that sent it). Returns the function that ends it.
 */
export function openMiniBrowser(url: string, dataDir: string): Promise<() => void> {
  return onDisplay(async (webkit, display, children, stop) => {
    const env = { ...process.env, DISPLAY: display, XDG_DATA_HOME: `${dataDir}/data`, XDG_CACHE_HOME: `${dataDir}/cache` };
    children.push(spawn(webkit.browser, [`--features=${FEATURES}`, url], { env, stdio: 'ignore' }));
    return stop;
  });
}

type WebKitPaths = NonNullable<ReturnType<typeof findWebKit>>;

/**
 * Runs `start` with WebKitGTK's paths and an Xvfb display of its own. The processes in `children`
 * (Xvfb first) end when `stop` is called, or at once when `start` fails.
 */
async function onDisplay<T>(start: (webkit: WebKitPaths, display: string, children: ChildProcess[], stop: () => void) => Promise<T>): Promise<T> {
  const webkit = findWebKit();
  if (!webkit) throw new Error('WebKitGTK not found: run node scripts/ensure-browsers.mjs webkit (Debian packages webkit2gtk-driver, xvfb)');
  const children: ChildProcess[] = [];
  const stop = () => children.forEach((child) => child.kill('SIGTERM'));
  try {
    const display = await startXvfb(webkit.xvfb, children);
    return await start(webkit, display, children, stop);
  } catch (error) {
    stop();
    throw error;
  }
}

export function startWebKit(): Promise<WebKitSession> {
  return onDisplay(async (webkit, display, children, stop) => {
    const port = await freePort();
    // The driver itself needs DISPLAY, or session creation hangs.
    const driver = spawn(webkit.driver, [`--port=${port}`], { env: { ...process.env, DISPLAY: display }, stdio: 'ignore' });
    children.push(driver);
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const { value } = (await response.json()) as { value: unknown };
      if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(value)}`);
      return value;
    };
    for (let i = 0; ; i++) {
      try {
        await call('GET', '/status');
        break;
      } catch (error) {
        if (i > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const session = (await call('POST', '/session', {
      capabilities: { alwaysMatch: { browserName: 'MiniBrowser', 'webkitgtk:browserOptions': { binary: webkit.browser, args: ['--automation', `--features=${FEATURES}`] } } },
    })) as { sessionId: string; capabilities: { browserVersion: string } };
    const id = session.sessionId;
    return {
      version: session.capabilities.browserVersion,
      goto: async (url) => void (await call('POST', `/session/${id}/url`, { url })),
      run: async <T>(body: string, ...args: unknown[]) => {
        const script = `const done = arguments[arguments.length - 1]; (async (...args) => { ${body} })(...Array.prototype.slice.call(arguments, 0, -1)).then((value) => done(JSON.stringify({ value })), (error) => done(JSON.stringify({ error: String(error && error.stack || error) })));`;
        const raw = (await call('POST', `/session/${id}/execute/async`, { script, args })) as string;
        const result = JSON.parse(raw) as { value?: T; error?: string };
        if (result.error !== undefined) throw new Error(`in WebKit: ${result.error}`);
        return result.value as T;
      },
      close: async () => {
        await call('DELETE', `/session/${id}`).catch(() => undefined);
        stop();
      },
    };
  });
}
