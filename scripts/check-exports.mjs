// Imports every entry of package.json's exports map through Node's own resolution (a package
// may import itself by name), so a broken map or a missing build output fails the test run.
import { readFileSync, existsSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const expected = {
  '.': ['LeaseholdError', 'ManualClock', 'InMemoryTransport', 'SqliteTransport', 'InMemoryStore', 'SqliteStore'],
  './sqlite-wasm': ['openWasmDatabase'],
  './better-sqlite3': ['openBetterSqliteDatabase'],
  './browser': [],
};
let failed = false;
for (const [entry, target] of Object.entries(pkg.exports)) {
  if (entry === './package.json') continue;
  const types = new URL(`../${target.types}`, import.meta.url);
  if (!existsSync(types)) {
    console.error(`exports["${entry}"].types: ${target.types} does not exist`);
    failed = true;
  }
  const specifier = entry === '.' ? pkg.name : `${pkg.name}/${entry.slice(2)}`;
  // The browser entry touches DOM globals only when called, so importing it in Node is fine.
  const module = await import(specifier);
  for (const name of expected[entry] ?? []) {
    if (!(name in module)) {
      console.error(`${specifier} does not export ${name}`);
      failed = true;
    }
  }
}
// The browser client starts its worker by URL, relative to itself: the file must ship beside it.
if (!existsSync(new URL('../dist/browser/host.worker.js', import.meta.url))) {
  console.error('dist/browser/host.worker.js is missing: openBrowserDatabase could not start its worker');
  failed = true;
}
if (failed) process.exit(1);
console.log(`exports: ${Object.keys(pkg.exports).length - 1} entries resolve and export what they should`);
