/**
 * The folder-edge check of `npm run typecheck` (scripts/check-imports.mjs): on a fixture tree
 * that breaks each rule once it names exactly those imports, file and specifier (an edge up the
 * layers, sideways between siblings, out of src/, two folders importing each other); the real
 * src/ passes (with only the listed known edges); a listed edge that no import makes fails.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkImports, importsOf, KNOWN_VIOLATIONS } from '../scripts/check-imports.mjs';

const fixture = fileURLToPath(new URL('./fixtures/imports/src/', import.meta.url));
const script = fileURLToPath(new URL('../scripts/check-imports.mjs', import.meta.url));

describe('the folder-edge check', () => {
  it('names every wrong edge of the fixture tree, and only those', () => {
    const { violations, allowed, stale } = checkImports(fixture, { known: [] });
    expect(violations.map((v) => [v.file, v.specifier, v.target]).sort()).toEqual(
      [
        ['transport/queue.ts', '../browser/page.js', 'browser/page.ts'],
        ['transport/queue.ts', '../remote/host.js', 'remote/host.ts'],
        ['store/state.ts', '../runtime/loop.js', 'runtime/loop.ts'],
        ['runtime/loop.ts', '../consume/drain.js', 'consume/drain.ts'],
        ['consume/drain.ts', '../runtime/loop.js', 'runtime/loop.ts'],
        ['remote/host.ts', '../durable-object/object.js', 'durable-object/object.ts'],
        ['browser/page.ts', '../durable-object/object.js', 'durable-object/object.ts'],
        ['durable-object/object.ts', 'leasehold/browser', 'browser/index.ts'],
        ['durable-object/object.ts', '../browser/page.js', 'browser/page.ts'],
        ['index.ts', './browser/page.js', 'browser/page.ts'],
        ['index.ts', './receiver/receiver.js', 'receiver/receiver.ts'],
        ['receiver/receiver.ts', '../http/delivery.js', 'http/delivery.ts'],
        ['vite/plugin.ts', '../../demo/app.js', 'test/fixtures/imports/demo/app.js'],
        ['newthing/thing.ts', '', ''],
        ['transport/contract.ts', './queue.js', 'transport/queue.ts'],
        ['postgres/pool.ts', '../remote/host.js', 'remote/host.ts'],
        ['postgres/pool.ts', '../store/state.js', 'store/state.ts'],
        ['transport/queue.ts', '../sqlite/driver.js', 'sqlite/driver.ts'],
        ['sqlite/driver.ts', '../transport/contract.js', 'transport/contract.ts'],
      ].sort(),
    );
    expect(allowed).toBe(0);
    expect(stale).toEqual([]);
    const rule = (file: string, specifier: string) => violations.find((v) => v.file === file && v.specifier === specifier)!.rule;
    expect(rule('transport/queue.ts', '../browser/page.js')).toMatch(/backends \(transport\) never imports platforms \(browser\)/);
    expect(rule('browser/page.ts', '../durable-object/object.js')).toMatch(/platforms never import each other \(browser → durable-object\)/);
    expect(rule('vite/plugin.ts', '../../demo/app.js')).toMatch(/never imports what lies outside it/);
    // The two worker loops share src/worker/, never each other's code.
    expect(rule('consume/drain.ts', '../runtime/loop.js')).toMatch(/loops never import each other \(consume → runtime\)/);
    expect(rule('newthing/thing.ts', '')).toMatch(/newthing is in no layer/);
    // The receiver (server) and the delivery helper (client) are platforms: apart, and never in the core entry.
    expect(rule('receiver/receiver.ts', '../http/delivery.js')).toMatch(/platforms never import each other \(receiver → http\)/);
    expect(rule('index.ts', './receiver/receiver.js')).toMatch(/core entry \(index\.ts\) never imports platforms \(receiver\)/);
    expect(violations.find((v) => v.file === 'transport/queue.ts' && v.specifier === '../remote/host.js')!.line).toBe(3);
  });

  it('checks the layers as drawn: a contract below the backends of its own folder, src/postgres/ a backend', () => {
    const { violations } = checkImports(fixture, { known: [] });
    const rule = (file: string, specifier: string) => violations.find((v) => v.file === file && v.specifier === specifier)!.rule;
    // The most specific unit wins: transport/contract.ts is a contract, transport/queue.ts a backend.
    expect(rule('transport/contract.ts', './queue.js')).toMatch(/contracts \(transport\/contract\.ts\) never imports backends \(transport\): arrows run down/);
    expect(rule('postgres/pool.ts', '../remote/host.js')).toMatch(/backends \(postgres\) never imports hosting \(remote\)/);
    expect(rule('postgres/pool.ts', '../store/state.js')).toMatch(/backends never import each other \(postgres → store\)/);
  });

  it('fails on two folders that import each other, though each file edge runs down the layers', () => {
    const { violations } = checkImports(fixture, { known: [] });
    // transport/queue.ts (a backend) → sqlite/driver.ts (the seam) runs down; so does
    // sqlite/driver.ts → transport/contract.ts (a contract). Together, transport/ and sqlite/ are one knot.
    const twoWay = violations.filter((v) => v.rule.includes('folders import one way only'));
    expect(twoWay.map((v) => `${v.file}:${v.line} → ${v.target}`).sort()).toEqual(['sqlite/driver.ts:1 → transport/contract.ts', 'transport/queue.ts:4 → sqlite/driver.ts']);
    expect(twoWay.find((v) => v.file === 'sqlite/driver.ts')!.rule).toBe(
      'sqlite and transport import each other (transport/queue.ts:4 imports sqlite/driver.ts): folders import one way only, so move what both need into a layer below',
    );
    // A known edge allows one direction; the other is still reported.
    const allowed = checkImports(fixture, { known: [['sqlite/driver.ts', 'transport/contract.ts']] });
    expect(allowed.violations.filter((v) => v.rule.includes('folders import one way only')).map((v) => v.file)).toEqual(['transport/queue.ts']);
  });

  it('reads imports, re-exports, type-only imports, import() in code and in types, and new URL(…, import.meta.url)', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "export * from './c.js';",
      "export { d } from './d.js';",
      "type E = import('./e.js').E;",
      "const f = () => import('./f.js');",
      "const g = new URL('./g.js', import.meta.url);",
      "const h = new URL('./not-an-import.js', 'https://example.com');",
      "const s = \"import x from './in-a-string.js'\";",
    ].join('\n');
    expect(importsOf('x.ts', text).map((i) => i.specifier)).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
  });

  it('passes on src/ with the known edges allowed, and every known edge still exists', () => {
    const { violations, allowed, stale } = checkImports(fileURLToPath(new URL('../src/', import.meta.url)));
    expect(violations).toEqual([]);
    expect(stale).toEqual([]);
    expect(allowed).toBeGreaterThanOrEqual(KNOWN_VIOLATIONS.length);
  });

  it('fails on a known edge that no import makes any more, so the list is emptied as edges go', () => {
    const { stale } = checkImports(fixture, { known: [['transport/queue.ts', 'browser/page.ts'], ['transport/queue.ts', 'sqlite/gone.ts']] });
    expect(stale).toEqual([['transport/queue.ts', 'sqlite/gone.ts']]);
  });

  it('exits 1 from the command line, naming the file, line and import', () => {
    const run = () => execFileSync(process.execPath, [script, fixture], { encoding: 'utf8', stdio: 'pipe' });
    const error = (() => {
      try {
        run();
      } catch (e) {
        return e as { status: number; stderr: string };
      }
      throw new Error('the check passed on the fixture tree');
    })();
    expect(error.status).toBe(1);
    expect(error.stderr).toContain("test/fixtures/imports/src/transport/queue.ts:2: '../browser/page.js' (→ browser/page.ts): backends (transport) never imports platforms (browser): arrows run down the layers");
    expect(error.stderr.trim().split('\n')).toHaveLength(19);
  });
});
