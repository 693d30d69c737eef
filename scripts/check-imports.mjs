/**
 * The folder edges of src/ (part of `npm run typecheck`): every import of every file under
 * src/, read with the TypeScript parser, must run down the layers below, never up or sideways.
 * Run directly, `node scripts/check-imports.mjs [srcDir]` prints each wrong edge as
 * `file: 'specifier' (file → target): rule` and exits 1 if there is one.
 *
 * An import is any module reference the code makes: `import`/`export … from` (type-only too:
 * a type pulled upwards is the same knot), `import()`, `import('…').T` in a type, and
 * `new URL('…', import.meta.url)` (how workers and assets are found). Imports of packages are
 * not edges, except leasehold's own name, which is followed to the entry it names.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The layers, lowest first. A unit (a folder of src/, or a file at its root) may import its own
 * layer and the layers below it, and nothing above; `siblings: false` also forbids the units of
 * one layer to import each other. DESIGN.md's arrows: contracts ← backends ← runtime ← hosts ←
 * platforms; an entry that bundles a platform would load that platform's engine for everyone.
 */
export const LAYERS = [
  { name: 'foundation', units: ['errors.ts', 'clock.ts', 'validate.ts', 'locks.ts', 'require.cjs'] },
  // The contracts and backends: the queue, the store, the SQL driver seam they run on.
  { name: 'backends', units: ['transport', 'store', 'sqlite'] },
  // What both worker loops share: lease keeping, back-off, idle waits, the host's timers and ids.
  { name: 'worker', units: ['worker'] },
  // The two worker loops, the Runtime (executions) and consume() (plain messages): each builds on
  // the worker layer and neither imports the other.
  { name: 'loops', units: ['runtime', 'consume'], siblings: false },
  // Schedules: kept in the store, fired by a Runtime's handler; below workflows, which can run them.
  { name: 'schedule', units: ['schedule'] },
  // Workflows: async functions of (input, step) run by a Runtime; above it, below hosts.
  { name: 'workflow', units: ['workflow'] },
  // watchQueue(): reads any transport for a UI; the UI entries (react, inspector) build on it.
  { name: 'bindings', units: ['watch'] },
  // The shared hosting / remote-call layer: method table, wire, client proxies, the SQL host.
  { name: 'hosting', units: ['remote'] },
  // The core entry: what `leasehold` exports; it must not pull a platform (each is its own entry).
  { name: 'core entry', units: ['index.ts'] },
  // Each platform supplies a send and a serving loop over the layers below, and knows no other.
  { name: 'platforms', units: ['browser', 'durable-object', 'postgres', 'vite', 'react', 'inspector'], siblings: false },
];

/**
 * Known wrong edges, each `[from, to]` relative to src/, allowed only until the change named
 * beside it lands. An entry that no longer matches an import fails the check too, so this list
 * is emptied as the edges go rather than left to allow them again.
 */
export const KNOWN_VIOLATIONS = [];

const SOURCE = /\.(?:[cm]?ts|[cm]?js)$/;
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Every module specifier `text` refers to, with the line it is on. */
export function importsOf(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const add = (node) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL' && node.arguments?.length === 2) {
      const base = node.arguments[1];
      if (ts.isPropertyAccessExpression(base) && ts.isMetaProperty(base.expression) && base.name.text === 'url') add(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The files under `dir`, recursively, as absolute paths. */
function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

/** leasehold's own entries as src/ paths ('leasehold/browser' → 'browser/index.ts'), from package.json. */
function selfEntries() {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const entries = new Map();
  for (const [key, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.import;
    if (!file?.startsWith('./dist/')) continue;
    entries.set(key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, file.slice('./dist/'.length).replace(/\.js$/, '.ts'));
  }
  return entries;
}

const unitOf = (path) => path.split('/')[0];
const unplaced = (unit) => `${unit} is in no layer: add it to LAYERS in scripts/check-imports.mjs`;
const layerOf = (unit) => LAYERS.findIndex((layer) => layer.units.includes(unit));

/**
 * The rule an edge `from → to` (paths relative to src/, or `to` outside it) breaks, or null.
 * @param {string} from
 * @param {{ inside: boolean, path: string }} to
 */
function ruleBroken(from, to) {
  if (!to.inside) return `src/ never imports what lies outside it (${to.path} is not part of the library)`;
  const a = unitOf(from);
  const b = unitOf(to.path);
  const la = layerOf(a);
  const lb = layerOf(b);
  if (lb < 0) return unplaced(b);
  if (a === b) return null;
  const named = (unit, layer) => (LAYERS[layer].name === unit ? unit : `${LAYERS[layer].name} (${unit})`);
  if (lb > la) return `${named(a, la)} never imports ${named(b, lb)}: arrows run down the layers`;
  if (lb === la && LAYERS[la].siblings === false) return `${LAYERS[la].name} never import each other (${a} → ${b}): share code through a layer below`;
  return null;
}

/**
 * Checks every import under `srcDir`.
 * @param {string} srcDir
 * @param {{ known?: [string, string][] }} [options] the allowed wrong edges (default KNOWN_VIOLATIONS)
 * @returns {{ violations: { file: string, line: number, specifier: string, target: string, rule: string }[], allowed: number, stale: [string, string][] }}
 *   `violations` (files relative to srcDir, targets relative to it or to the repository when
 *   outside), how many wrong edges `known` allowed, and the `known` entries no import matches.
 */
export function checkImports(srcDir, { known = KNOWN_VIOLATIONS } = {}) {
  const root = resolve(srcDir);
  const self = selfEntries();
  const used = new Set();
  const violations = [];
  let allowed = 0;
  const posix = (path) => path.split(sep).join('/');
  for (const file of sourceFiles(root)) {
    const from = posix(relative(root, file));
    // A file outside every layer is one finding, whatever it imports: place its folder first.
    if (layerOf(unitOf(from)) < 0) {
      violations.push({ file: from, line: 1, specifier: '', target: '', rule: unplaced(unitOf(from)) });
      continue;
    }
    for (const { specifier, line } of importsOf(file, readFileSync(file, 'utf8'))) {
      let to;
      if (self.has(specifier)) to = { inside: true, path: self.get(specifier) };
      else if (specifier.startsWith('.')) {
        // `./x.js` names `./x.ts` (TypeScript's ESM convention); folders decide, so a missing file does not matter.
        const path = posix(relative(root, resolve(dirname(file), specifier))).replace(/\.([cm]?)js$/, '.$1ts');
        to = path.startsWith('../') ? { inside: false, path: posix(relative(repoRoot, resolve(dirname(file), specifier))) } : { inside: true, path };
      } else continue; // a package
      const rule = ruleBroken(from, to);
      if (!rule) continue;
      const key = known.findIndex(([a, b]) => a === from && b === to.path);
      if (key >= 0) {
        used.add(key);
        allowed++;
        continue;
      }
      violations.push({ file: from, line, specifier, target: to.path, rule });
    }
  }
  return { violations, allowed, stale: known.filter((_, i) => !used.has(i)) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // The known edges are src/'s: another tree (a test's fixture) is checked without them.
  const srcDir = resolve(process.argv[2] ?? join(repoRoot, 'src'));
  const known = srcDir === resolve(repoRoot, 'src') ? KNOWN_VIOLATIONS : [];
  const { violations, allowed, stale } = checkImports(srcDir, { known });
  const shown = (file) => relative(repoRoot, join(srcDir, file)).split(sep).join('/');
  for (const v of violations) console.error(`${shown(v.file)}:${v.line}: ${v.specifier ? `'${v.specifier}' (→ ${v.target}): ` : ''}${v.rule}`);
  for (const [from, to] of stale) console.error(`KNOWN_VIOLATIONS in scripts/check-imports.mjs lists src/${from} → src/${to}, which no import makes any more: remove the entry`);
  if (violations.length || stale.length) process.exit(1);
  console.log(`imports: every edge of src/ runs down the layers${allowed ? ` (${allowed} known, listed in KNOWN_VIOLATIONS: removed by the src/remote/ move)` : ''}`);
}
