import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LeaseholdError } from '../src/errors.ts';
import { importPeer, missingPeerError, SQLITE_WASM, SQLITE_WASM_TESTED, type Peer } from '../src/sqlite/peers.ts';

const json = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as Record<string, Record<string, string>>;

// A package name nobody installs here, so Node's own resolver really fails on it.
const absent: Peer = { name: 'leasehold-test-absent-package', usedBy: 'leasehold/example', install: 'npm install leasehold-test-absent-package@1' };

describe('the tested sqlite-wasm releases, from one list (SQLITE_WASM_TESTED)', () => {
  const latest = SQLITE_WASM_TESTED[SQLITE_WASM_TESTED.length - 1]!;

  it('the peer range promises exactly the tested releases, and the suite runs on the latest', () => {
    const pkg = json('../package.json');
    expect(pkg.peerDependencies!['@sqlite.org/sqlite-wasm'], 'package.json peerDependencies').toBe(SQLITE_WASM_TESTED.join(' || '));
    expect(pkg.devDependencies!['@sqlite.org/sqlite-wasm'], 'package.json devDependencies').toBe(latest);
    expect(json('../examples/offline-outbox/package.json').dependencies!['@sqlite.org/sqlite-wasm']).toBe(latest);
  });

  it('the install command of the error, the README and the docs name the latest tested release', () => {
    expect(SQLITE_WASM.install).toBe(`npm install @sqlite.org/sqlite-wasm@${latest}`);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const named = [...readme.matchAll(/@sqlite\.org\/sqlite-wasm@([\w.-]+)/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set([latest]));
  });
});

describe('optional peers', () => {
  it('a peer that is not installed rejects with DRIVER_MISSING naming the package and the command, keeping the cause', async () => {
    const specifier = absent.name;
    const error = await importPeer(absent, () => import(/* @vite-ignore */ specifier)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseholdError);
    expect(error).toMatchObject({ code: 'DRIVER_MISSING' });
    expect((error as Error).message).toBe(
      'leasehold/example needs the package leasehold-test-absent-package, which is not installed. Install it with: npm install leasehold-test-absent-package@1',
    );
    expect(((error as Error).cause as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
  });

  it('a peer that is installed but fails while loading passes its own error through', async () => {
    const broken = new Error('native module built for another Node version');
    await expect(importPeer(absent, () => Promise.reject(broken))).rejects.toBe(broken);
    // A missing dependency *of* the peer names that dependency, not the peer, in quotes.
    const inner = Object.assign(new Error(`Cannot find package 'bindings' imported from /app/node_modules/${absent.name}/lib/index.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importPeer(absent, () => Promise.reject(inner))).rejects.toBe(inner);
  });

  it('the module Vite puts in place of a missing optional peer, and a browser without a bundler, count as missing', async () => {
    for (const message of [`Could not resolve "${absent.name}" imported by "leasehold".`, `Failed to resolve module specifier "${absent.name}". Relative references must start with either "/", "./", or "../".`]) {
      await expect(importPeer(absent, () => Promise.reject(new TypeError(message)))).rejects.toMatchObject({ code: 'DRIVER_MISSING' });
    }
  });

  it('a peer used by two entries says "need"', () => {
    expect(missingPeerError({ ...absent, usedBy: 'a and b' }).message).toMatch(/^a and b need the package/);
  });
});
