/**
 * The core component's tables — the transport's and the store's — as numbered migrations: entry
 * i moves a database from version i to i + 1. Tables, indexes and data only: the triggers are
 * current source in `triggers.ts`, the statements in `transport.ts`, and `installSchema` drops
 * the triggers before these steps run and installs the current ones after them. Append only: a
 * released entry is frozen (databases out there ran it), which the fixtures of
 * `test/schema-source.test.ts` check by upgrading old files and comparing them with a fresh one
 * and with `schema/sqlite.sql`. None may end in a comment (a Durable Object refuses that).
 * Every table is prefixed `lh_` so leasehold can share a database with an application's own.
 * @internal
 */

export const CORE_TABLES: readonly string[] = [
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
  `,
  // 5: the triggers' UPDATEs became OR FAIL (see triggers.ts): no table changed.
  '',
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
  `,
  // 11: a claim's order became one past the largest on a group row or in `lh_counters.claims`
  // (see triggers.ts): no table changed. A database of version 10 has `claims` at its last
  // claim's order, which the new rule reads as it should.
  '',
  // 12: a message's revision (Lease.revision, part of Lease.deliveryId): 0 as published, one
  // more for each replace or merge that changes its event; a dead letter keeps it for a redrive.
  `
  ALTER TABLE lh_messages ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE lh_dead_letters ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
  `,
  // 13: coalescing windows (`debounceMs`, `maxWaitMs`). A message keeps the bound of its window,
  // set by the first publish with a window that met it; the window's end itself is `not_before`
  // (or `delay_until` behind an `after`), which every later publish of its key moves on. A
  // message published without a window leaves the column NULL, and no claim reads it.
  `
  ALTER TABLE lh_messages ADD COLUMN debounce_deadline INTEGER;
  `,
];
