/**
 * Scratch apps outside the repository that install the packed tarball the way a user would
 * (`npm install <tarball>`), for the pack tests. Everything but leasehold comes from this
 * repository's node_modules: sqlite-wasm through npm's cache (`--prefer-offline`), better-sqlite3,
 * Vite, pg (with its types) and PGlite as links, so no native module is compiled a second time.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { packLeasehold, repoRoot } from '../../scripts/pack.mjs';

const run = promisify(execFile);
const devDependencies = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;

/** The sqlite-wasm version this repository develops and tests against. */
export const SQLITE_WASM_VERSION = devDependencies['@sqlite.org/sqlite-wasm']!;

/** Packs leasehold into a fresh scratch folder under the system's temp dir. */
export function packIntoScratch(): { scratch: string; tarball: string; files: string[] } {
  const scratch = mkdtempSync(join(tmpdir(), 'leasehold-pack-'));
  return { scratch, ...packLeasehold(join(scratch, 'tarball')) };
}

/**
 * The environment for a child npm or node: without the variables `npm test` sets for this
 * package (npm_package_*, npm_lifecycle_*), which would otherwise describe the wrong package,
 * and without Vitest's NODE_ENV=test (with it, `vite build` makes a development build:
 * `import.meta.env.PROD` false).
 */
export function childEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_(package|lifecycle)_|^npm_config_local_prefix$|^NODE_ENV$/i.test(key)));
}

/** Runs npm in `cwd`; rejects with npm's output in the message. */
export async function npm(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env: childEnv(), maxBuffer: 16 << 20 });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

export interface AppOptions {
  /** Packages installed with npm next to the tarball (name@version). */
  install?: string[];
  /** Packages of this repository's node_modules linked into the app after the install. */
  link?: string[];
}

/**
 * Creates `<scratch>/<name>`: a `"type": "module"` app with the fixture files of test/pack/app,
 * which installs `tarball` (and `options.install`) with npm and links `options.link`.
 */
export async function createApp(scratch: string, name: string, tarball: string, options: AppOptions = {}): Promise<string> {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  cpSync(join(repoRoot, 'test/pack/app'), dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `leasehold-pack-${name}`, private: true, type: 'module' }, null, 2)}\n`);
  await npm(dir, ['install', '--prefer-offline', tarball, ...(options.install ?? [])]);
  for (const pkg of options.link ?? []) {
    mkdirSync(dirname(join(dir, 'node_modules', pkg)), { recursive: true }); // a scope's folder (@types/…)
    symlinkSync(join(repoRoot, 'node_modules', pkg), join(dir, 'node_modules', pkg), 'dir');
  }
  return dir;
}

/** Runs `node <args>` in `cwd` and returns its exit code, stdout and stderr (never rejects). */
export async function node(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, env: childEnv(), maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof code === 'number' ? code : 1, stdout: stdout ?? '', stderr: stderr ?? '' };
  }
}

/** The last line of a child's stdout, parsed as JSON (the fixtures print one JSON line). */
export function lastJson(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}
