/**
 * The slices of the Cloudflare Workers APIs leasehold uses, as structural types: no dependency
 * on @cloudflare/workers-types (whose globals would clash with the DOM and Node typings the
 * rest of the project compiles against). Each lists only what leasehold calls.
 */

/** A cursor over a statement's rows (`ctx.storage.sql.exec(...)`). */
export interface SqlCursorLike {
  toArray(): Record<string, unknown>[];
  /** Rows written, counting index and trigger writes (what Cloudflare bills). */
  readonly rowsWritten: number;
  readonly rowsRead: number;
}

/** `ctx.storage.sql` of a SQLite-backed Durable Object. */
export interface SqlStorageLike {
  exec(query: string, ...bindings: unknown[]): SqlCursorLike;
  /** The database's size in bytes. */
  readonly databaseSize: number;
}

/** `ctx.storage` of a SQLite-backed Durable Object. */
export interface DurableObjectStorageLike {
  readonly sql: SqlStorageLike;
  transactionSync<T>(body: () => T): T;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A server-side WebSocket, as the hibernation API hands it over. */
export interface WebSocketLike {
  send(message: string): void;
  close(code?: number, reason?: string): void;
}

/** `ctx`, the object's state. */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
  readonly id: { toString(): string };
  acceptWebSocket(socket: WebSocketLike, tags?: string[]): void;
  getWebSockets(tag?: string): WebSocketLike[];
  getTags(socket: WebSocketLike): string[];
  blockConcurrencyWhile<T>(body: () => Promise<T>): Promise<T>;
}
