/**
 * Helpers for the offline-outbox example's test: get the example as a user of the package does
 * (copied out of the installed package, then installed), run its server as the user would
 * (`node server.mjs`), and drive its page.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright';
import { repoRoot } from '../../scripts/pack.mjs';
import { childEnv, createApp, npm } from './scratch.ts';

/** Where the example is inside the package. */
export const SHIPPED = 'examples/offline-outbox';

/**
 * The user's path, as docs/offline-first.md gives it: a project that installed leasehold copies
 * `node_modules/leasehold/examples/offline-outbox` out and runs `npm install` in the copy. Two
 * differences, both for this machine, not for the user: the packed tarball is installed over the
 * copy's `leasehold` range (`--no-save`: its package.json stays as shipped), since the version is
 * not on the registry yet; and better-sqlite3's install script (a prebuilt binary from the
 * network, or a compile) is skipped for a link to this repository's build.
 * Returns the copy's folder.
 */
export async function installExample(scratch: string, tarball: string): Promise<string> {
  const project = await createApp(scratch, 'outbox-project', tarball);
  const dir = join(scratch, 'offline-outbox');
  cpSync(join(project, 'node_modules/leasehold', SHIPPED), dir, { recursive: true });
  await npm(dir, ['install', '--no-save', '--prefer-offline', '--ignore-scripts', tarball]);
  rmSync(join(dir, 'node_modules/better-sqlite3'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules/better-sqlite3'), join(dir, 'node_modules/better-sqlite3'), 'dir');
  return dir;
}

/** The example's server, running as a child process. */
export interface ExampleServer {
  url: string;
  port: number;
  /** What the server stored, as `GET /api/mutations` reports it. */
  state(): Promise<ServerState>;
  /** Answers `count` more mutations (after the outage answers asked for before) with `status` (and `Retry-After: retryAfter`, if given). */
  outage(outage: { count: number; status?: 503 | 429; retryAfter?: number | string }): Promise<void>;
  /** The receiver's gaps report of `origin` (`GET /api/outbox?origin=`), or null when it never received from it. */
  gaps(origin: string): Promise<GapsReport | null>;
  stop(): Promise<void>;
}

/** The receiver's gaps report of one origin: ranges `[from, to]` of numbers never received. */
export interface GapsReport {
  origin: string;
  lost: boolean;
  queues: { queue: string; received: number; highest: number; lowWater: number; removed: [number, number][]; stillToCome: [number, number][]; lost: [number, number][] }[];
}

export interface StoredMutation {
  id: string;
  op: 'create' | 'update';
  entity: string;
  /** A task's note. */
  note?: string;
  text: string;
  at: number;
  /** The delivery's attempt, as the page sent it (the `Leasehold-Attempt` header). */
  attempt: number | null;
  /** The database it came from (the delivery's origin). */
  origin: string;
  receivedAt: number;
}

export interface ServerState {
  mutations: StoredMutation[];
  /** Deliveries answered from a receipt (`Leasehold-Repeat`), since the server started. */
  duplicates: number;
  /** Deliveries refused (4xx), since the server started. */
  rejected: number;
  /** Mutations answered 503 or 429 by an outage `POST /api/outage` asked for. */
  unavailable: number;
}

/** Starts `node server.mjs <args>` in `dir` and resolves once it prints its address. */
export async function startServer(dir: string, args: string[]): Promise<ExampleServer> {
  const child: ChildProcess = spawn(process.execPath, ['server.mjs', ...args], { cwd: dir, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`server.mjs exited (${code}) before listening:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
  return {
    url,
    port: Number(new URL(url).port),
    state: async () => (await (await fetch(`${url}/api/mutations`)).json()) as ServerState,
    outage: async (outage) => {
      const response = await fetch(`${url}/api/outage`, { method: 'POST', body: JSON.stringify(outage) });
      if (!response.ok) throw new Error(`POST /api/outage: ${response.status} ${await response.text()}`);
    },
    gaps: async (origin) => {
      const response = await fetch(`${url}/api/outbox?origin=${origin}`);
      if (response.status === 404) return null;
      if (!response.ok) throw new Error(`GET /api/outbox?origin=: ${response.status} ${await response.text()}`);
      return (await response.json()) as GapsReport;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Opens the page in a new tab and waits until the outbox is open and the app shell is cached. */
export async function openTab(context: BrowserContext, errors: string[], path = '/'): Promise<Page> {
  const page = await context.newPage();
  watch(page, errors);
  const log: string[] = [];
  page.on('console', (m) => log.push(m.text()));
  await page.goto(path);
  try {
    await page.waitForSelector('body[data-ready="true"][data-offline-ready="true"]', { timeout: 30_000 });
  } catch (error) {
    throw new Error(`${String(error)}\n${log.join('\n')}\n${await page.evaluate(() => JSON.stringify({ ...document.body.dataset, status: document.querySelector('#status')?.textContent }))}`);
  }
  return page;
}

/** Collects the page's uncaught errors (a test fails on any). */
export function watch(page: Page, errors: string[]): void {
  page.on('pageerror', (error) => errors.push(error.message));
}

/** Waits until the element with `data-testid=<id>` reads `text`. */
export async function waitForText(page: Page, id: string, text: string, timeout = 30_000): Promise<void> {
  await page.waitForFunction(([id, text]) => document.querySelector(`[data-testid="${id}"]`)?.textContent === text, [id, text] as const, { timeout, polling: 50 });
}

export async function readText(page: Page, id: string): Promise<string> {
  return (await page.getByTestId(id).first().textContent()) ?? '';
}

/** Waits until this tab counts one more saved action than `before`. */
async function savedOneMore(page: Page, before: number): Promise<void> {
  await waitForText(page, 'saved-here', String(before + 1));
}

/** One user action: a new note with `text`; resolves with its id once its create is in the database. */
export async function createNote(page: Page, text: string): Promise<string> {
  await page.bringToFront();
  const saved = Number(await readText(page, 'saved-here'));
  await page.getByTestId('new-note-text').fill(text);
  await page.getByTestId('new-note').click();
  await savedOneMore(page, saved);
  return (await page.evaluate(() => document.body.dataset.lastCreated))!;
}

/** One user action: types `text` into the note and saves it, then waits until it is in the database. */
export async function edit(page: Page, entity: string, text: string): Promise<void> {
  // The tab a user types in is the one in front (a background tab's clicks wait for frames it does not draw).
  await page.bringToFront();
  const saved = Number(await readText(page, 'saved-here'));
  const row = page.locator(`[data-testid="note"][data-entity="${entity}"]`);
  await row.getByTestId('text').fill(text);
  await row.getByTestId('save').click();
  await savedOneMore(page, saved);
}

/** One user action: a task under `note`; resolves with the task's id once it is in the database. */
export async function addTask(page: Page, note: string, text: string): Promise<string> {
  await page.bringToFront();
  const saved = Number(await readText(page, 'saved-here'));
  const row = page.locator(`[data-testid="note"][data-entity="${note}"]`);
  await row.getByTestId('task-text').fill(text);
  await row.getByTestId('add-task').click();
  await savedOneMore(page, saved);
  return (await row.getByTestId('task').last().getAttribute('data-entity'))!;
}

/** The row of a note (or of a task: `task` true). */
export function row(page: Page, entity: string, task = false): Locator {
  return page.locator(`[data-testid="${task ? 'task' : 'note'}"][data-entity="${entity}"]`);
}
