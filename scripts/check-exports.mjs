// Imports every entry of package.json's exports map through Node's own resolution (a package
// may import itself by name), so a broken map or a missing build output fails the test run;
// and requires each one from CommonJS: on a Node that can require() an ES module (20.19+,
// 22.12+: the "module-sync" condition) that loads the entry itself; on an older one it must fail
// with leasehold's ESM-only message saying what to do.
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const expected = {
  '.': ['LeaseholdError', 'ManualClock', 'InMemoryTransport', 'SqliteTransport', 'InMemoryStore', 'SqliteStore', 'spreadTransport', 'groupHash', 'MAX_BATCH', 'DEFAULT_QUEUE'],
  './sqlite-wasm': ['openWasmDatabase'],
  './better-sqlite3': ['openBetterSqliteDatabase'],
  './browser': ['openBrowserDatabase', 'ROWS_SHOWN'],
  './vite': ['leasehold'],
  './durable-object/client': ['connectLeasehold'],
  './postgres': ['PostgresTransport', 'PostgresStore', 'fromPg', 'fromPglite'],
  './watch': ['watchQueue', 'queueStatus', 'groupStatus', 'syncState', 'GROUP_STATES'],
  './workflow': ['defineWorkflow', 'Workflows', 'WorkflowNondeterminismError', 'ChildWorkflowError'],
  './schedule': ['Schedules', 'CATCH_UP', 'slotEventId'],
  './inspector': ['defineInspector', 'httpTransport', 'QueueView', 'DeadLettersView', 'TimelinePanel', 'defaultPreview', 'THEME_CSS', 'VIEW_CSS'],
  './inspector/http': ['inspectorHandler'],
  './react': ['useQueueStats', 'usePendingCount', 'useGroupMessages', 'useDeadLetters', 'useSyncStatus', 'useGroupStatus'],
  './http': ['httpDelivery', 'reportLostOrigin'],
  './receiver': ['createReceiver', 'Refusal', 'sqliteReceipts', 'postgresReceipts', 'toNodeListener'],
};
// Entries whose exports are exactly the list: the inspector's grew for the demo once (drawing
// helpers, its timeline model), so a name added to it must be added here on purpose.
const exact = new Set(['./inspector']);
// Entries that import an optional peer: imported only where the peer is installed (their files
// and require() are checked everywhere).
const peerOf = { './react': 'react' };
const installed = (name) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
};
// Entries that load only inside their runtime: their files and require() are checked, not an import.
const runtimeOnly = { './durable-object': 'it imports cloudflare:workers, which exists only in workerd' };
let failed = false;
for (const [entry, target] of Object.entries(pkg.exports)) {
  if (entry === './package.json') continue;
  for (const [condition, file] of Object.entries(target)) {
    if (!existsSync(new URL(`../${file}`, import.meta.url))) {
      console.error(`exports["${entry}"].${condition}: ${file} does not exist`);
      failed = true;
    }
  }
  const specifier = entry === '.' ? pkg.name : `${pkg.name}/${entry.slice(2)}`;
  // leasehold/vite is required by Vite 8 itself (which needs such a Node); the durable-object
  // entry imports cloudflare:workers, which Node has not, so it keeps the message everywhere.
  // An entry without "module-sync" (the UI entries, which run in browsers) keeps the message too.
  const requirable = entry === './vite' || (process.features.require_module === true && !runtimeOnly[entry] && 'module-sync' in target);
  try {
    createRequire(import.meta.url)(specifier);
    if (!requirable) {
      console.error(`require('${specifier}') did not fail: this Node cannot require() an ES module, so it must get the ESM-only message`);
      failed = true;
    }
  } catch (error) {
    if (requirable || error.code !== 'ERR_LEASEHOLD_ESM_ONLY') {
      console.error(`require('${specifier}') failed with ${error.code ?? error}${requirable ? '' : ", not leasehold's ESM-only message"}`);
      failed = true;
    }
  }
  if (runtimeOnly[entry]) continue;
  if (peerOf[entry] && !installed(peerOf[entry])) {
    console.log(`${specifier}: not imported, its optional peer ${peerOf[entry]} is not installed here`);
    continue;
  }
  // The browser entry touches DOM globals only when called, so importing it in Node is fine.
  const module = await import(specifier);
  for (const name of expected[entry] ?? []) {
    if (!(name in module)) {
      console.error(`${specifier} does not export ${name}`);
      failed = true;
    }
  }
  if (exact.has(entry)) {
    for (const name of Object.keys(module)) {
      if (!expected[entry].includes(name)) {
        console.error(`${specifier} exports ${name}, which is not in its list in scripts/check-exports.mjs: public on purpose?`);
        failed = true;
      }
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
