/**
 * The folder edges of src/ (part of `npm run typecheck`): every import of every file under
 * src/, read with the TypeScript parser, must run down the layers below, never up or sideways,
 * and no two folders may import each other, even along edges that each run down.
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
 * The layers, lowest first, as ARCHITECTURE.md draws them. A unit is a folder of src/ or a file
 * (`transport/contract.ts`); a file belongs to the most specific unit that holds it, so one
 * folder can hold two layers (the transport's contract below its backends). A unit may import its
 * own layer and the layers below it, and nothing above; `siblings: false` also forbids the units
 * of one layer to import each other. Across layers, folders import one way only (see
 * `twoWayEdges`). An entry that bundles a platform would load that platform's engine for everyone.
 */
export const LAYERS = [
  { name: 'foundation', units: ['errors.ts', 'clock.ts', 'validate.ts', 'locks.ts', 'require.cjs'] },
  // The contracts and what every backend shares of them: the argument checks, the listener list
  // behind onChange, the store's JSON encoding.
  {
    name: 'contracts',
    units: ['transport/contract.ts', 'transport/shared.ts', 'transport/notifier.ts', 'store/contract.ts', 'store/checks.ts', 'store/encode.ts'],
  },
  // The SQL seam: the driver interface, operations, the drivers, the SQLite schema and statements.
  { name: 'seam', units: ['sqlite'] },
  // The backends, each on the contracts (and the SQL ones on the seam), none on another.
  { name: 'backends', units: ['transport', 'store', 'postgres'], siblings: false },
  // What both worker loops share: lease keeping, back-off, idle waits, the host's timers and ids.
  { name: 'worker', units: ['worker'] },
  // The two worker loops, the Runtime (executions) and consume() (plain messages): each builds on
  // the worker layer and neither imports the other.
  { name: 'loops', units: ['runtime', 'consume'], siblings: false },
  // Schedules: kept in the store, fired by a Runtime's handler; below workflows, which can run them.
  { name: 'schedules', units: ['schedule'] },
  // Workflows: async functions of (input, step) run by a Runtime; above it, below hosts.
  { name: 'workflows', units: ['workflow'] },
  // watchQueue(): reads any transport for a UI; the UI entries (react, inspector) build on it.
  { name: 'bindings', units: ['watch'] },
  // The shared hosting / remote-call layer: method table, wire, client proxies, HTTP, the SQL host.
  { name: 'hosting', units: ['remote'] },
  // The core entry: what `leasehold` exports; it must not pull a platform (each is its own entry).
  { name: 'core entry', units: ['index.ts'] },
  // Each platform supplies a send and a serving loop over the layers below, and knows no other.
  // The two halves of an outbox's HTTP delivery sit here too, each its own entry: `http` (the
  // consume() handler a client runs) and `receiver` (the server's receipts, on the SQL seams).
  { name: 'platforms', units: ['browser', 'durable-object', 'vite', 'react', 'inspector', 'http', 'receiver'], siblings: false },
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

const UNITS = LAYERS.flatMap((layer) => layer.units);
/** The most specific unit holding `path` (a file listed by name, else its deepest listed folder), or its first segment when no unit holds it. */
function unitOf(path) {
  let best = null;
  for (const unit of UNITS) {
    if ((path === unit || path.startsWith(`${unit}/`)) && (best === null || unit.length > best.length)) best = unit;
  }
  return best ?? path.split('/')[0];
}
/** The folder of src/ that holds `path` (its first segment), or null for a file at the root of src/. */
const folderOf = (path) => (path.includes('/') ? path.split('/')[0] : null);
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
 * The edges that make two folders of src/ import each other, each with its rule. Every such edge
 * may run down the layers on its own (`transport/sqlite.ts` → `sqlite/driver.ts`, and
 * `sqlite/x.ts` → `transport/contract.ts`): the two folders are still one knot, which neither can
 * be read, tested or moved without. Folders nest: `sqlite/sql/` is part of `sqlite`.
 * @param {{ file: string, line: number, specifier: string, target: string }[]} edges edges that broke no other rule
 */
function twoWayEdges(edges) {
  const first = new Map();
  for (const edge of edges) {
    const key = `${folderOf(edge.file)}→${folderOf(edge.target)}`;
    if (!first.has(key)) first.set(key, edge);
  }
  return edges.flatMap((edge) => {
    const a = folderOf(edge.file);
    const b = folderOf(edge.target);
    const back = first.get(`${b}→${a}`);
    if (!back) return [];
    return [{ ...edge, rule: `${a} and ${b} import each other (${back.file}:${back.line} imports ${back.target}): folders import one way only, so move what both need into a layer below` }];
  });
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
  const found = [];
  // Edges between two folders that broke no rule of the layers: checked for two-way edges after.
  const across = [];
  const posix = (path) => path.split(sep).join('/');
  for (const file of sourceFiles(root)) {
    const from = posix(relative(root, file));
    // A file outside every layer is one finding, whatever it imports: place its folder first.
    if (layerOf(unitOf(from)) < 0) {
      found.push({ file: from, line: 1, specifier: '', target: '', rule: unplaced(unitOf(from)) });
      continue;
    }
    for (const { specifier, line } of importsOf(file, readFileSync(file, 'utf8'))) {
      let to;
      if (self.has(specifier)) to = { inside: true, path: self.get(specifier) };
      else if (specifier.startsWith('.')) {
        // `./x.js` names `./x.ts` (TypeScript's ESM convention); units decide, so a missing file does not matter.
        const path = posix(relative(root, resolve(dirname(file), specifier))).replace(/\.([cm]?)js$/, '.$1ts');
        to = path.startsWith('../') ? { inside: false, path: posix(relative(repoRoot, resolve(dirname(file), specifier))) } : { inside: true, path };
      } else continue; // a package
      const rule = ruleBroken(from, to);
      if (rule) found.push({ file: from, line, specifier, target: to.path, rule });
      else if (folderOf(from) !== null && folderOf(to.path) !== null && folderOf(from) !== folderOf(to.path)) across.push({ file: from, line, specifier, target: to.path });
    }
  }
  let allowed = 0;
  const violations = [...found, ...twoWayEdges(across)].filter((v) => {
    const key = known.findIndex(([a, b]) => a === v.file && b === v.target);
    if (key < 0) return true;
    used.add(key);
    allowed++;
    return false;
  });
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
  console.log(`imports: every edge of src/ runs down the layers, and no two folders import each other${allowed ? ` (${allowed} known, listed in KNOWN_VIOLATIONS: removed by the src/remote/ move)` : ''}`);
}
