/**
 * Vitest global setup of the node project: one workerd for the whole run, shared by every test
 * file through `inject('workerdUrl')`. Tests that restart or kill workerd start their own.
 */
import type { TestProject } from 'vitest/node';
import { startWorkerd } from './workerd.js';

declare module 'vitest' {
  export interface ProvidedContext {
    workerdUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const workerd = await startWorkerd();
  project.provide('workerdUrl', workerd.url);
  return async () => {
    await workerd.stop();
    workerd.remove();
  };
}
