/**
 * The README and docs/ as a user reads them: their TypeScript blocks, compiled against the
 * installed package's own declarations, and the README's install commands.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../scripts/pack.mjs';
import { node } from './scratch.ts';

const readme = (): string => readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** README.md and every page of docs/, as paths from the repository's root. */
export function documentedPages(): string[] {
  const docs = readdirSync(join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

/** Every ```ts block of `page` (README.md by default), with the line its code starts on. */
export function readmeTsBlocks(page = 'README.md'): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = readFileSync(join(repoRoot, page), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The package lists of every `npm install …` command in the README's Install section. */
export function readmeInstallCommands(): string[][] {
  const text = readme();
  const section = text.slice(text.indexOf('## Install\n'), text.indexOf('\n## ', text.indexOf('## Install\n') + 1));
  return [...section.matchAll(/`npm install ([^`]+)`/g)].map((m) => m[1]!.split(/\s+/));
}

const STRICT = { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [], strict: true, noEmit: true };

/**
 * Writes each block of the README and docs/ as its own module into `<app>/readme/` and compiles them with a
 * strict tsconfig of the kind an ESM app has (module nodenext, so the package's `exports` and
 * its .d.ts files are what resolve); then compiles the installed package's own declarations
 * with nothing skipped (the blocks' run skips library files: Vite's alone take most of a
 * minute on a busy machine). Returns tsc's output ('' when everything compiles).
 */
export async function typecheckReadme(app: string): Promise<{ code: number; output: string; files: number }> {
  const dir = join(app, 'readme');
  mkdirSync(dir, { recursive: true });
  // One module per block, named for its page and line, so tsc's errors point at the doc.
  let files = 0;
  for (const page of documentedPages()) {
    const prefix = page.replace(/\.md$/, '').replace(/\W/g, '-');
    readmeTsBlocks(page).forEach((block, i) => {
      writeFileSync(join(dir, `${prefix}-block-${i + 1}-line-${block.line}.ts`), `${block.code}\n`);
      files++;
    });
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, noUncheckedIndexedAccess: true, skipLibCheck: true }, include: ['*.ts'] }));
  // leasehold/vite's declarations are left out here: they are Vite's types, checked by the blocks' run.
  // So is the Durable Object class (leasehold/durable-object): it extends the runtime's own
  // DurableObject from 'cloudflare:workers', whose types a Worker project has (wrangler types or
  // @cloudflare/workers-types) and this app does not. Its client is checked.
  const workersOnly = ['dist/durable-object/index.d.ts', 'dist/durable-object/object.d.ts'].map((file) => `../node_modules/leasehold/${file}`);
  // leasehold/react's declarations import React's types, which a React app has and this one
  // does not (react is an optional peer).
  const reactOnly = '../node_modules/leasehold/dist/react/**';
  writeFileSync(
    join(dir, 'tsconfig.declarations.json'),
    JSON.stringify({ compilerOptions: { ...STRICT, skipLibCheck: false }, include: ['../node_modules/leasehold/dist/**/*.d.ts'], exclude: ['../node_modules/leasehold/dist/vite/**', ...workersOnly, reactOnly] }),
  );
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  const outputs: string[] = [];
  let code = 0;
  for (const project of ['tsconfig.json', 'tsconfig.declarations.json']) {
    const result = await node(dir, [tsc, '-p', project, '--pretty', 'false']);
    code ||= result.code;
    outputs.push((result.stdout + result.stderr).trim());
  }
  return { code, output: outputs.filter(Boolean).join('\n'), files };
}
