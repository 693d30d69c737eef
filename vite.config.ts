import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The demo and the browser tests import leasehold by its public names, resolved to the sources. */
export const sharedAliases = {
  'leasehold/browser': here('./src/browser/index.ts'),
  'leasehold/sqlite-wasm': here('./src/sqlite/wasm.ts'),
  'leasehold/better-sqlite3': here('./src/sqlite/better.ts'),
  leasehold: here('./src/index.ts'),
};

/**
 * Keeps two files of sqlite-wasm out of a build, because leasehold never runs them: the
 * deprecated Worker1 API's worker (`sqlite3-worker1-*.js`, ~216 kB, behind
 * `sqlite3Worker1Promiser`) and the `opfs` VFS's async proxy (`sqlite3-opfs-async-proxy-*.js`;
 * leasehold uses opfs-sahpool, which needs no proxy). sqlite-wasm's index.mjs names both with
 * `new URL(…, import.meta.url)`, which Vite follows and emits whether or not it is ever called.
 * Here each of those two expressions becomes a throw with an explanation: calling
 * `sqlite3Worker1Promiser` then fails at once, and on a page with COOP/COEP (where sqlite-wasm
 * tries to install `opfs` at start-up) sqlite-wasm logs that `opfs` could not be installed and
 * carries on. The sahpool VFS is untouched. Use it in `worker.plugins` too: the host worker is
 * where sqlite-wasm is bundled. `npm run size` checks that neither file is emitted.
 */
export function sqliteWasmUnusedFiles(): Plugin {
  const cuts: [RegExp, string][] = [
    [/new Worker\(new URL\("sqlite3-worker1\.mjs", import\.meta\.url\), \{ type: "module" \}\)/, 'sqlite3Worker1Promiser'],
    [/new URL\("sqlite3-opfs-async-proxy\.js", import\.meta\.url\)/, "the 'opfs' VFS (leasehold uses opfs-sahpool)"],
  ];
  return {
    name: 'leasehold:sqlite-wasm-unused-files',
    enforce: 'pre',
    transform(code, id) {
      if (!/@sqlite\.org[\\/]sqlite-wasm[\\/]dist[\\/]index\.mjs/.test(id.split('?')[0]!)) return null;
      let out = code;
      for (const [pattern, what] of cuts) {
        if (!pattern.test(out)) this.warn(`sqlite-wasm changed: ${pattern} not found; the file it names may be emitted`);
        const message = JSON.stringify(`${what} is not included in this build (see sqliteWasmUnusedFiles in vite.config.ts)`);
        out = out.replace(pattern, `(() => { throw new Error(${message}); })()`);
      }
      return { code: out, map: null };
    },
  };
}

// The demo is a static site: it needs no special headers (opfs-sahpool works without
// COOP/COEP), so `vite build` output runs on any static host.
export default defineConfig({
  root: here('./demo'),
  publicDir: here('./public'),
  resolve: { alias: sharedAliases },
  optimizeDeps: { exclude: ['@sqlite.org/sqlite-wasm'] },
  plugins: [sqliteWasmUnusedFiles()],
  worker: { format: 'es', plugins: () => [sqliteWasmUnusedFiles()] },
  build: {
    outDir: here('./dist-demo'),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: { demo: here('./demo/index.html'), lab: here('./demo/lab.html') } },
  },
  server: { watch: { ignored: ['**/test-results/**', '**/bench/results/**', '**/.tmp/**'] } },
  // The e2e tests reach the preview as insecure.test (mapped to 127.0.0.1) to get a page that
  // is not a secure context; Vite refuses unknown host names otherwise.
  preview: { allowedHosts: ['insecure.test'] },
});
