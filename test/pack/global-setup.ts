/**
 * Packs leasehold once for the whole pack project (every test file installs this one tarball)
 * and removes the scratch folder afterwards. Test files read it with `inject('packed')`.
 */
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { packIntoScratch } from './scratch.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The scratch folder (under the system's temp dir), the tarball in it and the files it holds. */
    packed: { scratch: string; tarball: string; files: string[] };
  }
}

export default function setup(project: TestProject): () => void {
  const packed = packIntoScratch();
  project.provide('packed', packed);
  return () => rmSync(packed.scratch, { recursive: true, force: true });
}
