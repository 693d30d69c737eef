/**
 * The leasehold schema of the transport and the store, the `'core'` component, and the
 * migration runner every component of a SQLite database shares. The transport and the store
 * keep one numbered, forward-only list (the browser host keeps both in one file, and their
 * tables grew together); a host that keeps tables of its own beside them (the call journal)
 * numbers its own list under its own component name, so a database holds only the tables of
 * the components that use it. Every table is prefixed `lh_` so leasehold can share a database
 * with an application's own tables.
 * @internal
 */
import { SchemaTooNewError } from '../errors.js';
import { BLOCKED } from '../locks.js';
import { CORE_COMPONENT, type SqlDatabase } from './driver.js';

/**
 * Brings `component`'s tables in `db` up to version `migrations.length`: entry i moves the
 * component from version i to i + 1, each in its own transaction together with its version
 * (see {@link SqlDatabase.setSchemaVersion}). An empty entry is a step that does nothing.
 * Safe to call from several connections at once: the version is read again
 * under the write lock before each step. Costs one version read when the schema is current.
 *
 * @throws SchemaTooNewError when the database holds a version above `migrations.length`
 *   (written by a newer leasehold); nothing is changed.
 * @throws TypeError when `component` is not a non-empty string or `migrations` not an array of strings.
 */
export function migrateComponent(db: SqlDatabase, component: string, migrations: readonly string[]): void {
  if (!Array.isArray(migrations) || migrations.some((m) => typeof m !== 'string')) {
    throw new TypeError('migrations must be an array of SQL strings');
  }
  const target = migrations.length;
  if (db.schemaVersion(component) === target) return;
  for (;;) {
    const done = db.transaction(() => {
      const version = db.schemaVersion(component);
      if (version > target) throw new SchemaTooNewError(`database ${JSON.stringify(db.filename)}`, component, version, target);
      if (version === target) return true;
      const step = migrations[version]!;
      // Not exec(''): a Durable Object refuses text without a statement.
      if (step !== '') db.exec(step);
      db.setSchemaVersion(component, version + 1);
      return false;
    });
    if (done) return;
  }
}

/**
 * Migration 8's trigger program, shared by its two triggers: message OLD.seq left the queue for
 * good, so each message waiting for it counts it off, gets its own delay back when it waited for
 * nothing else, and frees its group if it is the head (a blocked group's lock is BLOCKED).
 */
const satisfyWaits = `    UPDATE OR FAIL lh_messages SET waits = nullif(waits - 1, 0)
      WHERE queue_id = OLD.queue_id AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    UPDATE OR FAIL lh_messages SET not_before = delay_until, delay_until = NULL
      WHERE queue_id = OLD.queue_id AND waits IS NULL AND not_before = ${BLOCKED}
        AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    UPDATE OR FAIL lh_groups SET locked_until = (SELECT not_before FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND locked_until = ${BLOCKED} AND group_id IN (SELECT group_id FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
    DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq;`;

/**
 * The core component's migrations: each entry moves the schema from version i to i + 1. Append;
 * a released entry may change only where no database, old or new, ends up different from what
 * the later entries expect (entry 3). None may end in a comment (a Durable Object refuses that).
 */
const migrations: readonly string[] = [
  // 1: the transport. Times are integer milliseconds from the injected clock.
  //
  // Laid out for few written pages per call, because on OPFS every page a transaction dirties
  // costs a WAL frame, and every frame costs two file writes of ~0.3–0.6 ms each (measured in
  // Chromium 156 here). Only a group's head is ever leased or parked, so the lease lives on the
  // group row and a message row never changes after its publish: a claim writes 3 pages (the
  // group row, its claim-order index entry, the counters) and an ack 2 (the message's leaf, the
  // group row), against 1 for the cheapest possible write transaction, and a large event is never
  // rewritten by a claim.
  `
  CREATE TABLE lh_messages (
    group_id TEXT    NOT NULL,
    seq      INTEGER NOT NULL,                     -- from lh_counters: FIFO order, and half of a lease
    event    TEXT    NOT NULL,                     -- JSON
    key      TEXT,                                 -- idempotency key, unique per group while queued
    PRIMARY KEY (group_id, seq)                    -- a group's head is its first row
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX lh_messages_by_key ON lh_messages (group_id, key) WHERE key IS NOT NULL;

  CREATE TABLE lh_groups (
    group_id     TEXT    PRIMARY KEY,
    priority     INTEGER NOT NULL,                 -- set by the publish that created the group
    claim_order  INTEGER NOT NULL DEFAULT 0,       -- value of the claim counter at its last claim; 0 = never
    first_seq    INTEGER NOT NULL,                 -- seq that created the group: breaks ties among never-claimed groups
    head_attempt INTEGER NOT NULL DEFAULT 0,       -- deliveries of the head so far: the other half of a lease (fencing)
    holder       TEXT,                             -- the head's lease holder; NULL when the head is free or parked
    locked_until INTEGER                           -- end of the head's lease or park; NULL when the head is free
  ) WITHOUT ROWID;
  -- The claim walks groups in round-robin order and takes the first whose head is free or whose
  -- lock ran out: the walk passes only groups in flight (about one per worker), whatever the
  -- backlog. Only a claim moves a group in this index; an ack leaves it alone.
  CREATE INDEX lh_groups_by_claim_order ON lh_groups (claim_order, first_seq);

  CREATE TABLE lh_dead_letters (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order they died in
    seq      INTEGER NOT NULL UNIQUE,
    group_id TEXT    NOT NULL,
    priority INTEGER NOT NULL,
    event    TEXT    NOT NULL,
    attempt  INTEGER NOT NULL,
    dead_at  INTEGER NOT NULL
  );

  -- The last seq handed out (never reused, so a lease can never match a later message) and the
  -- claim counter behind the round-robin order.
  CREATE TABLE lh_counters (id INTEGER PRIMARY KEY CHECK (id = 1), last_seq INTEGER NOT NULL, claims INTEGER NOT NULL);
  INSERT INTO lh_counters (id, last_seq, claims) VALUES (1, 0, 0);

  -- Triggers keep the counters and the group rows in step with every statement that changes a
  -- message, so no code path can forget to, and a claim or an ack costs one statement from
  -- JavaScript instead of three (each crossing into wasm costs ~4 µs).
  CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE lh_counters SET last_seq = NEW.seq WHERE id = 1;
  END;
  CREATE TRIGGER lh_claim_counted AFTER UPDATE OF claim_order ON lh_groups BEGIN
    UPDATE lh_counters SET claims = NEW.claim_order WHERE id = 1;
  END;
  -- The head left (acked, dead-lettered): drop the group if it is empty, else its new head is
  -- free and has not been delivered yet.
  CREATE TRIGGER lh_head_removed AFTER DELETE ON lh_messages BEGIN
    DELETE FROM lh_groups WHERE group_id = OLD.group_id AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE group_id = OLD.group_id);
    UPDATE lh_groups SET head_attempt = 0, holder = NULL, locked_until = NULL WHERE group_id = OLD.group_id;
  END;
  `,
  // 2: the execution store.
  `
  CREATE TABLE lh_executions (
    id      TEXT    PRIMARY KEY,
    version INTEGER NOT NULL,
    body    TEXT    NOT NULL                       -- the execution as JSON, version excluded
  ) WITHOUT ROWID;

  CREATE TABLE lh_outbox (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    target_id TEXT,
    event     TEXT NOT NULL
  );

  CREATE TABLE lh_processed (
    execution_id TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    PRIMARY KEY (execution_id, event_id)
  ) WITHOUT ROWID;

  CREATE TABLE lh_timers (
    execution_id TEXT NOT NULL,
    path         TEXT NOT NULL,
    fire_at      REAL NOT NULL,
    PRIMARY KEY (execution_id, path)
  ) WITHOUT ROWID;
  CREATE INDEX lh_timers_by_fire_at ON lh_timers (fire_at);

  CREATE TABLE lh_spawns (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id TEXT NOT NULL,
    child_id  TEXT NOT NULL,
    root_path TEXT NOT NULL,
    context   TEXT NOT NULL
  );

  CREATE TABLE lh_trace (
    execution_id TEXT    NOT NULL,
    position     INTEGER NOT NULL,                 -- the store's own monotonic counter; trimming deletes the lowest
    step         TEXT    NOT NULL,                 -- JSON, with its index
    PRIMARY KEY (execution_id, position)
  ) WITHOUT ROWID;

  CREATE TABLE lh_trace_cursors (
    execution_id TEXT PRIMARY KEY,
    next_index   INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 3: was the browser host's call journal, `lh_calls`, created in every database. It is the
  // host's own now (component 'host', see remote/journal.ts), so a file, a Durable Object or a
  // Node database no host serves holds no journal. The step stays, empty, because the number is
  // released: every database at version 3 or later counts it, and entry 4 must stay entry 4.
  // Databases that ran it keep their `lh_calls`, which is why the host creates it IF NOT EXISTS;
  // and a database a browser host of this version made has it from the host's migration, so an
  // older host (a tab not yet reloaded) that opens it finds its journal where it looks.
  '',
  // 4: named queues and delayed publish. Every transport table gains a `queue_id` column leading
  // its keys, so queues in one file are independent (own seqs, claim counter, groups, keys, dead
  // letters) and each claim still walks one index range. The id is a small integer (the name
  // lives in lh_counters): binding a string costs a copy into wasm memory on every statement,
  // and integer keys compare faster. A message gains `not_before` (a
  // delayed publish), which the group row copies into `locked_until` whenever the message
  // becomes the head: the claim's walk needs no new condition, a delayed head is simply held.
  // The tables are rebuilt (SQLite cannot change a primary key in place); every queued message,
  // group and dead letter of version 3 moves to the queue 'default' unchanged.
  `
  DROP TRIGGER lh_seq_taken;
  DROP TRIGGER lh_claim_counted;
  DROP TRIGGER lh_head_removed;
  DROP INDEX lh_messages_by_key;
  DROP INDEX lh_groups_by_claim_order;
  ALTER TABLE lh_messages RENAME TO lh_messages_v3;
  ALTER TABLE lh_groups RENAME TO lh_groups_v3;
  ALTER TABLE lh_dead_letters RENAME TO lh_dead_letters_v3;
  ALTER TABLE lh_counters RENAME TO lh_counters_v3;

  CREATE TABLE lh_messages (
    queue_id   INTEGER NOT NULL,
    group_id   TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    event      TEXT    NOT NULL,                   -- JSON
    key        TEXT,
    not_before INTEGER,                            -- delayed publish: not deliverable while now <= this
    PRIMARY KEY (queue_id, group_id, seq)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX lh_messages_by_key ON lh_messages (queue_id, group_id, key) WHERE key IS NOT NULL;

  CREATE TABLE lh_groups (
    queue_id     INTEGER NOT NULL,
    group_id     TEXT    NOT NULL,
    priority     INTEGER NOT NULL,
    claim_order  INTEGER NOT NULL DEFAULT 0,
    first_seq    INTEGER NOT NULL,                 -- the head's seq while never claimed: breaks ties among those groups
    head_attempt INTEGER NOT NULL DEFAULT 0,
    holder       TEXT,                             -- NULL when the head is free, parked or delayed
    locked_until INTEGER,                          -- end of the head's lease, park or delay
    PRIMARY KEY (queue_id, group_id)
  ) WITHOUT ROWID;
  CREATE INDEX lh_groups_by_claim_order ON lh_groups (queue_id, claim_order, first_seq);

  CREATE TABLE lh_dead_letters (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    queue_id INTEGER NOT NULL,
    seq      INTEGER NOT NULL,
    group_id TEXT    NOT NULL,
    priority INTEGER NOT NULL,
    event    TEXT    NOT NULL,
    attempt  INTEGER NOT NULL,
    dead_at  INTEGER NOT NULL,
    UNIQUE (queue_id, seq)
  );

  -- Per queue: the last seq, the claim counter, and how many messages are queued, so stats()
  -- counts without a scan (count(*) walked every message: 10–40 ms at 20k queued). Every
  -- publish and claim writes this row anyway; a lone ack now writes it too (3 pages, was 2),
  -- while ackAndClaim and batches pay nothing extra.
  CREATE TABLE lh_counters (
    queue_id INTEGER PRIMARY KEY,
    name     TEXT    NOT NULL UNIQUE,              -- the queue's name ('default' unless named)
    last_seq INTEGER NOT NULL,
    claims   INTEGER NOT NULL,
    queued   INTEGER NOT NULL DEFAULT 0
  );

  INSERT INTO lh_messages (queue_id, group_id, seq, event, key) SELECT 1, group_id, seq, event, key FROM lh_messages_v3;
  INSERT INTO lh_groups (queue_id, group_id, priority, claim_order, first_seq, head_attempt, holder, locked_until)
    SELECT 1, group_id, priority, claim_order, first_seq, head_attempt, holder, locked_until FROM lh_groups_v3;
  INSERT INTO lh_dead_letters (id, queue_id, seq, group_id, priority, event, attempt, dead_at)
    SELECT id, 1, seq, group_id, priority, event, attempt, dead_at FROM lh_dead_letters_v3;
  INSERT INTO lh_counters (queue_id, name, last_seq, claims, queued) SELECT 1, 'default', last_seq, claims, (SELECT count(*) FROM lh_messages_v3) FROM lh_counters_v3;
  DROP TABLE lh_messages_v3;
  DROP TABLE lh_groups_v3;
  DROP TABLE lh_dead_letters_v3;
  DROP TABLE lh_counters_v3;

  CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE lh_counters SET last_seq = NEW.seq, queued = queued + 1 WHERE queue_id = NEW.queue_id;
  END;
  -- A message left. If it was the head (acked, dead-lettered, cancelled): drop the group if it
  -- is empty, else its new head has not been delivered yet and is free, or held by its own
  -- delay. A message cancelled from behind the head changes nothing else. One trigger, so a
  -- delete runs one trigger program, not two.
  CREATE TRIGGER lh_message_removed AFTER DELETE ON lh_messages BEGIN
    UPDATE lh_counters SET queued = queued - 1 WHERE queue_id = OLD.queue_id;
    DELETE FROM lh_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
      AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
    UPDATE lh_groups SET head_attempt = 0, holder = NULL,
      locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
        AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq < OLD.seq);
  END;
  CREATE TRIGGER lh_claim_counted AFTER UPDATE OF claim_order ON lh_groups BEGIN
    UPDATE lh_counters SET claims = NEW.claim_order WHERE queue_id = NEW.queue_id;
  END;
  `,
  // 5: the same triggers, their UPDATEs OR FAIL. A statement that fires a trigger writes two
  // tables; while any of its writes could ABORT on a constraint, SQLite opens a statement
  // journal for it and copies every page it touches there first, so that an ABORT can undo the
  // statement alone. That copying was ~3 µs of the ~12 µs an ack costs in sqlite-wasm. Nothing
  // these UPDATEs write can violate a constraint, and every failing call rolls back its whole
  // transaction or savepoint anyway. Same rows, same effects: only the triggers are replaced.
  `
  DROP TRIGGER lh_seq_taken;
  DROP TRIGGER lh_message_removed;
  DROP TRIGGER lh_claim_counted;
  CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET last_seq = NEW.seq, queued = queued + 1 WHERE queue_id = NEW.queue_id;
  END;
  CREATE TRIGGER lh_message_removed AFTER DELETE ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET queued = queued - 1 WHERE queue_id = OLD.queue_id;
    DELETE FROM lh_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
      AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
    UPDATE OR FAIL lh_groups SET head_attempt = 0, holder = NULL,
      locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
        AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq < OLD.seq);
  END;
  CREATE TRIGGER lh_claim_counted AFTER UPDATE OF claim_order ON lh_groups BEGIN
    UPDATE OR FAIL lh_counters SET claims = NEW.claim_order WHERE queue_id = NEW.queue_id;
  END;
  `,
  // 6: dead letters that hold their group, and why a message died. A queue keeps its
  // `on_dead_letter` policy (NULL until a transport names one: it then works as 'continue', as
  // every queue did before, and the 'default' queue's row exists from entry 1 on); a held group keeps its row (even with no message left, so later
  // publishes wait too) with `held_seq` naming the dead letter and `locked_until` at HELD (later
  // than any clock), which the claim's walk passes over like a park: no new condition on the
  // claim's path. The removal trigger leaves a held group alone. A redrive to the head puts the
  // message back under its own seq, so the seq trigger keeps the largest seq handed out.
  `
  ALTER TABLE lh_groups ADD COLUMN held_seq INTEGER;
  ALTER TABLE lh_dead_letters ADD COLUMN reason TEXT;
  ALTER TABLE lh_counters ADD COLUMN on_dead_letter TEXT;
  DROP TRIGGER lh_seq_taken;
  DROP TRIGGER lh_message_removed;
  CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET last_seq = max(last_seq, NEW.seq), queued = queued + 1 WHERE queue_id = NEW.queue_id;
  END;
  CREATE TRIGGER lh_message_removed AFTER DELETE ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET queued = queued - 1 WHERE queue_id = OLD.queue_id;
    DELETE FROM lh_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL
      AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
    UPDATE OR FAIL lh_groups SET head_attempt = 0, holder = NULL,
      locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1)
      WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL
        AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq < OLD.seq);
  END;
  `,
  // 7: pause and resume, of a queue or of one group. A queue's pause is a flag on its counters
  // row. A group's pause is kept by name in lh_paused_groups (a group row comes and goes with
  // its messages, and a pause may name a group before its first publish), and copied onto the
  // group row while one exists, where the claim's walk reads it beside the lock it reads
  // already. The lock itself stays as it is, so a lease in flight keeps its expiry and its
  // holder may still ack it.
  `
  ALTER TABLE lh_groups ADD COLUMN paused INTEGER;
  ALTER TABLE lh_counters ADD COLUMN paused INTEGER;
  CREATE TABLE lh_paused_groups (
    queue_id INTEGER NOT NULL,
    group_id TEXT    NOT NULL,
    PRIMARY KEY (queue_id, group_id)
  ) WITHOUT ROWID;
  `,
  // 8: a message that waits for others to be gone (`after`). It counts the named messages still
  // in the queue (`waits`) and carries the delay BLOCKED (later than any clock) in `not_before`,
  // its own delay waiting in `delay_until`: every path that gives a group its new head's delay
  // (the removal trigger, a hold lifted, a new group) blocks the group with no change, and the
  // claim's walk passes it like a parked one. A named message is `watched`; when it leaves the
  // queue (acked, cancelled: not into the dead letters), or its dead letter is discarded, one
  // trigger program counts it off its waiters and frees a group whose head waited for it last.
  // A redrive moves the waits to the message it puts back before the dead letter goes.
  `
  ALTER TABLE lh_messages ADD COLUMN waits INTEGER;
  ALTER TABLE lh_messages ADD COLUMN delay_until INTEGER;
  ALTER TABLE lh_messages ADD COLUMN watched INTEGER;
  CREATE TABLE lh_waits (
    queue_id INTEGER NOT NULL,
    on_seq   INTEGER NOT NULL,                     -- the message waited for
    group_id TEXT    NOT NULL,                     -- the waiting message's group and seq
    seq      INTEGER NOT NULL,
    PRIMARY KEY (queue_id, on_seq, seq)
  ) WITHOUT ROWID;
  CREATE TRIGGER lh_waited_gone AFTER DELETE ON lh_messages
    WHEN OLD.watched IS NOT NULL AND NOT EXISTS (SELECT 1 FROM lh_dead_letters WHERE queue_id = OLD.queue_id AND seq = OLD.seq) BEGIN
${satisfyWaits}
  END;
  CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON lh_dead_letters
    WHEN NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq = OLD.seq) BEGIN
${satisfyWaits}
  END;
  CREATE TRIGGER lh_waiter_gone AFTER DELETE ON lh_messages WHEN OLD.waits IS NOT NULL BEGIN
    DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND seq = OLD.seq;
  END;
  `,
  // 9: why a message failed. A nack may give a reason (consume() gives the handler's error
  // message); it is kept on the message, written only by such a nack, and a dead letter that
  // ran out of attempts takes it as its reason. On the message rather than its group: it leaves
  // with the message, so no path that changes a group's head has to clear it.
  `
  ALTER TABLE lh_messages ADD COLUMN last_error TEXT;
  `,
  // 10: loss detection. The database gets its origin, a random id made here (with the tables, in
  // a new database), and each queue a counter of publishes: a message created by a publish takes
  // last_counter + 1 in the publish's own transaction (so a rollback spends none), a dead letter
  // keeps its number for a redrive, and a claim reads the lowest number still queued through an
  // index by counter. That index costs a publish and an ack one more b-tree entry each, the
  // price of an exact low-water mark (a scan of the queue per claim is not). Messages and dead
  // letters already there are numbered by their seq, and the counter goes on from the last seq.
  `
  CREATE TABLE lh_origin (id INTEGER PRIMARY KEY CHECK (id = 1), origin TEXT NOT NULL);
  INSERT INTO lh_origin (id, origin) VALUES (1, lower(hex(randomblob(16))));
  ALTER TABLE lh_messages ADD COLUMN counter INTEGER;
  ALTER TABLE lh_dead_letters ADD COLUMN counter INTEGER;
  ALTER TABLE lh_counters ADD COLUMN last_counter INTEGER NOT NULL DEFAULT 0;
  UPDATE lh_messages SET counter = seq;
  UPDATE lh_dead_letters SET counter = seq;
  UPDATE lh_counters SET last_counter = last_seq;
  CREATE INDEX lh_messages_by_counter ON lh_messages (queue_id, counter);
  DROP TRIGGER lh_seq_taken;
  CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
    UPDATE OR FAIL lh_counters SET last_seq = max(last_seq, NEW.seq), last_counter = max(last_counter, NEW.counter), queued = queued + 1
      WHERE queue_id = NEW.queue_id;
  END;
  `,
  // 11: a claim no longer writes the counters row. Its claim order was `claims + 1`, kept by a
  // trigger, which made the counters row a third page in every claim's commit (on better-sqlite3
  // a WAL frame, 2 pwrites and a share of each checkpoint). The largest claim order still on a
  // group row is one seek to the end of the claim-order index, a leaf the claim writes anyway;
  // `claims` now keeps only the largest order of a group that was deleted (emptied, discarded), so
  // that the next claim still counts on from every claim before it: its order is
  // max(claims, that index's last order) + 1. A database of version 10 has `claims` at its last
  // claim's order, which satisfies this already.
  `
  DROP TRIGGER lh_claim_counted;
  CREATE TRIGGER lh_claimed_group_gone AFTER DELETE ON lh_groups WHEN OLD.claim_order > 0 BEGIN
    UPDATE OR FAIL lh_counters SET claims = max(claims, OLD.claim_order) WHERE queue_id = OLD.queue_id;
  END;
  `,
];

/** The core schema version this build of leasehold writes. */
export const SCHEMA_VERSION = migrations.length;

/**
 * Brings the transport and store tables of `db` up to {@link SCHEMA_VERSION}.
 * @throws SchemaTooNewError when the database was written by a newer leasehold.
 */
export function migrate(db: SqlDatabase): void {
  migrateComponent(db, CORE_COMPONENT, migrations);
}
