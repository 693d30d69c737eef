/**
 * leasehold/browser: a durable queue and execution store in the browser. Each tab runs one host
 * worker per database; the tabs elect one owner of the OPFS file and the others forward to it.
 */
export { openBrowserDatabase } from './client.js';
export type { BrowserDatabase, BrowserDatabaseOptions, HostVersion, LostDatabaseDetail, OpenedAs, OutdatedDetail, OwnerInfo, SqlGroupRow, SqlTraceEntry, SqlTraceStatement, StorageFacts } from './client.js';
export { ROWS_SHOWN } from './trace.js';
