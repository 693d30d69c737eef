// A small Vite plugin: after `vite build`, writes dist/sw.js, the service worker that keeps the
// app shell (every file the build emitted) for offline page loads. See service-worker.js.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const TEMPLATE = fileURLToPath(new URL('./service-worker.js', import.meta.url));

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** @returns {import('vite').Plugin} */
export function precache() {
  let outDir = '';
  return {
    name: 'offline-outbox:precache',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const files = filesUnder(outDir)
        .map((file) => relative(outDir, file).split('\\').join('/'))
        .filter((file) => file !== 'sw.js')
        .sort();
      const hash = createHash('sha256');
      for (const file of files) hash.update(file).update(readFileSync(join(outDir, file)));
      const head = `const PRECACHE = ${JSON.stringify(['./', ...files.map((f) => `./${f}`)])};\nconst VERSION = '${hash.digest('hex').slice(0, 12)}';\n`;
      writeFileSync(join(outDir, 'sw.js'), head + readFileSync(TEMPLATE, 'utf8'));
    },
  };
}
