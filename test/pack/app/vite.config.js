// The scratch page's whole Vite config: the one line the README tells an app to add.
import { defineConfig } from 'vite';
import { leasehold } from 'leasehold/vite';

export default defineConfig({ plugins: [leasehold()], logLevel: 'warn' });
