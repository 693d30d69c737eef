/** The store + transport pairs the workflow suite runs on in Node. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import { runtimeBackendPairs, sqlitePair, type MakeRuntimeBackends } from './runtime-backends.js';

const dir = mkdtempSync(join(tmpdir(), 'leasehold-workflow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/**
 * Every pair the runtime suite runs on (memory, sqlite-wasm; and, outside `test:fast`, the
 * Durable Object in workerd by each route, a PostgreSQL server, PGlite), plus better-sqlite3
 * on a file. The browser host runs the suite in test/browser/workflow.test.ts.
 */
export const workflowBackendPairs: { name: string; make: MakeRuntimeBackends }[] = [
  ...runtimeBackendPairs,
  {
    name: 'SqliteStore + SqliteTransport on better-sqlite3 (a file)',
    make: async (options) => sqlitePair(await openBetterSqliteDatabase(join(dir, `workflow-${++files}.db`)), options),
  },
];
