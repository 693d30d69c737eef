/**
 * leasehold/vite: the Vite plugin an app adds in one line (`plugins: [leasehold()]`) to build
 * pages that use `leasehold/browser`.
 *
 * This entry imports nothing from Vite at run time (types only), so the core entries never pull
 * Vite in, and Vite stays an optional peer that only apps using this entry install.
 */
import type { Plugin, UserConfig } from 'vite';
import { missingPeerError, SQLITE_WASM } from '../sqlite/peers.js';

/**
 * The two `new URL(…)` expressions in sqlite-wasm's `dist/index.mjs` that name files leasehold
 * never runs, and what calling them would have started. Vite follows each such expression and
 * emits its file whether or not it is ever reached.
 */
const UNUSED_FILES: readonly { pattern: RegExp; what: string }[] = [
  // The deprecated Worker1 API's worker (`sqlite3-worker1-*.js`, ~216 kB), behind sqlite3Worker1Promiser.
  { pattern: /new Worker\(new URL\("sqlite3-worker1\.mjs", import\.meta\.url\), \{ type: "module" \}\)/, what: 'sqlite3Worker1Promiser' },
  // The `opfs` VFS's async proxy; leasehold uses opfs-sahpool, which needs none.
  { pattern: /new URL\("sqlite3-opfs-async-proxy\.js", import\.meta\.url\)/, what: "the 'opfs' VFS (leasehold uses opfs-sahpool)" },
];

const SQLITE_WASM_ENTRY = /@sqlite\.org[\\/]sqlite-wasm[\\/]dist[\\/]index\.mjs$/;

/**
 * The Vite plugin for apps that use `leasehold/browser`. It sets what the browser entry needs:
 *  - `worker.format: 'es'`: the host worker is a module worker;
 *  - `optimizeDeps.exclude` for `@sqlite.org/sqlite-wasm` (its wasm file is found relative to
 *    its own module, which pre-bundling would move) and for `leasehold` (whose client starts its
 *    worker by a URL relative to itself);
 *  - keeps sqlite-wasm's unused Worker1 worker and `opfs` async proxy out of the build, in the
 *    page's bundle and in `worker.plugins` (the host worker is where sqlite-wasm is bundled).
 *    Each of the two `new URL(…)` expressions becomes a throw with an explanation: calling
 *    `sqlite3Worker1Promiser` then fails at once, and on a page with COOP/COEP (where sqlite-wasm
 *    tries to install `opfs` at start-up) it logs that `opfs` could not be installed and carries
 *    on. The opfs-sahpool VFS is untouched.
 *
 * When sqlite-wasm is not installed, the build fails with a message that names the command to
 * install it (instead of Vite's "failed to resolve import").
 *
 * Returns an array of plugins; put it in `plugins` as it is. Settings in the app's own config
 * are merged with these (Vite merges `worker.plugins` and `optimizeDeps.exclude` lists).
 */
export function leasehold(): Plugin[] {
  return [
    {
      name: 'leasehold:config',
      config(): UserConfig {
        return {
          worker: { format: 'es', plugins: () => [sqliteWasmPlugin()] },
          optimizeDeps: { exclude: [SQLITE_WASM.name, 'leasehold'] },
        };
      },
    },
    sqliteWasmPlugin(),
  ];
}

/** The part that runs in both the page's and the worker's build: the resolve check and the trim. */
function sqliteWasmPlugin(): Plugin {
  return {
    name: 'leasehold:sqlite-wasm',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (source !== SQLITE_WASM.name) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      // Vite turns a missing optional peer into a module that throws when the page runs
      // ('__vite-optional-peer-dep:…'); fail the build instead, while someone is there to read it.
      if (!resolved || resolved.id.includes('optional-peer-dep')) this.error(missingPeerError(SQLITE_WASM).message);
      return resolved;
    },
    transform(code, id) {
      if (!SQLITE_WASM_ENTRY.test(id.split('?')[0]!)) return null;
      let out = code;
      for (const { pattern, what } of UNUSED_FILES) {
        if (!pattern.test(out)) {
          this.warn(`sqlite-wasm changed: ${pattern} not found, so the file it names may be emitted into the build`);
          continue;
        }
        const message = JSON.stringify(`${what} is not included in this build (leasehold's Vite plugin leaves it out)`);
        out = out.replace(pattern, `(() => { throw new Error(${message}); })()`);
      }
      return { code: out, map: null };
    },
  };
}
