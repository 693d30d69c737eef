-- leasehold's SQLite schema (component versions: core 13, host 1). Written by `npm run schema:sqlite`; do not edit.

-- table lh_calls
CREATE TABLE lh_calls (
  id TEXT PRIMARY KEY,
  result TEXT,
  at INTEGER NOT NULL
) WITHOUT ROWID;

-- table lh_counters
CREATE TABLE lh_counters (
  queue_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  last_seq INTEGER NOT NULL,
  claims INTEGER NOT NULL,
  queued INTEGER NOT NULL DEFAULT 0,
  on_dead_letter TEXT,
  paused INTEGER,
  last_counter INTEGER NOT NULL DEFAULT 0
);

-- table lh_dead_letters
CREATE TABLE lh_dead_letters (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  queue_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  group_id TEXT NOT NULL,
  priority INTEGER NOT NULL,
  event TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  dead_at INTEGER NOT NULL,
  reason TEXT,
  counter INTEGER,
  revision INTEGER NOT NULL DEFAULT 0,
  UNIQUE (queue_id, seq)
);

-- table lh_executions
CREATE TABLE lh_executions (
  id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  body TEXT NOT NULL
) WITHOUT ROWID;

-- table lh_groups
CREATE TABLE lh_groups (
  queue_id INTEGER NOT NULL,
  group_id TEXT NOT NULL,
  priority INTEGER NOT NULL,
  claim_order INTEGER NOT NULL DEFAULT 0,
  first_seq INTEGER NOT NULL,
  head_attempt INTEGER NOT NULL DEFAULT 0,
  holder TEXT,
  locked_until INTEGER,
  held_seq INTEGER,
  paused INTEGER,
  PRIMARY KEY (queue_id, group_id)
) WITHOUT ROWID;

-- table lh_messages
CREATE TABLE lh_messages (
  queue_id INTEGER NOT NULL,
  group_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event TEXT NOT NULL,
  key TEXT,
  not_before INTEGER,
  waits INTEGER,
  delay_until INTEGER,
  watched INTEGER,
  last_error TEXT,
  counter INTEGER,
  revision INTEGER NOT NULL DEFAULT 0,
  debounce_deadline INTEGER,
  PRIMARY KEY (queue_id, group_id, seq)
) WITHOUT ROWID;

-- table lh_origin
CREATE TABLE lh_origin (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  origin TEXT NOT NULL
);

-- table lh_outbox
CREATE TABLE lh_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  target_id TEXT,
  event TEXT NOT NULL
);

-- table lh_paused_groups
CREATE TABLE lh_paused_groups (
  queue_id INTEGER NOT NULL,
  group_id TEXT NOT NULL,
  PRIMARY KEY (queue_id, group_id)
) WITHOUT ROWID;

-- table lh_processed
CREATE TABLE lh_processed (
  execution_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  PRIMARY KEY (execution_id, event_id)
) WITHOUT ROWID;

-- table lh_schema_versions
CREATE TABLE lh_schema_versions (
  component TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;

-- table lh_spawns
CREATE TABLE lh_spawns (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_id TEXT NOT NULL,
  child_id TEXT NOT NULL,
  root_path TEXT NOT NULL,
  context TEXT NOT NULL
);

-- table lh_timers
CREATE TABLE lh_timers (
  execution_id TEXT NOT NULL,
  path TEXT NOT NULL,
  fire_at REAL NOT NULL,
  PRIMARY KEY (execution_id, path)
) WITHOUT ROWID;

-- table lh_trace
CREATE TABLE lh_trace (
  execution_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  step TEXT NOT NULL,
  PRIMARY KEY (execution_id, position)
) WITHOUT ROWID;

-- table lh_trace_cursors
CREATE TABLE lh_trace_cursors (
  execution_id TEXT PRIMARY KEY,
  next_index INTEGER NOT NULL
) WITHOUT ROWID;

-- table lh_waits
CREATE TABLE lh_waits (
  queue_id INTEGER NOT NULL,
  on_seq INTEGER NOT NULL,
  group_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (queue_id, on_seq, seq)
) WITHOUT ROWID;

-- index lh_groups_by_claim_order
CREATE INDEX lh_groups_by_claim_order ON lh_groups (queue_id, claim_order, first_seq);

-- index lh_messages_by_counter
CREATE INDEX lh_messages_by_counter ON lh_messages (queue_id, counter);

-- index lh_messages_by_key
CREATE UNIQUE INDEX lh_messages_by_key ON lh_messages (queue_id, group_id, key) WHERE key IS NOT NULL;

-- index lh_timers_by_fire_at
CREATE INDEX lh_timers_by_fire_at ON lh_timers (fire_at);

-- trigger lh_message_removed
CREATE TRIGGER lh_message_removed AFTER DELETE ON lh_messages BEGIN
  UPDATE OR FAIL lh_counters SET queued = queued - 1 WHERE queue_id = OLD.queue_id;
  DELETE FROM lh_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
  UPDATE OR FAIL lh_groups SET head_attempt = 0, holder = NULL, locked_until = (SELECT not_before FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1) WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND held_seq IS NULL AND NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq < OLD.seq);
END;

-- trigger lh_waited_gone
CREATE TRIGGER lh_waited_gone AFTER DELETE ON lh_messages WHEN OLD.watched IS NOT NULL AND NOT EXISTS (SELECT 1 FROM lh_dead_letters WHERE queue_id = OLD.queue_id AND seq = OLD.seq) BEGIN
  UPDATE OR FAIL lh_messages SET waits = CASE WHEN waits = 1 THEN NULL ELSE waits - 1 END WHERE queue_id = OLD.queue_id AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  UPDATE OR FAIL lh_messages SET not_before = delay_until, delay_until = NULL WHERE queue_id = OLD.queue_id AND waits IS NULL AND not_before = 9007199254740990 AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  UPDATE OR FAIL lh_groups SET locked_until = (SELECT not_before FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1) WHERE queue_id = OLD.queue_id AND locked_until = 9007199254740990 AND group_id IN (SELECT group_id FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq;
END;

-- trigger lh_dead_letter_gone
CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON lh_dead_letters WHEN NOT EXISTS (SELECT 1 FROM lh_messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND seq = OLD.seq) BEGIN
  UPDATE OR FAIL lh_messages SET waits = CASE WHEN waits = 1 THEN NULL ELSE waits - 1 END WHERE queue_id = OLD.queue_id AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  UPDATE OR FAIL lh_messages SET not_before = delay_until, delay_until = NULL WHERE queue_id = OLD.queue_id AND waits IS NULL AND not_before = 9007199254740990 AND (group_id, seq) IN (SELECT group_id, seq FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  UPDATE OR FAIL lh_groups SET locked_until = (SELECT not_before FROM lh_messages m WHERE m.queue_id = lh_groups.queue_id AND m.group_id = lh_groups.group_id ORDER BY seq LIMIT 1) WHERE queue_id = OLD.queue_id AND locked_until = 9007199254740990 AND group_id IN (SELECT group_id FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq);
  DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND on_seq = OLD.seq;
END;

-- trigger lh_waiter_gone
CREATE TRIGGER lh_waiter_gone AFTER DELETE ON lh_messages WHEN OLD.waits IS NOT NULL BEGIN
  DELETE FROM lh_waits WHERE queue_id = OLD.queue_id AND seq = OLD.seq;
END;

-- trigger lh_seq_taken
CREATE TRIGGER lh_seq_taken AFTER INSERT ON lh_messages BEGIN
  UPDATE OR FAIL lh_counters SET last_seq = CASE WHEN NEW.seq > last_seq THEN NEW.seq ELSE last_seq END, last_counter = CASE WHEN NEW.counter IS NULL OR NEW.counter > last_counter THEN NEW.counter ELSE last_counter END, queued = queued + 1 WHERE queue_id = NEW.queue_id;
END;

-- trigger lh_claimed_group_gone
CREATE TRIGGER lh_claimed_group_gone AFTER DELETE ON lh_groups WHEN OLD.claim_order > 0 BEGIN
  UPDATE OR FAIL lh_counters SET claims = OLD.claim_order WHERE queue_id = OLD.queue_id AND claims < OLD.claim_order;
END;
