// A Vite config without leasehold's plugin: only the module worker the browser entry needs.
import { defineConfig } from 'vite';

export default defineConfig({ worker: { format: 'es' }, logLevel: 'warn' });
