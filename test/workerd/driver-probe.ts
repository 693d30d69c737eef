/**
 * A Worker for test/durable-object-driver.test.ts: a Durable Object that runs the driver seam's
 * checks inside workerd, on the object's real SQLite storage, and answers what it saw as JSON
 * for the test to assert on. `POST /<object>/<probe>`; each probe gets a fresh object.
 */
import { DurableObject } from 'cloudflare:workers';
import { HostCore } from '../../src/browser/core.js';
import { migrateHost } from '../../src/remote/journal.js';
import { errorToWire } from '../../src/remote/wire.js';
import { fromDurableObjectStorage } from '../../src/durable-object/driver.js';
import type { SqlDatabase } from '../../src/sqlite/driver.js';
import { migrateComponent } from '../../src/sqlite/migrate.js';
import { SCHEMA_VERSION } from '../../src/sqlite/schema.js';
import { dumpSqliteSchema } from '../support/sqlite-schema.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';

/** The tables, rows and sequences of a database, as dumped by the test from a SQLite file. */
export interface Dump {
  schema: { type: string; name: string; sql: string }[];
  rows: Record<string, Record<string, unknown>[]>;
}

/** What a throw looked like, or null for none. */
function thrown(body: () => unknown): { name: string; message: string } | null {
  try {
    body();
    return null;
  } catch (error) {
    return { name: (error as Error).name, message: (error as Error).message };
  }
}

function recordingExecs(db: SqlDatabase): { db: SqlDatabase; execs: string[] } {
  const execs: string[] = [];
  return { db: Object.assign(Object.create(db) as SqlDatabase, { exec: (sql: string) => (execs.push(sql), db.exec(sql)) }), execs };
}

export class DriverProbe extends DurableObject {
  readonly #sql = this.ctx.storage.sql;

  #tables(): string[] {
    return this.#sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' ORDER BY name").toArray().map((r) => String(r.name));
  }

  async fetch(request: Request): Promise<Response> {
    const probe = new URL(request.url).pathname.split('/')[2];
    const body = request.method === 'POST' ? await request.json() : undefined;
    const db = fromDurableObjectStorage(this.ctx.storage);
    switch (probe) {
      case 'versions':
        return Response.json(this.#versions(db));
      case 'migrate':
        return Response.json(this.#migrate(db));
      case 'too-new':
        return Response.json(this.#tooNew(db));
      case 'old-v5':
        return Response.json(await this.#oldV5(db, body as Dump & { claimId: string; snapshotNow: number }));
      default:
        return new Response('no such probe', { status: 404 });
    }
  }

  #versions(db: SqlDatabase & { rowsWritten: number }) {
    const fresh = [db.schemaVersion('core'), db.schemaVersion('host')];
    const tablesAfterRead = this.#tables();
    const outside = thrown(() => db.setSchemaVersion('core', 1));
    db.transaction(() => {
      db.setSchemaVersion('core', 5);
      db.setSchemaVersion('host', 2);
    });
    const written = [db.schemaVersion('core'), db.schemaVersion('host'), db.schemaVersion('other')];
    const coreRows = this.#sql.exec('SELECT id, version FROM lh_user_version').toArray();
    const componentRows = this.#sql.exec('SELECT component, version FROM lh_schema_versions').toArray();
    const rolledBack = thrown(() =>
      db.transaction(() => {
        db.setSchemaVersion('core', 6);
        db.setSchemaVersion('other', 1);
        throw new Error('undo');
      }),
    );
    const afterRollback = [db.schemaVersion('core'), db.schemaVersion('other')];
    db.transaction(() => {
      thrown(() =>
        db.savepoint!(() => {
          db.setSchemaVersion('host', 3);
          throw new Error('this call only');
        }),
      );
    });
    const afterSavepoint = db.schemaVersion('host');
    const bad = [
      thrown(() => db.schemaVersion('')),
      thrown(() => db.transaction(() => db.setSchemaVersion('core', -1))),
      thrown(() => db.transaction(() => db.setSchemaVersion('core', 1.5))),
    ].map((e) => e?.name);
    // run() reports rows changed, whatever the statement's text looks like.
    db.exec('CREATE TABLE t (v INTEGER)');
    const changes = [
      db.prepare('INSERT INTO t (v) VALUES (1), (2)').run(),
      db.prepare('  insert into t (v) values (3)').run(),
      db.prepare('/* a comment first */ UPDATE t SET v = v + 1 WHERE v > 1').run(),
      db.prepare('DELETE FROM t').run(),
    ];
    db.close();
    const closed = thrown(() => db.schemaVersion('core'))?.name;
    return { fresh, tablesAfterRead, outside, written, coreRows, componentRows, rolledBack, afterRollback, afterSavepoint, bad, changes, watchCommits: typeof db.watchCommits, closed };
  }

  #migrate(raw: SqlDatabase) {
    const { db, execs } = recordingExecs(raw);
    const steps = ['CREATE TABLE a (x)', '', 'CREATE TABLE b (y)'];
    migrateComponent(db, 'app', steps);
    migrateComponent(db, 'app', steps);
    const version = db.schemaVersion('app');
    const failed = thrown(() => migrateComponent(db, 'app', [...steps, 'CREATE TABLE c (z); INSERT INTO nowhere VALUES (1)']));
    // The transport and store on a fresh object: the core's steps run (none of them empty or
    // ending in a comment, which the object's exec refuses), and no journal is made.
    new SqliteTransport(raw);
    new SqliteStore(raw);
    const [core, host] = [raw.schemaVersion('core'), raw.schemaVersion('host')];
    const tables = this.#tables();
    // With the journal a host adds, the whole schema as schema/sqlite.sql describes it.
    migrateHost(raw);
    return { execs, version, failed, afterFailure: db.schemaVersion('app'), tables, core, host, schema: dumpSqliteSchema(raw) };
  }

  #tooNew(db: SqlDatabase) {
    db.transaction(() => db.setSchemaVersion('core', SCHEMA_VERSION + 1));
    let core: unknown = null;
    try {
      new SqliteTransport(db);
    } catch (error) {
      core = errorToWire(error);
    }
    const tables = this.#tables();
    db.transaction(() => {
      db.setSchemaVersion('core', SCHEMA_VERSION);
      db.setSchemaVersion('host', 99);
    });
    let host: unknown = null;
    try {
      migrateHost(db);
    } catch (error) {
      host = errorToWire(error);
    }
    return { core, host, tables };
  }

  /**
   * Rebuilds, in this object, a database as leasehold at schema version 5 left it in a Durable
   * Object (the file's tables and rows, its one version number in `lh_user_version`), then opens
   * it with this leasehold.
   */
  async #oldV5(raw: SqlDatabase, dump: Dump & { claimId: string; snapshotNow: number }) {
    // Tables, then their rows, then indexes and triggers (which would fire on the inserts).
    const ordered = [...dump.schema.filter((s) => s.type === 'table'), ...dump.schema.filter((s) => s.type !== 'table')];
    for (const entry of ordered) {
      if (entry.type !== 'table') {
        this.#sql.exec(entry.sql);
        continue;
      }
      // sqlite_sequence is SQLite's own: inserting the rows with their ids brings it along.
      if (entry.name === 'sqlite_sequence') continue;
      this.#sql.exec(entry.sql);
      for (const row of dump.rows[entry.name] ?? []) {
        const columns = Object.keys(row);
        this.#sql.exec(`INSERT INTO ${entry.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, ...Object.values(row));
      }
    }
    // Exactly as that version's driver kept the number here (it refused PRAGMA user_version).
    this.#sql.exec('CREATE TABLE lh_user_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)');
    this.#sql.exec('INSERT INTO lh_user_version (id, version) VALUES (1, 5)');

    const { db, execs } = recordingExecs(raw);
    const core = new HostCore(db);
    const call = (target: 'transport' | 'store', method: string, args: unknown[], id: string, now: number) => core.serve({ kind: 'call', id, target, method, args, now });
    const retried = await call('transport', 'claim', ['w1', 60_000, undefined], dump.claimId, dump.snapshotNow);
    const snapshot = await call('transport', 'inspect', [], 'inspect-1', dump.snapshotNow);
    const loaded = await call('store', 'load', ['order-1'], 'load-1', dump.snapshotNow);
    const publish = await call('transport', 'publish', ['g9', 'new', undefined], 'pub-new', dump.snapshotNow);
    const publishAgain = await call('transport', 'publish', ['g9', 'new', undefined], 'pub-new', dump.snapshotNow);
    const versions = [raw.schemaVersion('core'), raw.schemaVersion('host')];
    const coreRows = this.#sql.exec('SELECT id, version FROM lh_user_version').toArray();
    const schema = dumpSqliteSchema(raw);
    await core.close();
    const again = recordingExecs(fromDurableObjectStorage(this.ctx.storage));
    new HostCore(again.db);
    return { execs, retried, snapshot, loaded, publish, publishAgain, versions, coreRows, schema, execsOnReopen: again.execs };
  }
}

interface Env {
  QUEUE: { idFromName(name: string): unknown; get(id: unknown): { fetch(request: Request): Promise<Response> } };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const name = new URL(request.url).pathname.split('/')[1];
    if (!name || name === 'ready') return new Response('ready');
    return env.QUEUE.get(env.QUEUE.idFromName(name)).fetch(request);
  },
};
