/**
 * Both Node SQLite drivers as the schema tests use them: new files, databases in memory, and a
 * fixture's bytes placed where the driver opens them (MEMFS for sqlite-wasm, a scratch directory
 * for better-sqlite3).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { loadSqliteWasm, openWasmDatabase } from '../../src/sqlite/wasm.js';

export interface SqliteFileDriver {
  /** A new database file (a MEMFS path for sqlite-wasm, a temp file for better-sqlite3), named. */
  path(): string;
  open(path?: string): Promise<SqlDatabase>;
  /** A database in memory, private to its connection. */
  memory(): Promise<SqlDatabase>;
  /** Puts `bytes` at a new path this driver opens. */
  place(bytes: Uint8Array): Promise<string>;
}

/** The two drivers by name; better-sqlite3's files go under `dir`. */
export function sqliteFileDrivers(dir: string): [string, SqliteFileDriver][] {
  let files = 0;
  // MEMFS is one per wasm module, which may outlive a test file: names of their own.
  const memfs = `/lh-${Math.random().toString(36).slice(2)}`;
  return [
    [
      'sqlite-wasm',
      {
        path: () => `${memfs}-schema-${++files}.db`,
        open: (path) => openWasmDatabase(path ? { filename: path } : {}),
        memory: () => openWasmDatabase(),
        async place(bytes) {
          const path = `${memfs}-placed-${++files}.db`;
          // sqlite-wasm in Node has no shared memory for a WAL index, so a file in WAL mode is
          // placed in rollback-journal mode: header bytes 18 and 19 as PRAGMA journal_mode =
          // DELETE writes them (the file has no -wal beside it, so nothing else changes).
          const placed = bytes.slice();
          if (placed[18] === 2 && placed[19] === 2) placed[18] = placed[19] = 1;
          (await loadSqliteWasm()).capi.sqlite3_js_posix_create_file(path, placed);
          return path;
        },
      },
    ],
    [
      'better-sqlite3',
      {
        path: () => join(dir, `schema-${++files}.db`),
        open: (path) => openBetterSqliteDatabase(path ?? join(dir, `schema-${++files}.db`)),
        memory: () => openBetterSqliteDatabase(':memory:'),
        async place(bytes) {
          const path = join(dir, `placed-${++files}.db`);
          writeFileSync(path, bytes);
          return path;
        },
      },
    ],
  ];
}
