/**
 * The run's servers as a test file reaches them: each starts on first use (see
 * servers-global.ts), so files that never ask never wait for one.
 *
 * `LEASEHOLD_FAST=1` (`npm run test:fast`) leaves the server backends out of the shared backend
 * lists: the memory and SQLite suites run, nothing starts. `npm test` runs them all.
 */
import { inject } from 'vitest';

/**
 * true under `npm run test:fast`: the shared lists hold only the memory and SQLite backends
 * (no workerd, no PostgreSQL server, no PGlite, whose WASM start-up alone costs seconds per file).
 */
export const fastOnly = process.env.LEASEHOLD_FAST === '1';

/** `entries`, or none under `npm run test:fast`: for the server (and PGlite) rows of a backend list. */
export function unlessFast<T>(entries: T[]): T[] {
  return fastOnly ? [] : entries;
}

type Name = 'pg' | 'workerd';
const asked = new Map<Name, Promise<string>>();
const known = new Map<Name, string>();

async function ask(name: string): Promise<string> {
  const response = await fetch(`${inject('serversUrl')}/${name}`);
  const text = await response.text();
  if (!response.ok) throw new Error(`the test run could not start ${name}:\n${text}`);
  return text;
}

function server(name: Name): Promise<string> {
  if (!asked.has(name)) asked.set(name, ask(name).then((url) => (known.set(name, url), url)));
  return asked.get(name)!;
}

/**
 * The URL of a server this file has already waited for, for code that must have it at once
 * (a pool's constructor, a socket's).
 * @throws Error naming the call that is missing.
 */
export function startedUrl(name: Name): string {
  const url = known.get(name);
  if (url === undefined) throw new Error(`this test file uses the run's ${name} before starting it: put \`await ${name === 'pg' ? 'pgUrl' : 'workerdUrl'}()\` at its top`);
  return url;
}

/** The run's PostgreSQL server: `postgres://…`, started on the first call of the run. */
export function pgUrl(): Promise<string> {
  return server('pg');
}

/** The run's workerd with the test Worker: `http://127.0.0.1:<port>`, started on the first call of the run. */
export function workerdUrl(): Promise<string> {
  return server('workerd');
}
