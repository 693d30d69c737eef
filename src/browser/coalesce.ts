/**
 * Fewer file calls per commit: the writes of one WAL commit, gathered and written in one call.
 *
 * SQLite writes every WAL frame as two calls (a 24-byte frame header, then the page), and the
 * frames of a commit are contiguous in the file. On OPFS a call costs the same whatever its size
 * (~0.5 ms in a private window, where every call is a round trip to the browser process; ~10–40 µs
 * on disk), so a commit of 30 pages costs 60 calls where one would do.
 *
 * This wraps the I/O methods of one connection's WAL file: a write that continues the previous
 * one is appended to a buffer in wasm memory instead of being written; the buffer is written
 * with one call when the commit is complete — the page after a commit frame's header (the header
 * whose "database size after commit" field is non-zero) — before that write returns to SQLite,
 * so before COMMIT returns. A commit whose one write fails fails as a commit whose last write
 * failed always did (SQLITE_IOERR, rolled back), and what reached the file of a failed or
 * interrupted commit is a torn tail that WAL recovery ignores (frames are checksummed and salted).
 * Every other method of the file (read, sync, size, truncate, close) and any write that does not
 * continue the buffer write the buffer first, so SQLite never sees the file without its writes.
 * @internal
 */
import type { Database, Sqlite3Static } from '@sqlite.org/sqlite-wasm';

const FRAME_HEADER_BYTES = 24;
/** A commit larger than this is written in pieces of about this size (plus a page). */
const DEFAULT_MAX_WRITE_BYTES = 1 << 20;

/** The coalescing attached to one connection's WAL file. */
export interface WalCoalescing {
  /** Writes that reached the file, and writes SQLite made: for tests and the benchmark. */
  readonly stats: { fileWrites: number; sqliteWrites: number };
  /** Bytes written by SQLite that have not reached the file yet: 0 whenever no COMMIT is under way. */
  pendingBytes(): number;
  /** Frees the wasm memory it holds; call after the connection is closed. */
  release(): void;
}

type Sqlite3 = Sqlite3Static;
type Io = (...args: never[]) => number;

/** What sqlite-wasm's struct wrappers have at run time (its .d.ts leaves some of it out). */
interface Struct {
  readonly pointer: number;
  memberKey(name: string): string;
  memberKeys(): string[];
  installMethods(methods: Record<string, (...args: never[]) => number>): void;
  dispose(): void;
  [member: string]: unknown;
}

/** The sqlite3_io_methods members this module replaces (see the sqlite3 C API for their signatures). */
const WRAPPED = ['xClose', 'xRead', 'xWrite', 'xTruncate', 'xSync', 'xFileSize'] as const;

/**
 * Attaches coalescing to the WAL file of `db`, which must be in WAL mode with its WAL open
 * (after its first read). Returns null, changing nothing, when `db` has no open WAL file.
 * `maxWriteBytes`: a buffer this full is written even before its commit is complete (default
 * 1 MiB; a file system that refuses large writes needs less: Emscripten's in Node refuses 128 KiB).
 * Only this connection's WAL file is affected: other files and connections keep their methods.
 */
export function coalesceWalWrites(sqlite3: Sqlite3, db: Database, options: { maxWriteBytes?: number } = {}): WalCoalescing | null {
  const maxWriteBytes = options.maxWriteBytes ?? DEFAULT_MAX_WRITE_BYTES;
  const { capi, wasm } = sqlite3;
  const pWal = walFile(sqlite3, db);
  if (!pWal) return null;
  const file = new capi.sqlite3_file(pWal) as unknown as Struct;
  const original = new capi.sqlite3_io_methods(file.$pMethods as number) as unknown as Struct;
  const call = (name: string): Io => wasm.functionEntry(original[original.memberKey(name)] as number) as unknown as Io;
  const orig = Object.fromEntries(WRAPPED.map((name) => [name, call(name)])) as Record<(typeof WRAPPED)[number], Io>;
  const stats = { fileWrites: 0, sqliteWrites: 0 };

  /** The pending bytes: in wasm memory, so they are written without another copy. */
  let buffer = 0;
  let capacity = 0;
  let length = 0;
  /** Where the pending bytes go in the file. */
  let offset = 0;
  /** The last write was a commit frame's header: its page completes the commit. */
  let commitHeader = false;

  const flush = (pFile: number): number => {
    if (length === 0) return 0;
    const n = length;
    length = 0;
    commitHeader = false;
    stats.fileWrites++;
    return (orig.xWrite as unknown as (f: number, p: number, n: number, at: bigint) => number)(pFile, buffer, n, BigInt(offset));
  };

  const append = (pSrc: number, n: number): void => {
    if (length + n > capacity) {
      const grown = Math.max(length + n, capacity * 2, 64 * 1024);
      const next = wasm.alloc(grown) as unknown as number;
      if (length > 0) wasm.heap8u().copyWithin(next, buffer, buffer + length);
      if (buffer) wasm.dealloc(buffer);
      buffer = next;
      capacity = grown;
    }
    wasm.heap8u().copyWithin(buffer + length, pSrc, pSrc + n);
    length += n;
  };

  const methods = {
    xWrite(pFile: number, pSrc: number, n: number, at: bigint): number {
      stats.sqliteWrites++;
      const position = Number(at);
      if (length > 0 && position !== offset + length) {
        const rc = flush(pFile);
        if (rc !== 0) return rc;
      }
      if (length === 0) offset = position;
      const completes = commitHeader;
      append(pSrc, n);
      if (n === FRAME_HEADER_BYTES) {
        // Bytes 4–7 of a frame header: the database size after the commit, 0 on other frames.
        const heap = wasm.heap8u();
        commitHeader = (heap[pSrc + 4]! | heap[pSrc + 5]! | heap[pSrc + 6]! | heap[pSrc + 7]!) !== 0;
        return 0;
      }
      commitHeader = false;
      return completes || length >= maxWriteBytes ? flush(pFile) : 0;
    },
    xRead(pFile: number, pDest: number, n: number, at: bigint): number {
      const rc = flush(pFile);
      return rc !== 0 ? rc : (orig.xRead as unknown as (f: number, p: number, n: number, at: bigint) => number)(pFile, pDest, n, at);
    },
    xTruncate(pFile: number, size: bigint): number {
      const rc = flush(pFile);
      return rc !== 0 ? rc : (orig.xTruncate as unknown as (f: number, size: bigint) => number)(pFile, size);
    },
    xSync(pFile: number, flags: number): number {
      const rc = flush(pFile);
      return rc !== 0 ? rc : (orig.xSync as unknown as (f: number, flags: number) => number)(pFile, flags);
    },
    xFileSize(pFile: number, pSize: number): number {
      const rc = flush(pFile);
      return rc !== 0 ? rc : (orig.xFileSize as unknown as (f: number, p: number) => number)(pFile, pSize);
    },
    xClose(pFile: number): number {
      const rc = flush(pFile);
      const closed = (orig.xClose as unknown as (f: number) => number)(pFile);
      return rc !== 0 ? rc : closed;
    },
  };

  // A struct of our own for this one file: every member copied from the original, six replaced.
  const wrapped = new capi.sqlite3_io_methods() as unknown as Struct;
  for (const key of original.memberKeys()) wrapped[key] = original[key];
  wrapped.installMethods(methods as unknown as Record<string, (...args: never[]) => number>);
  file.$pMethods = wrapped.pointer;

  return {
    stats,
    pendingBytes: () => length,
    release() {
      if (buffer) wasm.dealloc(buffer);
      buffer = 0;
      capacity = 0;
      wrapped.dispose();
    },
  };
}

/** The connection's open WAL file (sqlite3_file*), or 0. */
function walFile(sqlite3: Sqlite3, db: Database): number {
  const { capi, wasm } = sqlite3;
  if (String(db.selectValue('PRAGMA journal_mode')).toLowerCase() !== 'wal') return 0;
  const stack = wasm.pstack.pointer;
  try {
    const pOut = wasm.pstack.allocPtr() as unknown as number;
    wasm.pokePtr(pOut, 0);
    // In WAL mode the "journal" file control answers with the WAL file, once it is open.
    if (capi.sqlite3_file_control(db.pointer!, 'main', capi.SQLITE_FCNTL_JOURNAL_POINTER, pOut) !== 0) return 0;
    return Number(wasm.peekPtr(pOut));
  } finally {
    wasm.pstack.restore(stack);
  }
}
