/**
 * The peer ranges in package.json, judged by npm itself: a probe package carrying exactly
 * leasehold's peerDependencies is installed next to a stand-in of each peer at a given version
 * (a package.json with that name and version, nothing else), and npm either accepts the pair or
 * refuses it with ERESOLVE. sqlite-wasm publishes only `-buildN` versions, which semver treats as
 * prereleases, so this is what shows the range admits the tested builds and nothing else.
 * The versions that really run are tested elsewhere: 3.54.1-build1 and better-sqlite3 12.11.1 by
 * the whole suite and the pack test.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/pack.mjs';
import { BETTER_SQLITE3, SQLITE_WASM } from '../../src/sqlite/peers.ts';
import { npm } from './scratch.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
let scratch = '';
let probe = '';

/** Writes a package.json into `<scratch>/<dir>` and packs it; returns the tarball's path. */
async function stub(dir: string, manifest: Record<string, unknown>): Promise<string> {
  const at = join(scratch, dir);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'package.json'), JSON.stringify(manifest));
  const name = (await npm(at, ['pack', '--json'])).trim();
  return join(at, (JSON.parse(name) as { filename: string }[])[0]!.filename);
}

/** Installs the probe and a stand-in `name@version` into a fresh app: 'ok' or 'ERESOLVE'. */
async function installWith(name: string, version: string): Promise<'ok' | 'ERESOLVE'> {
  const tarball = await stub(`peer-${name.replace(/\W/g, '_')}-${version}`, { name, version });
  const app = join(scratch, `app-${name.replace(/\W/g, '_')}-${version}`);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  try {
    await npm(app, ['install', '--prefer-offline', probe, tarball]);
    return 'ok';
  } catch (error) {
    if (/ERESOLVE/.test((error as Error).message)) return 'ERESOLVE';
    throw error;
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'leasehold-peers-'));
  probe = await stub('probe', {
    name: 'leasehold-peer-probe',
    version: '1.0.0',
    peerDependencies: pkg.peerDependencies,
    peerDependenciesMeta: pkg.peerDependenciesMeta,
  });
}, 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('peer ranges, as npm applies them', () => {
  const cases: [string, string, 'ok' | 'ERESOLVE'][] = [
    // 3.53 and older: a failed opfs-sahpool install deletes the pool's files (no preserveOnInitFailure).
    ['@sqlite.org/sqlite-wasm', '3.53.4-build2', 'ERESOLVE'],
    ['@sqlite.org/sqlite-wasm', '3.41.2', 'ERESOLVE'], // the package's `latest` tag: no Node build
    ['@sqlite.org/sqlite-wasm', '3.54.1-build1', 'ok'], // SQLITE_WASM_TESTED
    // Untested releases, even patch builds: a range promises only what the suite ran.
    ['@sqlite.org/sqlite-wasm', '3.54.2-build3', 'ERESOLVE'],
    ['@sqlite.org/sqlite-wasm', '3.55.0-build1', 'ERESOLVE'],
    ['@sqlite.org/sqlite-wasm', '4.0.0-build1', 'ERESOLVE'],
    ['better-sqlite3', '11.10.0', 'ERESOLVE'],
    ['better-sqlite3', '12.0.0', 'ok'],
    ['better-sqlite3', '13.0.0', 'ERESOLVE'], // crashes on Node 20
    ['vite', '7.3.0', 'ERESOLVE'],
    ['vite', '8.0.0', 'ok'],
  ];
  it.each(cases)('%s@%s: %s', async (name, version, expected) => {
    expect(await installWith(name, version)).toBe(expected);
  });

  it('the missing-driver errors name the versions this repository develops against (accepted above)', () => {
    const dev = pkg.devDependencies as Record<string, string>;
    expect(SQLITE_WASM.install).toBe(`npm install @sqlite.org/sqlite-wasm@${dev['@sqlite.org/sqlite-wasm']}`);
    expect(BETTER_SQLITE3.install).toBe(`npm install better-sqlite3@${dev['better-sqlite3']!.split('.')[0]}`);
  });
});
