/**
 * A SQLite database's leasehold schema as text, object by object, and a readable difference of
 * two such texts: what `schema/sqlite.sql` holds (`npm run schema:sqlite` writes it) and what
 * test/schema-source.test.ts compares fresh and upgraded databases with. Works over the driver
 * seam alone, so the Durable Object probe in workerd dumps its database the same way.
 */
import type { SqlDatabase } from '../../src/sqlite/driver.js';

/** Where the checked-in schema is, and the command that writes it again. */
export const SQLITE_SCHEMA_FILE = 'schema/sqlite.sql';
/** The receiver's tables (leasehold/receiver) in a server's SQLite database, alone. */
export const RECEIVER_SQLITE_SCHEMA_FILE = 'schema/receiver-sqlite.sql';
export const REGENERATE = 'npm run schema:sqlite';

interface SchemaRow {
  type: 'table' | 'index' | 'trigger';
  name: string;
  sql: string;
}

/**
 * Every `lh_*` table, index and trigger of `db` with its SQL, comments dropped and whitespace
 * laid out one way (the text SQLite keeps is the text that created the object, so an upgraded
 * database keeps its old indentation), tables and indexes by name, triggers in the order they
 * were created (the order SQLite runs them in), and the versions of `components`. Deterministic: two
 * databases with the same objects give the same text.
 */
export function dumpSqliteSchema(db: SqlDatabase, components: readonly string[] = ['core', 'host']): string {
  const rows = db
    .prepare("SELECT type, name, sql FROM sqlite_master WHERE name LIKE 'lh\\_%' ESCAPE '\\' AND name <> 'lh_user_version' AND sql IS NOT NULL ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, CASE type WHEN 'trigger' THEN rowid ELSE 0 END, name")
    .all<SchemaRow>();
  const versions = db.transaction(() => components.map((component) => `${component} ${db.schemaVersion(component)}`).join(', '));
  const blocks = rows.map((row) => `-- ${row.type} ${row.name}\n${layout(row.type, row.sql)};`);
  return [`-- leasehold's SQLite schema${components.includes('core') ? '' : `, ${components.join(', ')} alone`} (component versions: ${versions}). Written by \`${REGENERATE}\`; do not edit.`, ...blocks].join('\n\n') + '\n';
}

/**
 * What differs between two dumps, object by object: each object only one has, and for each
 * object both have with different SQL, its lines as `- expected` / `+ actual`. Empty when equal.
 */
export function schemaDiff(expected: string, actual: string): string {
  const a = blocksOf(expected);
  const b = blocksOf(actual);
  const out: string[] = [];
  for (const [name, text] of a) {
    const other = b.get(name);
    if (other === undefined) out.push(`missing: ${name}`);
    else if (other !== text) {
      const theirs = new Set(other.split('\n'));
      const ours = new Set(text.split('\n'));
      out.push(`differs: ${name}`, ...text.split('\n').filter((line) => !theirs.has(line)).map((line) => `  - ${line}`), ...other.split('\n').filter((line) => !ours.has(line)).map((line) => `  + ${line}`));
    }
  }
  for (const name of b.keys()) if (!a.has(name)) out.push(`unexpected: ${name}`);
  return out.join('\n');
}

function blocksOf(dump: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const block of dump.split('\n\n')) {
    const [head, ...body] = block.split('\n');
    blocks.set(head!.replace(/^-- /, ''), body.join('\n'));
  }
  return blocks;
}

/** `sql` with comments dropped and one layout: a table's columns one per line, a trigger's statements one per line. */
function layout(type: SchemaRow['type'], sql: string): string {
  const flat = tokens(sql).join(' ').replace(/\( /g, '(').replace(/ \)/g, ')').replace(/ ,/g, ',').replace(/ ;/g, ';');
  if (type === 'index') return flat;
  const parts: string[] = [];
  let start = 0;
  const cut = (end: number) => {
    parts.push(flat.slice(start, end).trim());
    start = end;
  };
  let depth = 0;
  for (let i = 0; i < flat.length; i++) {
    const c = flat[i]!;
    if (c === "'") i = flat.indexOf("'", i + 1);
    else if (c === '(') {
      depth++;
      if (type === 'table' && depth === 1) cut(i + 1);
    } else if (c === ')') {
      if (type === 'table' && depth === 1) cut(i);
      depth--;
    } else if (type === 'table' && depth === 1 && c === ',') cut(i + 1);
    else if (type === 'trigger' && depth === 0 && (c === ';' || (flat.startsWith('BEGIN', i - 4) && flat[i + 1] === ' '))) cut(i + 1);
  }
  cut(flat.length);
  const lines = parts.filter((part) => part !== '');
  return lines.map((line, i) => (i === 0 || i === lines.length - 1 ? line : `  ${line}`)).join('\n');
}

/** The tokens of `sql`: `--` comments dropped, whitespace runs as separators, string literals kept whole. */
function tokens(sql: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'") {
      const end = sql.indexOf("'", i + 1);
      current += sql.slice(i, end + 1);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end - 1;
    } else if (/\s/.test(c)) {
      if (current) out.push(current);
      current = '';
    } else current += c;
  }
  if (current) out.push(current);
  return out;
}
