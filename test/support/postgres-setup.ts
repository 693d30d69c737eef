/**
 * Vitest global setup: one PostgreSQL server for the whole run, shared by every test file that
 * uses it (each harness works in its own schema). LEASEHOLD_PG_URL if set; otherwise a
 * throwaway cluster started by scripts/postgres.mjs, stopped at the end. Never skipped: if no
 * server can be found or started, the run fails with what to install.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from '../../scripts/postgres.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const server = await startPostgres({ fast: true, label: 'leasehold-pg-test' });
  project.provide('pgUrl', server.url);
  return () => server.stop();
}
