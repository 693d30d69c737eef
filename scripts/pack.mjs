/**
 * Packs leasehold the way `npm publish` would (`npm pack`, which runs `prepack`, which builds
 * dist/) and returns the tarball's path. Used by the pack test and by anything else that needs
 * the real package (run directly: `node scripts/pack.mjs [dir]` prints the path).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * Runs `npm pack` in the repository and writes the tarball into `destination` (created if
 * needed). Returns the tarball's absolute path and the list of files it holds.
 * @param {string} destination
 * @returns {{ tarball: string, files: string[] }}
 */
export function packLeasehold(destination) {
  const dir = resolve(destination);
  mkdirSync(dir, { recursive: true });
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: repoRoot,
    encoding: 'utf8',
    // prepack's build prints to stdout too; only the JSON report is parsed (it comes last).
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const report = JSON.parse(out.slice(out.indexOf('[\n')));
  return { tarball: join(dir, report[0].filename), files: report[0].files.map((f) => f.path) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(packLeasehold(process.argv[2] ?? '.').tarball);
}
