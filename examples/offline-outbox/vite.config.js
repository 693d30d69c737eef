import { defineConfig } from 'vite';
import { leasehold } from 'leasehold/vite';
import { precache } from './precache.js';

export default defineConfig({
  plugins: [leasehold(), precache()],
  // `npm run dev`: the page from Vite, the API from `npm start` (node server.mjs) on port 8787.
  server: { proxy: { '/api': 'http://127.0.0.1:8787' } },
  logLevel: 'warn',
});
