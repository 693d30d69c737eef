// The WAL write coalescing of the browser host (src/browser/coalesce.ts), on sqlite-wasm in Node:
// the same wrapper over the module's default VFS (files in Emscripten's memory file system), so
// what it changes is visible here: how many writes reach the file, that none is left pending
// after a COMMIT, and that every file SQLite wrote reopens whole. Crashes mid-commit on OPFS are
// e2e/crash-coalesce.chromium.spec.ts.
import type { Database, Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { coalesceWalWrites, type WalCoalescing } from '../src/browser/coalesce.js';
import { loadSqliteWasm } from '../src/sqlite/wasm.js';

let sqlite3: Sqlite3Static;
beforeAll(async () => {
  sqlite3 = await loadSqliteWasm();
});

let files = 0;
function open(path: string, journal = 'WAL'): Database {
  const db = new sqlite3.oo1.DB(path, 'c');
  // synchronous=NORMAL, as the host's default durability: no sync after a commit flushes for us.
  db.exec(`PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=${journal}; PRAGMA synchronous=NORMAL; CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB)`);
  return db;
}

function openCoalesced(): { path: string; db: Database; wal: WalCoalescing } {
  const path = `/coalesce-${++files}.db`;
  const db = open(path);
  // Node's in-memory file system refuses single writes of 128 KiB or more (OPFS does not).
  const wal = coalesceWalWrites(sqlite3, db, { maxWriteBytes: 64 * 1024 });
  if (!wal) throw new Error('no WAL file');
  return { path, db, wal };
}

const blob = (k: number, size: number) => new Uint8Array(size).fill(k % 251);

/** Reopens `path` without coalescing: what a new owner would find on the file. */
function reopened(path: string): { integrity: string; rows: { k: number; n: number }[] } {
  const db = open(path);
  try {
    return {
      integrity: String(db.selectValue('PRAGMA integrity_check')),
      rows: db.selectObjects('SELECT k, length(v) AS n FROM t ORDER BY k') as { k: number; n: number }[],
    };
  } finally {
    db.close();
  }
}

describe('WAL write coalescing', () => {
  it('writes a commit of many pages with one file call and leaves nothing pending after COMMIT', () => {
    const { path, db, wal } = openCoalesced();
    const before = { ...wal.stats };
    db.transaction(() => {
      for (let k = 0; k < 24; k++) db.exec({ sql: 'INSERT INTO t (k, v) VALUES (?, ?)', bind: [k, blob(k, 1200)] });
    });
    const sqliteWrites = wal.stats.sqliteWrites - before.sqliteWrites;
    expect(sqliteWrites).toBeGreaterThanOrEqual(6); // a header and a page per frame: 8 KB pages
    expect(wal.stats.fileWrites - before.fileWrites).toBe(1);
    expect(wal.pendingBytes()).toBe(0);
    // A one-row commit: two writes by SQLite, one to the file.
    const mid = { ...wal.stats };
    db.exec({ sql: 'UPDATE t SET v = ? WHERE k = 3', bind: [blob(9, 10)] });
    expect([wal.stats.sqliteWrites - mid.sqliteWrites, wal.stats.fileWrites - mid.fileWrites, wal.pendingBytes()]).toEqual([2, 1, 0]);
    db.close();
    wal.release();
    const after = reopened(path);
    expect(after.integrity).toBe('ok');
    expect(after.rows).toHaveLength(24);
    expect(after.rows[3]).toEqual({ k: 3, n: 10 });
  });

  it('keeps every commit across checkpoints, WAL restarts and reads of pages only the WAL holds', () => {
    const { path, db, wal } = openCoalesced();
    // A small cache makes SQLite read pages back from the WAL; the checkpoints restart it.
    db.exec('PRAGMA cache_size=4; PRAGMA wal_autocheckpoint=20');
    for (let k = 0; k < 300; k++) {
      db.exec({ sql: 'INSERT INTO t (k, v) VALUES (?, ?)', bind: [k, blob(k, 1500)] });
      if (k % 7 === 0) db.exec({ sql: 'DELETE FROM t WHERE k = ?', bind: [k - 3] });
      if (k % 50 === 0) db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      expect(wal.pendingBytes()).toBe(0);
    }
    const expected = db.selectObjects('SELECT k, length(v) AS n FROM t ORDER BY k');
    expect(db.selectValue('PRAGMA integrity_check')).toBe('ok');
    db.close();
    wal.release();
    expect(reopened(path)).toEqual({ integrity: 'ok', rows: expected });
  });

  it('survives a rolled-back transaction that spilled frames into the WAL', () => {
    const { path, db, wal } = openCoalesced();
    db.exec('PRAGMA cache_size=2');
    db.exec({ sql: 'INSERT INTO t (k, v) VALUES (1, ?)', bind: [blob(1, 100)] });
    expect(() =>
      db.transaction(() => {
        for (let k = 10; k < 200; k++) db.exec({ sql: 'INSERT INTO t (k, v) VALUES (?, ?)', bind: [k, blob(k, 4000)] });
        throw new Error('undo');
      }),
    ).toThrow('undo');
    db.exec({ sql: 'INSERT INTO t (k, v) VALUES (2, ?)', bind: [blob(2, 100)] });
    expect(wal.pendingBytes()).toBe(0);
    db.close();
    wal.release();
    expect(reopened(path)).toEqual({ integrity: 'ok', rows: [{ k: 1, n: 100 }, { k: 2, n: 100 }] });
  });

  it('writes a transaction larger than its buffer in pieces', () => {
    const { path, db, wal } = openCoalesced();
    db.transaction(() => {
      for (let k = 0; k < 1500; k++) db.exec({ sql: 'INSERT INTO t (k, v) VALUES (?, ?)', bind: [k, blob(k, 4000)] });
    });
    // Pieces of the 64 KiB limit: about eight frames each, against two writes a frame.
    expect(wal.stats.fileWrites).toBeGreaterThan(1);
    expect(wal.stats.fileWrites).toBeLessThan(wal.stats.sqliteWrites / 10);
    expect(wal.pendingBytes()).toBe(0);
    db.close();
    wal.release();
    const after = reopened(path);
    expect([after.integrity, after.rows.length]).toEqual(['ok', 1500]);
  });

  it('changes nothing for a database that is not in WAL mode', () => {
    const db = open(`/coalesce-${++files}.db`, 'DELETE');
    expect(coalesceWalWrites(sqlite3, db)).toBeNull();
    db.close();
  });
});
