/**
 * Which methods a Durable Object forwards, derived from the SQL backends' own classes so a
 * method added to `SqliteTransport` or `SqliteStore` is forwarded over RPC and HTTP with no edit
 * here. `close` stays local (it closes a caller's handle, never the shared object) and
 * `onChange` travels as WebSocket notices.
 * @internal
 */
import { SqliteStore } from '../store/sqlite.js';
import { SqliteTransport } from '../transport/sqlite.js';

/** The objects a remote call can address. */
export type Target = 'transport' | 'store';

const LOCAL = new Set(['constructor', 'close', 'onChange']);

function publicMethods(prototype: object): readonly string[] {
  return Object.freeze(
    Object.getOwnPropertyNames(prototype).filter(
      (name) => !LOCAL.has(name) && typeof Object.getOwnPropertyDescriptor(prototype, name)?.value === 'function',
    ),
  );
}

/** Every forwarded method, per target. */
export const METHODS: Readonly<Record<Target, readonly string[]>> = Object.freeze({
  transport: publicMethods(SqliteTransport.prototype),
  store: publicMethods(SqliteStore.prototype),
});

/**
 * Store methods that bump `exe.version` in place: remotely the caller's object cannot be
 * touched, so these answer with the new version and the client writes it back.
 */
export const VERSION_BUMPING: ReadonlySet<string> = new Set(['save', 'commit']);

/** Whether `method` is a forwarded method of `target`. */
export function isForwarded(target: unknown, method: unknown): target is Target {
  return (target === 'transport' || target === 'store') && typeof method === 'string' && METHODS[target].includes(method);
}
