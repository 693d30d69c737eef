/**
 * The optional peer packages the drivers load, and the error an app gets when one is not
 * installed. leasehold declares them as optional peers so an app installs only the driver it
 * uses; the price is that a missing one is found at run time, so the error says exactly what to
 * install.
 * @internal
 */
import { LeaseholdError } from '../errors.js';

/** A driver package leasehold loads on demand, with the command that installs a version it was tested with. */
export interface Peer {
  readonly name: string;
  /** Which leasehold entry needs it, for the message. */
  readonly usedBy: string;
  readonly install: string;
}

/**
 * The sqlite-wasm releases the whole test suite ran on, oldest first: the one place they are
 * written. package.json's peer range is exactly these joined by `||` (every release is a
 * `-buildN` prerelease to semver, so a range could not promise more without listing builds that
 * do not exist yet), the install command names the last, and test/sqlite-peers.test.ts checks
 * the range, the devDependency, the README and the example against this list. To test a newer
 * release: `npm install -D -E @sqlite.org/sqlite-wasm@<version>`, `npm test`; if it passes,
 * append it here and put the range that test asks for in package.json.
 */
export const SQLITE_WASM_TESTED = ['3.54.1-build1'] as const;

/**
 * sqlite-wasm's `latest` dist-tag points at 3.41.2, which is too old (no Node build, no
 * `preserveOnInitFailure`), so the command names a tested version instead of relying on the tag.
 */
export const SQLITE_WASM: Peer = {
  name: '@sqlite.org/sqlite-wasm',
  usedBy: 'leasehold/sqlite-wasm and leasehold/browser',
  install: `npm install @sqlite.org/sqlite-wasm@${SQLITE_WASM_TESTED[SQLITE_WASM_TESTED.length - 1]}`,
};

export const BETTER_SQLITE3: Peer = {
  name: 'better-sqlite3',
  usedBy: 'leasehold/better-sqlite3',
  install: 'npm install better-sqlite3@12',
};

/** The error for a peer that could not be loaded; `cause` keeps the loader's own error. */
export function missingPeerError(peer: Peer, cause?: unknown): LeaseholdError {
  return new LeaseholdError(
    'DRIVER_MISSING',
    `${peer.usedBy} need${peer.usedBy.includes(' and ') ? '' : 's'} the package ${peer.name}, which is not installed. Install it with: ${peer.install}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Imports a peer with the given loader, turning "the package is not there" into
 * {@link missingPeerError}; any other failure (the package is there but broke while loading)
 * passes through unchanged.
 */
export async function importPeer<T>(peer: Peer, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isNotFound(error, peer.name)) throw missingPeerError(peer, error);
    throw error;
  }
}

function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  // The name in quotes is the specifier that failed; a package that is installed but misses a
  // dependency of its own names that dependency in quotes and itself only inside a path.
  if (typeof message !== 'string' || !(message.includes(`'${name}'`) || message.includes(`"${name}"`))) return false;
  // Node: ERR_MODULE_NOT_FOUND. A browser without a bundler: "Failed to resolve module
  // specifier". A Vite build without leasehold's plugin: the module Vite puts in place of a
  // missing optional peer throws 'Could not resolve "…" imported by "leasehold".'.
  return code === 'ERR_MODULE_NOT_FOUND' || /failed to resolve module specifier|could not resolve "[^"]+" imported by/i.test(message);
}
