import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { leasehold } from './src/vite/index.ts';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The demo and the browser tests import leasehold by its public names, resolved to the sources. */
export const sharedAliases = {
  'leasehold/browser': here('./src/browser/index.ts'),
  'leasehold/sqlite-wasm': here('./src/sqlite/wasm.ts'),
  'leasehold/better-sqlite3': here('./src/sqlite/better.ts'),
  'leasehold/vite': here('./src/vite/index.ts'),
  // The client first: an alias also matches longer specifiers that start with it.
  'leasehold/durable-object/client': here('./src/durable-object/client.ts'),
  'leasehold/durable-object': here('./src/durable-object/index.ts'),
  'leasehold/postgres': here('./src/postgres/index.ts'),
  'leasehold/watch': here('./src/watch/watch.ts'),
  'leasehold/workflow': here('./src/workflow/index.ts'),
  'leasehold/schedule': here('./src/schedule/index.ts'),
  'leasehold/react': here('./src/react/index.ts'),
  'leasehold/http': here('./src/http/index.ts'),
  'leasehold/receiver': here('./src/receiver/index.ts'),
  // The server half first: an alias also matches longer specifiers that start with it.
  'leasehold/inspector/http': here('./src/inspector/http.ts'),
  'leasehold/inspector': here('./src/inspector/index.ts'),
  leasehold: here('./src/index.ts'),
};

// The demo is a static site: it needs no special headers (opfs-sahpool works without
// COOP/COEP), so `vite build` output runs on any static host.
export default defineConfig({
  root: here('./demo'),
  publicDir: here('./public'),
  resolve: { alias: sharedAliases },
  // The plugin the package exports: worker format, optimizeDeps, sqlite-wasm's unused files left out.
  plugins: [leasehold()],
  build: {
    outDir: here('./dist-demo'),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: { input: { demo: here('./demo/index.html'), lab: here('./demo/lab.html'), inspector: here('./demo/inspector.html') } },
  },
  server: { watch: { ignored: ['**/test-results/**', '**/bench/results/**', '**/.tmp/**'] } },
  // The e2e tests reach the preview as insecure.test (mapped to 127.0.0.1) to get a page that
  // is not a secure context; Vite refuses unknown host names otherwise.
  preview: { allowedHosts: ['insecure.test'] },
});
