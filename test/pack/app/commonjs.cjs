// Run by the pack test: a CommonJS consumer. Prints what require() of each entry gives.
const results = {};
for (const entry of ['leasehold', 'leasehold/browser', 'leasehold/sqlite-wasm', 'leasehold/better-sqlite3', 'leasehold/vite']) {
  try {
    results[entry] = { loaded: true, exports: Object.keys(require(entry)) };
  } catch (error) {
    results[entry] = { code: error.code, message: error.message };
  }
}
console.log(JSON.stringify(results));
