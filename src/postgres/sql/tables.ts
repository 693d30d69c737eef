/**
 * The PostgreSQL tables, as numbered, forward-only steps: entry i moves a schema from table
 * version i to i + 1. They create and change tables, indexes and data only, and a released entry
 * never changes; functions and triggers are current source, installed after them (see
 * `operations.ts`). A step that changed no table stays, empty, so versions keep their numbers.
 * @internal
 */
export const tableMigrations: readonly ((s: string) => string[])[] = [
  // The transport's queues, groups, messages and dead letters.
  (s) => [
    `CREATE TABLE ${s}.lh_queues (
      id   integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE  -- each queue has its own sequences lh_q<id>_seq (seqs) and lh_q<id>_claims (claim order)
    )`,
    `CREATE TABLE ${s}.lh_groups (
      queue        integer  NOT NULL,
      group_id     text     NOT NULL,
      priority     smallint NOT NULL,           -- set by the publish that created the group
      claim_order  bigint   NOT NULL DEFAULT 0, -- from the queue's claims sequence at its last claim; 0 = never
      first_seq    bigint   NOT NULL,           -- seq that created the group: breaks ties among never-claimed groups
      head_attempt integer  NOT NULL DEFAULT 0, -- deliveries of the head so far (the fencing half of a lease)
      holder       text,                        -- the head's lease holder; NULL when free or parked
      locked_until double precision,            -- end of the head's lease, park or delay; NULL when free
      PRIMARY KEY (queue, group_id)
    )`,
    `CREATE INDEX lh_groups_by_claim_order ON ${s}.lh_groups (queue, claim_order, first_seq)`,
    `CREATE TABLE ${s}.lh_messages (
      queue      integer NOT NULL,
      group_id   text    NOT NULL,
      seq        bigint  NOT NULL,
      event      text    NOT NULL,  -- JSON, exactly as the publisher's JSON.stringify wrote it
      key        text,              -- idempotency key, unique per group while queued
      not_before double precision,  -- published with a delay: not deliverable while now <= not_before
      PRIMARY KEY (queue, group_id, seq)
    )`,
    `CREATE UNIQUE INDEX lh_messages_by_key ON ${s}.lh_messages (queue, group_id, key) WHERE key IS NOT NULL`,
    `CREATE TABLE ${s}.lh_dead_letters (
      id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- the order they died in
      queue    integer  NOT NULL,
      seq      bigint   NOT NULL,
      group_id text     NOT NULL,
      priority smallint NOT NULL,
      event    text     NOT NULL,
      attempt  integer  NOT NULL,
      dead_at  double precision NOT NULL,
      UNIQUE (queue, seq)
    )`,
  ],
  // The execution store's tables.
  (s) => [
    `CREATE TABLE ${s}.lh_executions (
      id      text    PRIMARY KEY,
      version bigint  NOT NULL,
      body    text    NOT NULL  -- the execution as JSON, version excluded
    )`,
    `CREATE TABLE ${s}.lh_outbox (
      seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      target_id text,
      event     text NOT NULL
    )`,
    `CREATE TABLE ${s}.lh_processed (
      execution_id text NOT NULL,
      event_id     text NOT NULL,
      PRIMARY KEY (execution_id, event_id)
    )`,
    `CREATE TABLE ${s}.lh_timers (
      execution_id text NOT NULL,
      path         text NOT NULL,
      fire_at      double precision NOT NULL,
      PRIMARY KEY (execution_id, path)
    )`,
    `CREATE INDEX lh_timers_by_fire_at ON ${s}.lh_timers (fire_at)`,
    `CREATE TABLE ${s}.lh_spawns (
      seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      parent_id text NOT NULL,
      child_id  text NOT NULL,
      root_path text NOT NULL,
      context   text NOT NULL
    )`,
    `CREATE TABLE ${s}.lh_trace (
      execution_id text   NOT NULL,
      position     bigint NOT NULL,  -- the store's own monotonic counter; trimming deletes the lowest
      step         text   NOT NULL,  -- JSON, with its index
      PRIMARY KEY (execution_id, position)
    )`,
    `CREATE TABLE ${s}.lh_trace_cursors (
      execution_id text   PRIMARY KEY,
      next_index   bigint NOT NULL
    )`,
  ],
  // (The claim and the ack made cheaper: no table changed.)
  () => [],
  // (ackAndClaimMany: no table changed.)
  () => [],
  // Dead letters that hold their group, and why a message died.
  (s) => [
    `ALTER TABLE ${s}.lh_queues ADD COLUMN on_dead_letter text`,
    `ALTER TABLE ${s}.lh_groups ADD COLUMN held_seq bigint`,
    `ALTER TABLE ${s}.lh_dead_letters ADD COLUMN reason text`,
  ],
  // (Keyed publish with onDuplicate: no table changed.)
  () => [],
  // Pauses of a queue or a group.
  (s) => [
    `ALTER TABLE ${s}.lh_queues ADD COLUMN paused boolean`,
    `ALTER TABLE ${s}.lh_groups ADD COLUMN paused boolean`,
    `CREATE TABLE ${s}.lh_paused_groups (
      queue    integer NOT NULL,
      group_id text    NOT NULL,
      PRIMARY KEY (queue, group_id)
    )`,
  ],
  // Messages that wait for others (`after`).
  (s) => [
    `ALTER TABLE ${s}.lh_messages ADD COLUMN waits integer, ADD COLUMN delay_until double precision, ADD COLUMN watched boolean`,
    `CREATE TABLE ${s}.lh_waits (
      queue    integer NOT NULL,
      on_seq   bigint  NOT NULL,  -- the message waited for
      group_id text    NOT NULL,  -- the waiting message's group and seq
      seq      bigint  NOT NULL,
      PRIMARY KEY (queue, on_seq, seq)
    )`,
  ],
  // Why a message failed last.
  (s) => [
    `ALTER TABLE ${s}.lh_messages ADD COLUMN last_error text`,
  ],
  // Loss detection: the schema's origin, each queue's counter, each message's number (existing ones numbered by seq).
  (s) => [
    `CREATE TABLE ${s}.lh_origin (id integer PRIMARY KEY CHECK (id = 1), origin text NOT NULL)`,
    `INSERT INTO ${s}.lh_origin (id, origin) VALUES (1, replace(gen_random_uuid()::text, '-', ''))`,
    `ALTER TABLE ${s}.lh_messages ADD COLUMN counter bigint`,
    `ALTER TABLE ${s}.lh_dead_letters ADD COLUMN counter bigint`,
    `ALTER TABLE ${s}.lh_queues ADD COLUMN last_counter bigint NOT NULL DEFAULT 0`,
    `UPDATE ${s}.lh_messages SET counter = seq`,
    `UPDATE ${s}.lh_dead_letters SET counter = seq`,
    `UPDATE ${s}.lh_queues q SET last_counter = greatest(
       (SELECT coalesce(max(m.seq), 0) FROM ${s}.lh_messages m WHERE m.queue = q.id),
       (SELECT coalesce(max(d.seq), 0) FROM ${s}.lh_dead_letters d WHERE d.queue = q.id))`,
    `CREATE INDEX lh_messages_by_counter ON ${s}.lh_messages (queue, counter)`,
  ],
  // (Messages numbered at insert: no table changed.)
  () => [],
  // Each message's revision (Lease.revision), kept by its dead letter.
  (s) => [
    `ALTER TABLE ${s}.lh_messages ADD COLUMN revision integer NOT NULL DEFAULT 0`,
    `ALTER TABLE ${s}.lh_dead_letters ADD COLUMN revision integer NOT NULL DEFAULT 0`,
  ],
  // Coalescing windows: the bound of a message's window, set by the first publish with one that met it.
  (s) => [`ALTER TABLE ${s}.lh_messages ADD COLUMN debounce_deadline double precision`],
];
