// Run by the pack test in a scratch app that installed leasehold without any driver: each
// entry imports fine, and opening a database rejects with leasehold's DRIVER_MISSING error.
// Prints one JSON line: per driver, the error's class, code and message.
import { LeaseholdError } from 'leasehold';
import { openBetterSqliteDatabase } from 'leasehold/better-sqlite3';
import { openWasmDatabase } from 'leasehold/sqlite-wasm';

const attempts = { 'better-sqlite3': () => openBetterSqliteDatabase('queue.db'), 'sqlite-wasm': () => openWasmDatabase() };
const results = {};
for (const [name, open] of Object.entries(attempts)) {
  try {
    await open();
    results[name] = { opened: true };
  } catch (error) {
    results[name] = { leaseholdError: error instanceof LeaseholdError, code: error.code, message: error.message };
  }
}
console.log(JSON.stringify(results));
