-- The leasehold schema on PostgreSQL as it is today: written by `npm run schema:postgres`, not by hand.
-- :schema stands for the schema's name. Each object is described from the catalog.

-- table lh_dead_letters
TABLE lh_dead_letters (
  id bigint NOT NULL GENERATED ALWAYS AS IDENTITY
  queue integer NOT NULL
  seq bigint NOT NULL
  group_id text NOT NULL
  priority smallint NOT NULL
  event text NOT NULL
  attempt integer NOT NULL
  dead_at double precision NOT NULL
  reason text
  counter bigint
  revision integer NOT NULL DEFAULT 0
)
CONSTRAINT lh_dead_letters_pkey PRIMARY KEY (id)
CONSTRAINT lh_dead_letters_queue_seq_key UNIQUE (queue, seq)
CREATE UNIQUE INDEX lh_dead_letters_pkey ON :schema.lh_dead_letters USING btree (id);
CREATE UNIQUE INDEX lh_dead_letters_queue_seq_key ON :schema.lh_dead_letters USING btree (queue, seq);

-- table lh_executions
TABLE lh_executions (
  id text NOT NULL
  version bigint NOT NULL
  body text NOT NULL
)
CONSTRAINT lh_executions_pkey PRIMARY KEY (id)
CREATE UNIQUE INDEX lh_executions_pkey ON :schema.lh_executions USING btree (id);

-- table lh_groups
TABLE lh_groups (
  queue integer NOT NULL
  group_id text NOT NULL
  priority smallint NOT NULL
  claim_order bigint NOT NULL DEFAULT 0
  first_seq bigint NOT NULL
  head_attempt integer NOT NULL DEFAULT 0
  holder text
  locked_until double precision
  held_seq bigint
  paused boolean
)
CONSTRAINT lh_groups_pkey PRIMARY KEY (queue, group_id)
CREATE INDEX lh_groups_by_claim_order ON :schema.lh_groups USING btree (queue, claim_order, first_seq);
CREATE UNIQUE INDEX lh_groups_pkey ON :schema.lh_groups USING btree (queue, group_id);

-- table lh_messages
TABLE lh_messages (
  queue integer NOT NULL
  group_id text NOT NULL
  seq bigint NOT NULL
  event text NOT NULL
  key text
  not_before double precision
  waits integer
  delay_until double precision
  watched boolean
  last_error text
  counter bigint
  revision integer NOT NULL DEFAULT 0
  debounce_deadline double precision
)
CONSTRAINT lh_messages_pkey PRIMARY KEY (queue, group_id, seq)
CREATE INDEX lh_messages_by_counter ON :schema.lh_messages USING btree (queue, counter);
CREATE UNIQUE INDEX lh_messages_by_key ON :schema.lh_messages USING btree (queue, group_id, key) WHERE (key IS NOT NULL);
CREATE UNIQUE INDEX lh_messages_pkey ON :schema.lh_messages USING btree (queue, group_id, seq);

-- table lh_migrations
TABLE lh_migrations (
  version integer NOT NULL
  applied_at timestamp with time zone NOT NULL DEFAULT now()
)
CONSTRAINT lh_migrations_pkey PRIMARY KEY (version)
CREATE UNIQUE INDEX lh_migrations_pkey ON :schema.lh_migrations USING btree (version);

-- table lh_operations
TABLE lh_operations (
  id integer NOT NULL
  hash text NOT NULL
)
CONSTRAINT lh_operations_id_check CHECK ((id = 1))
CONSTRAINT lh_operations_pkey PRIMARY KEY (id)
CREATE UNIQUE INDEX lh_operations_pkey ON :schema.lh_operations USING btree (id);

-- table lh_origin
TABLE lh_origin (
  id integer NOT NULL
  origin text NOT NULL
)
CONSTRAINT lh_origin_id_check CHECK ((id = 1))
CONSTRAINT lh_origin_pkey PRIMARY KEY (id)
CREATE UNIQUE INDEX lh_origin_pkey ON :schema.lh_origin USING btree (id);

-- table lh_outbox
TABLE lh_outbox (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY
  target_id text
  event text NOT NULL
)
CONSTRAINT lh_outbox_pkey PRIMARY KEY (seq)
CREATE UNIQUE INDEX lh_outbox_pkey ON :schema.lh_outbox USING btree (seq);

-- table lh_paused_groups
TABLE lh_paused_groups (
  queue integer NOT NULL
  group_id text NOT NULL
)
CONSTRAINT lh_paused_groups_pkey PRIMARY KEY (queue, group_id)
CREATE UNIQUE INDEX lh_paused_groups_pkey ON :schema.lh_paused_groups USING btree (queue, group_id);

-- table lh_processed
TABLE lh_processed (
  execution_id text NOT NULL
  event_id text NOT NULL
)
CONSTRAINT lh_processed_pkey PRIMARY KEY (execution_id, event_id)
CREATE UNIQUE INDEX lh_processed_pkey ON :schema.lh_processed USING btree (execution_id, event_id);

-- table lh_queues
TABLE lh_queues (
  id integer NOT NULL GENERATED ALWAYS AS IDENTITY
  name text NOT NULL
  on_dead_letter text
  paused boolean
  last_counter bigint NOT NULL DEFAULT 0
)
CONSTRAINT lh_queues_name_key UNIQUE (name)
CONSTRAINT lh_queues_pkey PRIMARY KEY (id)
CREATE UNIQUE INDEX lh_queues_name_key ON :schema.lh_queues USING btree (name);
CREATE UNIQUE INDEX lh_queues_pkey ON :schema.lh_queues USING btree (id);

-- table lh_spawns
TABLE lh_spawns (
  seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY
  parent_id text NOT NULL
  child_id text NOT NULL
  root_path text NOT NULL
  context text NOT NULL
)
CONSTRAINT lh_spawns_pkey PRIMARY KEY (seq)
CREATE UNIQUE INDEX lh_spawns_pkey ON :schema.lh_spawns USING btree (seq);

-- table lh_timers
TABLE lh_timers (
  execution_id text NOT NULL
  path text NOT NULL
  fire_at double precision NOT NULL
)
CONSTRAINT lh_timers_pkey PRIMARY KEY (execution_id, path)
CREATE INDEX lh_timers_by_fire_at ON :schema.lh_timers USING btree (fire_at);
CREATE UNIQUE INDEX lh_timers_pkey ON :schema.lh_timers USING btree (execution_id, path);

-- table lh_trace
TABLE lh_trace (
  execution_id text NOT NULL
  position bigint NOT NULL
  step text NOT NULL
)
CONSTRAINT lh_trace_pkey PRIMARY KEY (execution_id, "position")
CREATE UNIQUE INDEX lh_trace_pkey ON :schema.lh_trace USING btree (execution_id, "position");

-- table lh_trace_cursors
TABLE lh_trace_cursors (
  execution_id text NOT NULL
  next_index bigint NOT NULL
)
CONSTRAINT lh_trace_cursors_pkey PRIMARY KEY (execution_id)
CREATE UNIQUE INDEX lh_trace_cursors_pkey ON :schema.lh_trace_cursors USING btree (execution_id);

-- table lh_waits
TABLE lh_waits (
  queue integer NOT NULL
  on_seq bigint NOT NULL
  group_id text NOT NULL
  seq bigint NOT NULL
)
CONSTRAINT lh_waits_pkey PRIMARY KEY (queue, on_seq, seq)
CREATE UNIQUE INDEX lh_waits_pkey ON :schema.lh_waits USING btree (queue, on_seq, seq);

-- function lh_ack(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_ack(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    DECLARE v_row tid; v_next bigint; v_not_before double precision;
    BEGIN
      SELECT g.ctid INTO v_row FROM :schema.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
      IF NOT FOUND THEN RETURN false; END IF;
      DELETE FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF NOT FOUND THEN RETURN false; END IF;  -- that message left already: the lease is stale
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM :schema.lh_groups g WHERE g.ctid = v_row;
        RETURN true;
      END IF;
      -- The new head is free (or held by its own delay) and not delivered yet. The group was
      -- claimed (claim_order > 0), so first_seq, which orders only never-claimed groups, stays.
      UPDATE :schema.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before WHERE g.ctid = v_row;
      -- The next message of the group is claimable now: say so.
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_ack_claim_many(p_queue integer, p_claims regclass, p_leases json, p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_ack_claim_many(p_queue integer, p_claims regclass, p_leases json, p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer, p_channel text)
 RETURNS TABLE(o_done text, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer)
 LANGUAGE plpgsql
AS $function$
    BEGIN
      o_done := :schema.lh_ack_many(p_queue, p_leases, p_channel);
      RETURN NEXT;
      RETURN QUERY SELECT NULL::text, c.* FROM :schema.lh_claim_many(p_queue, p_claims, p_claimer, p_visibility, p_min_priority,
        p_now, p_max_attempts, p_max) c;
    END $function$;

-- function lh_ack_claim_one(p_queue integer, p_claims regclass, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_ack_claim_one(p_queue integer, p_claims regclass, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_claimer text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_channel text)
 RETURNS TABLE(o_lost boolean, o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer, o_low bigint)
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT :schema.lh_ack(p_queue, p_group, p_seq, p_attempt, p_worker, p_channel) THEN
        o_lost := true;
        RETURN NEXT;
        RETURN;
      END IF;
      RETURN QUERY SELECT false, c.* FROM :schema.lh_claim_one(p_queue, p_claims, p_claimer, p_visibility, p_min_priority, p_now, p_max_attempts) c;
    END $function$;

-- function lh_ack_many(p_queue integer, p_leases json, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_ack_many(p_queue integer, p_leases json, p_channel text)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_done text[] := array_fill('f'::text, ARRAY[json_array_length(p_leases)]);
      v_lease record;
      v_any boolean := false;
    BEGIN
      FOR v_lease IN SELECT x, n FROM json_array_elements(p_leases) WITH ORDINALITY AS a(x, n) ORDER BY (x->>0) COLLATE "C", n LOOP
        IF :schema.lh_ack(p_queue, v_lease.x->>0, (v_lease.x->>1)::bigint, (v_lease.x->>2)::integer, v_lease.x->>3, NULL) THEN
          v_done[v_lease.n] := 't';
          v_any := true;
        END IF;
      END LOOP;
      IF v_any AND p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN array_to_string(v_done, '');
    END $function$;

-- function lh_append(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_counter bigint)
CREATE OR REPLACE FUNCTION :schema.lh_append(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_counter bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_seq bigint;
      v_counter bigint := p_counter;
      v_not_before double precision := CASE WHEN p_delay > 0 THEN coalesce(p_now, :schema.lh_now()) + p_delay END;
    BEGIN
      LOOP
        PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
        IF FOUND THEN
          IF p_key IS NOT NULL THEN
            SELECT m.seq INTO v_seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
            IF FOUND THEN RETURN v_seq; END IF;
          END IF;
          v_seq := nextval(p_seqs);
          EXIT;
        END IF;
        v_seq := nextval(p_seqs);
        INSERT INTO :schema.lh_groups (queue, group_id, priority, first_seq, locked_until) VALUES (p_queue, p_group, p_priority, v_seq, v_not_before)
          ON CONFLICT DO NOTHING;
        EXIT WHEN FOUND;
      END LOOP;
      IF v_counter IS NULL THEN
        UPDATE :schema.lh_queues q SET last_counter = q.last_counter + 1 WHERE q.id = p_queue RETURNING q.last_counter INTO v_counter;
      END IF;
      INSERT INTO :schema.lh_messages (queue, group_id, seq, event, key, not_before, counter)
        VALUES (p_queue, p_group, v_seq, p_event, p_key, v_not_before, v_counter);
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN v_seq;
    END $function$;

-- function lh_bury(p_queue integer, p_group text, p_seq bigint, p_now double precision, p_reason text)
CREATE OR REPLACE FUNCTION :schema.lh_bury(p_queue integer, p_group text, p_seq bigint, p_now double precision, p_reason text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      INSERT INTO :schema.lh_dead_letters (queue, seq, group_id, priority, event, attempt, dead_at, reason)
        SELECT p_queue, m.seq, m.group_id, g.priority, m.event, g.head_attempt, p_now, coalesce(p_reason, m.last_error)
        FROM :schema.lh_messages m JOIN :schema.lh_groups g ON g.queue = m.queue AND g.group_id = m.group_id
        WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF (SELECT q.on_dead_letter FROM :schema.lh_queues q WHERE q.id = p_queue) = 'hold' THEN
        UPDATE :schema.lh_groups g SET held_seq = p_seq, holder = NULL, head_attempt = 0, locked_until = 9007199254740991
          WHERE g.queue = p_queue AND g.group_id = p_group;
        DELETE FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
        RETURN false;
      END IF;
      RETURN :schema.lh_remove_head(p_queue, p_group, p_seq);
    END $function$;

-- function lh_cancel(p_queue integer, p_seq bigint, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_cancel(p_queue integer, p_seq bigint, p_now double precision, p_channel text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_group text; v_holder text; v_until double precision; v_head bigint;
    BEGIN
      SELECT m.group_id INTO v_group FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.seq = p_seq;
      IF NOT FOUND THEN RETURN 0; END IF;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM :schema.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = v_group FOR UPDATE;
      IF NOT FOUND THEN RETURN 0; END IF;  -- acked meanwhile
      SELECT m.seq INTO v_head FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
      IF v_head = p_seq THEN
        IF v_holder IS NOT NULL AND v_until >= coalesce(p_now, :schema.lh_now()) THEN RETURN -1; END IF;
        PERFORM :schema.lh_remove_head(p_queue, v_group, p_seq);
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN 2;
      END IF;
      DELETE FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = p_seq;
      RETURN CASE WHEN FOUND THEN 1 ELSE 0 END;
    END $function$;

-- function lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint)
CREATE OR REPLACE FUNCTION :schema.lh_claim(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint)
 RETURNS TABLE(o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision);
      v_row tid; v_group text; v_attempt integer; v_seq bigint;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt INTO v_row, v_group, v_attempt FROM :schema.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now) AND g.paused IS NULL
            AND NOT EXISTS (SELECT 1 FROM :schema.lh_queues q WHERE q.id = p_queue AND q.paused)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq INTO v_seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          PERFORM :schema.lh_bury(p_queue, v_group, v_seq, v_now, NULL);
          CONTINUE;
        END IF;
        -- The row is locked by this transaction, so its tuple id stays put until the update.
        UPDATE :schema.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event, m.counter, m.revision FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event, h.counter, h.revision INTO o_seq, o_event, o_counter, o_revision;
        IF NOT FOUND THEN RETURN; END IF;  -- a group row without messages: never left behind by any call
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $function$;

-- function lh_claim_many(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer)
CREATE OR REPLACE FUNCTION :schema.lh_claim_many(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint, p_max integer)
 RETURNS TABLE(o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, :schema.lh_now());
      v_found boolean;
    BEGIN
      FOR i IN 1..p_max LOOP
        v_found := false;
        FOR o_seq, o_group, o_event, o_attempt, o_expires, o_counter, o_revision IN
          SELECT * FROM :schema.lh_claim(p_queue, p_claims, p_worker, p_visibility, p_min_priority, v_now, p_max_attempts) LOOP
          v_found := true;
          RETURN NEXT;
        END LOOP;
        EXIT WHEN NOT v_found;
      END LOOP;
    END $function$;

-- function lh_claim_one(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint)
CREATE OR REPLACE FUNCTION :schema.lh_claim_one(p_queue integer, p_claims regclass, p_worker text, p_visibility double precision, p_min_priority integer, p_now double precision, p_max_attempts bigint)
 RETURNS TABLE(o_seq bigint, o_group text, o_event text, o_attempt integer, o_expires double precision, o_counter bigint, o_revision integer, o_low bigint)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision);
      v_row tid; v_group text; v_attempt integer; v_seq bigint;
    BEGIN
      LOOP
        SELECT g.ctid, g.group_id, g.head_attempt INTO v_row, v_group, v_attempt FROM :schema.lh_groups g
          WHERE g.queue = p_queue AND g.priority >= p_min_priority AND (g.locked_until IS NULL OR g.locked_until < v_now) AND g.paused IS NULL
            AND NOT EXISTS (SELECT 1 FROM :schema.lh_queues q WHERE q.id = p_queue AND q.paused)
          ORDER BY g.claim_order, g.first_seq LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN RETURN; END IF;
        IF v_attempt >= p_max_attempts THEN
          -- Poison message: out of its group, which keeps its place in the round-robin order.
          SELECT m.seq INTO v_seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
          PERFORM :schema.lh_bury(p_queue, v_group, v_seq, v_now, NULL);
          CONTINUE;
        END IF;
        -- The row is locked by this transaction, so its tuple id stays put until the update.
        UPDATE :schema.lh_groups g SET holder = p_worker, locked_until = v_now + p_visibility, head_attempt = v_attempt + 1,
            claim_order = nextval(p_claims)
          FROM (SELECT m.seq, m.event, m.counter, m.revision FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1) h
          WHERE g.ctid = v_row
          RETURNING h.seq, h.event, h.counter, h.revision INTO o_seq, o_event, o_counter, o_revision;
        IF NOT FOUND THEN RETURN; END IF;  -- a group row without messages: never left behind by any call
        o_low := (SELECT min(m.counter) FROM :schema.lh_messages m WHERE m.queue = p_queue);
        o_group := v_group; o_attempt := v_attempt + 1; o_expires := v_now + p_visibility;
        RETURN NEXT;
        RETURN;
      END LOOP;
    END $function$;

-- function lh_commit(p_id text, p_expected bigint, p_body text, p_emits json, p_processed text, p_timers json, p_spawns json, p_step text, p_explicit boolean, p_trace_max bigint)
CREATE OR REPLACE FUNCTION :schema.lh_commit(p_id text, p_expected bigint, p_body text, p_emits json, p_processed text, p_timers json, p_spawns json, p_step text, p_explicit boolean, p_trace_max bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE v_found bigint;
    BEGIN
      INSERT INTO :schema.lh_executions AS e (id, version, body) VALUES (p_id, p_expected + 1, p_body)
        ON CONFLICT (id) DO UPDATE SET version = excluded.version, body = excluded.body WHERE e.version = p_expected;
      IF NOT FOUND THEN
        SELECT e.version INTO v_found FROM :schema.lh_executions e WHERE e.id = p_id;
        RETURN v_found;
      END IF;
      INSERT INTO :schema.lh_outbox (target_id, event) SELECT x->>0, x->>1 FROM json_array_elements(p_emits) WITH ORDINALITY AS a(x, n) ORDER BY n;
      IF p_processed IS NOT NULL THEN
        INSERT INTO :schema.lh_processed (execution_id, event_id) VALUES (p_id, p_processed) ON CONFLICT DO NOTHING;
      END IF;
      DECLARE t json;
      BEGIN
        -- In order: a later change of the same path wins, as in the other stores.
        FOR t IN SELECT x FROM json_array_elements(p_timers) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
          IF t->>1 IS NULL THEN
            DELETE FROM :schema.lh_timers tm WHERE tm.execution_id = p_id AND tm.path = t->>0;
          ELSE
            INSERT INTO :schema.lh_timers AS tm (execution_id, path, fire_at) VALUES (p_id, t->>0, (t->>1)::double precision)
              ON CONFLICT (execution_id, path) DO UPDATE SET fire_at = excluded.fire_at;
          END IF;
        END LOOP;
      END;
      INSERT INTO :schema.lh_spawns (parent_id, child_id, root_path, context)
        SELECT p_id, x->>0, x->>1, x->>2 FROM json_array_elements(p_spawns) WITH ORDINALITY AS a(x, n) ORDER BY n;
      IF p_step IS NOT NULL THEN PERFORM :schema.lh_record(p_id, p_step, p_explicit, p_trace_max); END IF;
      RETURN NULL;
    END $function$;

-- function lh_dead_letter_counter()
CREATE OR REPLACE FUNCTION :schema.lh_dead_letter_counter()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      SELECT m.counter, m.revision INTO NEW.counter, NEW.revision FROM :schema.lh_messages m WHERE m.queue = NEW.queue AND m.group_id = NEW.group_id AND m.seq = NEW.seq;
      RETURN NEW;
    END $function$;

-- function lh_dead_letter_gone()
CREATE OR REPLACE FUNCTION :schema.lh_dead_letter_gone()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM :schema.lh_messages m WHERE m.queue = OLD.queue AND m.group_id = OLD.group_id AND m.seq = OLD.seq) THEN
        PERFORM :schema.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $function$;

-- function lh_discard(p_queue integer, p_seq bigint, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_discard(p_queue integer, p_seq bigint, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    DECLARE v_group text; v_not_before double precision;
    BEGIN
      DELETE FROM :schema.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq RETURNING d.group_id INTO v_group;
      IF NOT FOUND THEN RETURN false; END IF;
      PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN true; END IF;
      SELECT m.not_before INTO v_not_before FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = v_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group;
        RETURN true;
      END IF;
      UPDATE :schema.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = v_not_before
        WHERE g.queue = p_queue AND g.group_id = v_group;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_extend(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_visibility double precision, p_now double precision)
CREATE OR REPLACE FUNCTION :schema.lh_extend(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_visibility double precision, p_now double precision)
 RETURNS double precision
 LANGUAGE plpgsql
AS $function$
    DECLARE v_until double precision := coalesce(p_now, :schema.lh_now()) + p_visibility;
    BEGIN
      IF NOT :schema.lh_holds(p_queue, p_group, p_seq, p_attempt, p_worker) THEN RETURN NULL; END IF;
      UPDATE :schema.lh_groups g SET locked_until = v_until WHERE g.queue = p_queue AND g.group_id = p_group;
      RETURN v_until;
    END $function$;

-- function lh_fail(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_reason text, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_fail(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_reason text, p_now double precision, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      
    PERFORM 1 FROM :schema.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE :schema.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      UPDATE :schema.lh_messages m SET last_error = p_reason WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_group_created()
CREATE OR REPLACE FUNCTION :schema.lh_group_created()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF EXISTS (SELECT 1 FROM :schema.lh_paused_groups p WHERE p.queue = NEW.queue AND p.group_id = NEW.group_id) THEN
        NEW.paused := true;
      END IF;
      RETURN NEW;
    END $function$;

-- function lh_holds(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text)
CREATE OR REPLACE FUNCTION :schema.lh_holds(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      
    PERFORM 1 FROM :schema.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      RETURN true;
    END $function$;

-- function lh_low_water(p_queue integer)
CREATE OR REPLACE FUNCTION :schema.lh_low_water(p_queue integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RETURN (SELECT min(m.counter) FROM :schema.lh_messages m WHERE m.queue = p_queue);
    END $function$;

-- function lh_merge_patch(p_target json, p_patch json)
CREATE OR REPLACE FUNCTION :schema.lh_merge_patch(p_target json, p_patch json)
 RETURNS json
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
    BEGIN
      IF json_typeof(p_patch) IS DISTINCT FROM 'object' THEN RETURN p_patch; END IF;
      IF json_typeof(p_target) IS DISTINCT FROM 'object' THEN p_target := '{}'::json; END IF;
      RETURN coalesce((
        SELECT json_object_agg(x.k, x.v ORDER BY x.o) FROM (
          SELECT t.key AS k, CASE WHEN p.value IS NULL THEN t.value ELSE :schema.lh_merge_patch(t.value, p.value) END AS v, t.o
            FROM json_each(p_target) WITH ORDINALITY AS t(key, value, o) LEFT JOIN json_each(p_patch) AS p ON p.key = t.key
            WHERE p.value IS NULL OR json_typeof(p.value) <> 'null'
          UNION ALL
          SELECT p.key, :schema.lh_merge_patch(NULL, p.value), 1e15 + p.o
            FROM json_each(p_patch) WITH ORDINALITY AS p(key, value, o)
            WHERE json_typeof(p.value) <> 'null' AND NOT EXISTS (SELECT 1 FROM json_each(p_target) AS t WHERE t.key = p.key)
        ) x), '{}'::json);
    END $function$;

-- function lh_now()
CREATE OR REPLACE FUNCTION :schema.lh_now()
 RETURNS double precision
 LANGUAGE sql
AS $function$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision $function$;

-- function lh_pause(p_queue integer, p_group text)
CREATE OR REPLACE FUNCTION :schema.lh_pause(p_queue integer, p_group text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE :schema.lh_queues q SET paused = true WHERE q.id = p_queue AND q.paused IS NULL;
        RETURN;
      END IF;
      INSERT INTO :schema.lh_paused_groups (queue, group_id) VALUES (p_queue, p_group) ON CONFLICT DO NOTHING;
      
      INSERT INTO :schema.lh_groups (queue, group_id, priority, first_seq) VALUES (p_queue, p_group, 0, 0)
        ON CONFLICT DO NOTHING RETURNING ctid INTO v_probe;
      IF v_probe IS NOT NULL THEN DELETE FROM :schema.lh_groups g WHERE g.ctid = v_probe; END IF;
      UPDATE :schema.lh_groups g SET paused = true WHERE g.queue = p_queue AND g.group_id = p_group;
    END $function$;

-- function lh_publish(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_publish(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    BEGIN
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      RETURN :schema.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, NULL);
    END $function$;

-- function lh_publish_after(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text, p_after bigint[], p_after_groups text[])
CREATE OR REPLACE FUNCTION :schema.lh_publish_after(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text, p_after bigint[], p_after_groups text[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_last bigint; v_named bigint; v_group text; v_existing bigint; v_seq bigint; v_waits integer := 0; v_after bigint[];
    BEGIN
      v_last := coalesce(pg_sequence_last_value(p_seqs), 0);
      FOREACH v_named IN ARRAY p_after LOOP
        IF v_named > v_last THEN RETURN -v_named; END IF;
      END LOOP;
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF p_key IS NOT NULL THEN
        SELECT m.seq INTO v_existing FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
      END IF;
      v_seq := CASE WHEN p_mode = 'skip' THEN :schema.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, NULL)
        ELSE :schema.lh_publish_keyed(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, p_now, p_channel, p_mode) END;
      IF v_seq IS NOT DISTINCT FROM v_existing THEN RETURN v_seq; END IF;  -- a queued message took it: after is for a new one
      -- A named group stands for what it holds now (the queue row is locked: no publish adds to
      -- it meanwhile): its queued messages and the dead letter holding it.
      v_after := ARRAY(SELECT DISTINCT x FROM unnest(p_after || ARRAY(
          SELECT m.seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = ANY (p_after_groups) AND m.seq <> v_seq
          UNION ALL SELECT g.held_seq FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = ANY (p_after_groups) AND g.held_seq IS NOT NULL)) AS x);
      FOREACH v_named IN ARRAY v_after LOOP
        SELECT m.group_id INTO v_group FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.seq = v_named;
        IF FOUND THEN
          PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group FOR NO KEY UPDATE;
          UPDATE :schema.lh_messages m SET watched = true WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_named;
        ELSE
          PERFORM 1 FROM :schema.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = v_named FOR UPDATE;
        END IF;
        IF FOUND THEN
          INSERT INTO :schema.lh_waits (queue, on_seq, group_id, seq) VALUES (p_queue, v_named, p_group, v_seq);
          v_waits := v_waits + 1;
        END IF;
      END LOOP;
      IF v_waits > 0 THEN
        UPDATE :schema.lh_messages m SET delay_until = m.not_before, not_before = 9007199254740990, waits = v_waits
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        UPDATE :schema.lh_groups g SET locked_until = 9007199254740990 WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder IS NULL
          AND v_seq = (SELECT m.seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1);
      END IF;
      RETURN v_seq;
    END $function$;

-- function lh_publish_debounced(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text, p_debounce double precision, p_max_wait double precision, p_after bigint[], p_after_groups text[])
CREATE OR REPLACE FUNCTION :schema.lh_publish_debounced(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text, p_debounce double precision, p_max_wait double precision, p_after bigint[], p_after_groups text[])
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, :schema.lh_now());
      v_bound double precision := CASE WHEN p_max_wait IS NULL THEN 9007199254740991 ELSE v_now + p_max_wait END;
      v_last bigint; v_named bigint; v_holder text; v_until double precision; v_seq bigint; v_head bigint;
      v_event text; v_new text; v_deadline double precision; v_wait double precision;
    BEGIN
      IF cardinality(p_after) > 0 THEN
        v_last := coalesce(pg_sequence_last_value(p_seqs), 0);
        FOREACH v_named IN ARRAY p_after LOOP
          IF v_named > v_last THEN RETURN -v_named; END IF;
        END LOOP;
      END IF;
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM :schema.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF FOUND THEN
        SELECT m.seq, m.event, m.debounce_deadline INTO v_seq, v_event, v_deadline FROM :schema.lh_messages m
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
      END IF;
      IF v_seq IS NOT NULL THEN
        v_head := (SELECT m.seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1);
        IF v_holder IS NOT NULL AND v_seq = v_head THEN
          IF p_mode = 'skip' THEN RETURN v_seq; END IF;
          IF v_until >= v_now THEN
            -- Under a live lease, maybe on the wire already: the new event goes behind it, with the key.
            UPDATE :schema.lh_messages m SET key = NULL WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
            v_seq := NULL;
          ELSE
            UPDATE :schema.lh_groups g SET holder = NULL, locked_until = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
          END IF;
        END IF;
      END IF;
      IF v_seq IS NOT NULL THEN
        IF p_mode <> 'skip' THEN
          v_new := CASE WHEN p_mode = 'merge' THEN :schema.lh_merge_patch(v_event::json, p_event::json)::text ELSE p_event END;
          UPDATE :schema.lh_messages m SET event = v_new, revision = m.revision + (v_new::jsonb IS DISTINCT FROM v_event::jsonb)::integer
            WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        END IF;
        -- The bound stays the first window's; the wait moves on, never past the bound, never
        -- shortening a later one (a park, a hold, a block: greatest keeps it).
        v_deadline := coalesce(v_deadline, v_bound);
        v_wait := least(v_now + p_debounce, v_deadline);
        UPDATE :schema.lh_messages m SET debounce_deadline = v_deadline,
            delay_until = CASE WHEN m.not_before = 9007199254740990 THEN greatest(m.delay_until, v_wait) ELSE m.delay_until END,
            not_before = CASE WHEN m.not_before = 9007199254740990 THEN m.not_before ELSE greatest(m.not_before, v_wait) END
          WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
        IF v_seq = v_head THEN
          UPDATE :schema.lh_groups g SET locked_until = greatest(g.locked_until, v_wait) WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder IS NULL;
        END IF;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN v_seq;
      END IF;
      v_seq := CASE WHEN cardinality(p_after) > 0 OR cardinality(p_after_groups) > 0
        THEN :schema.lh_publish_after(p_queue, p_seqs, p_group, p_event, p_priority, p_key, greatest(p_delay, p_debounce), v_now, p_channel, 'skip', p_after, p_after_groups)
        ELSE :schema.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, greatest(p_delay, p_debounce), v_now, p_channel, NULL) END;
      UPDATE :schema.lh_messages m SET debounce_deadline = v_bound WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
      RETURN v_seq;
    END $function$;

-- function lh_publish_keyed(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text)
CREATE OR REPLACE FUNCTION :schema.lh_publish_keyed(p_queue integer, p_seqs regclass, p_group text, p_event text, p_priority integer, p_key text, p_delay double precision, p_now double precision, p_channel text, p_mode text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, :schema.lh_now());
      v_holder text; v_until double precision; v_seq bigint; v_event text; v_new text;
    BEGIN
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT g.holder, g.locked_until INTO v_holder, v_until FROM :schema.lh_groups g
        WHERE g.queue = p_queue AND g.group_id = p_group FOR NO KEY UPDATE;
      IF FOUND THEN
        SELECT m.seq, m.event INTO v_seq, v_event FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.key = p_key;
        IF FOUND THEN
          IF v_holder IS NOT NULL AND v_seq = (SELECT m.seq FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
            IF v_until >= v_now THEN
              UPDATE :schema.lh_messages m SET key = NULL WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
              RETURN :schema.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel, NULL);
            END IF;
            UPDATE :schema.lh_groups g SET holder = NULL, locked_until = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
          END IF;
          v_new := CASE WHEN p_mode = 'merge' THEN :schema.lh_merge_patch(v_event::json, p_event::json)::text ELSE p_event END;
          -- A new revision (Lease.deliveryId) only when the content changed, as JSON values compare.
          UPDATE :schema.lh_messages m SET event = v_new, revision = m.revision + (v_new::jsonb IS DISTINCT FROM v_event::jsonb)::integer
            WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = v_seq;
          IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
          RETURN v_seq;
        END IF;
      END IF;
      RETURN :schema.lh_append(p_queue, p_seqs, p_group, p_event, p_priority, p_key, p_delay, v_now, p_channel, NULL);
    END $function$;

-- function lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_publish_many(p_queue integer, p_seqs regclass, p_items json, p_now double precision, p_channel text)
 RETURNS TABLE(o_seq bigint)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, :schema.lh_now());
      v_item json;
    BEGIN
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      PERFORM 1 FROM :schema.lh_groups g
        WHERE g.queue = p_queue AND g.group_id IN (SELECT x->>0 FROM json_array_elements(p_items) x)
        ORDER BY g.group_id COLLATE "C" FOR NO KEY UPDATE;
      FOR v_item IN SELECT x FROM json_array_elements(p_items) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
        IF coalesce((v_item->>7)::double precision, 0) > 0 THEN
          o_seq := :schema.lh_publish_debounced(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, coalesce(v_item->>5, 'skip'), (v_item->>7)::double precision,
            (v_item->>8)::double precision, ARRAY(SELECT e::bigint FROM json_array_elements_text(coalesce(v_item->6, '[]')) e),
            ARRAY(SELECT e FROM json_array_elements_text(coalesce(v_item->9, '[]')) e));
          IF o_seq < 0 THEN RAISE EXCEPTION 'leasehold: after names seq % which this queue never issued', -o_seq USING ERRCODE = 'LH001'; END IF;
        ELSIF json_array_length(coalesce(v_item->6, '[]')) > 0 OR json_array_length(coalesce(v_item->9, '[]')) > 0 THEN
          o_seq := :schema.lh_publish_after(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, coalesce(v_item->>5, 'skip'),
            ARRAY(SELECT e::bigint FROM json_array_elements_text(coalesce(v_item->6, '[]')) e),
            ARRAY(SELECT e FROM json_array_elements_text(coalesce(v_item->9, '[]')) e));
          IF o_seq < 0 THEN RAISE EXCEPTION 'leasehold: after names seq % which this queue never issued', -o_seq USING ERRCODE = 'LH001'; END IF;
        ELSIF coalesce(v_item->>5, 'skip') = 'skip' THEN
          o_seq := :schema.lh_append(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, NULL);
        ELSE
          o_seq := :schema.lh_publish_keyed(p_queue, p_seqs, v_item->>0, v_item->>1, (v_item->>2)::integer, v_item->>3,
            (v_item->>4)::double precision, v_now, NULL, v_item->>5);
        END IF;
        RETURN NEXT;
      END LOOP;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
    END $function$;

-- function lh_record(p_id text, p_step text, p_explicit boolean, p_trace_max bigint)
CREATE OR REPLACE FUNCTION :schema.lh_record(p_id text, p_step text, p_explicit boolean, p_trace_max bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    DECLARE v_position bigint;
    BEGIN
      INSERT INTO :schema.lh_trace_cursors AS c (execution_id, next_index) VALUES (p_id, 1)
        ON CONFLICT (execution_id) DO UPDATE SET next_index = c.next_index + 1 RETURNING c.next_index - 1 INTO v_position;
      INSERT INTO :schema.lh_trace (execution_id, position, step) VALUES (p_id, v_position,
        CASE WHEN p_explicit THEN p_step
             WHEN p_step = '{}' THEN '{"index":' || v_position || '}'
             ELSE left(p_step, -1) || ',"index":' || v_position || '}' END);
      -- Positions of one execution are contiguous: everything at or below this is outside the ring.
      IF p_trace_max > 0 AND v_position >= p_trace_max THEN
        DELETE FROM :schema.lh_trace t WHERE t.execution_id = p_id AND t.position <= v_position - p_trace_max;
      END IF;
    END $function$;

-- function lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_redrive(p_queue integer, p_seqs regclass, p_seq bigint, p_channel text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE v_group text; v_priority smallint; v_event text; v_seq bigint; v_counter bigint; v_revision integer;
    BEGIN
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      SELECT d.group_id, d.priority, d.event, d.counter, d.revision INTO v_group, v_priority, v_event, v_counter, v_revision FROM :schema.lh_dead_letters d
        WHERE d.queue = p_queue AND d.seq = p_seq FOR UPDATE;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = v_group AND g.held_seq = p_seq FOR UPDATE;
      IF FOUND THEN
        -- Every message behind it has a later seq, so under its own it is the head again.
        INSERT INTO :schema.lh_messages (queue, group_id, seq, event, watched, counter, revision)
          VALUES (p_queue, v_group, p_seq, v_event, EXISTS (SELECT 1 FROM :schema.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq), v_counter, v_revision);
        UPDATE :schema.lh_groups g SET held_seq = NULL, head_attempt = 0, holder = NULL, locked_until = NULL
          WHERE g.queue = p_queue AND g.group_id = v_group;
        v_seq := p_seq;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      ELSE
        v_seq := :schema.lh_append(p_queue, p_seqs, v_group, v_event, v_priority, NULL, 0, NULL, p_channel, v_counter);
        -- Its own number and content: the delivery id it had as a dead letter.
        UPDATE :schema.lh_messages m SET revision = v_revision WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq AND v_revision <> 0;
        UPDATE :schema.lh_waits w SET on_seq = v_seq WHERE w.queue = p_queue AND w.on_seq = p_seq;
        IF FOUND THEN
          UPDATE :schema.lh_messages m SET watched = true WHERE m.queue = p_queue AND m.group_id = v_group AND m.seq = v_seq;
        END IF;
      END IF;
      DELETE FROM :schema.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq;
      RETURN v_seq;
    END $function$;

-- function lh_reject(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_reason text, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_reject(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_reason text, p_now double precision, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      
    PERFORM 1 FROM :schema.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      IF :schema.lh_bury(p_queue, p_group, p_seq, coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision), p_reason) THEN IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF; END IF;
      RETURN true;
    END $function$;

-- function lh_release(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_release(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_now double precision, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      
    PERFORM 1 FROM :schema.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE :schema.lh_groups g SET holder = NULL,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, :schema.lh_now()) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_release_keeping(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_reason text, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_release_keeping(p_queue integer, p_group text, p_seq bigint, p_attempt integer, p_worker text, p_delay double precision, p_reason text, p_now double precision, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    BEGIN
      
    PERFORM 1 FROM :schema.lh_groups g
      WHERE g.queue = p_queue AND g.group_id = p_group AND g.holder = p_worker AND g.head_attempt = p_attempt FOR UPDATE;
    IF NOT FOUND OR p_seq IS DISTINCT FROM (SELECT m.seq FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1) THEN
      RETURN false;
    END IF;
      UPDATE :schema.lh_groups g SET holder = NULL, head_attempt = g.head_attempt - 1,
          locked_until = CASE WHEN p_delay = 0 THEN NULL ELSE coalesce(p_now, floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision) + p_delay END
        WHERE g.queue = p_queue AND g.group_id = p_group;
      IF p_reason IS NOT NULL THEN
        UPDATE :schema.lh_messages m SET last_error = p_reason WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_remove_dependents(p_queue integer, p_seq bigint, p_group text, p_dependents boolean, p_now double precision, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_remove_dependents(p_queue integer, p_seq bigint, p_group text, p_dependents boolean, p_now double precision, p_channel text)
 RETURNS TABLE(o_seq bigint, o_group text)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_now double precision := coalesce(p_now, :schema.lh_now());
      v_group text; v_dead bigint; v_from bigint; v_seqs bigint[]; v_groups text[]; v_leased bigint;
    BEGIN
      -- The queue row first, as a publish takes it: no publish adds a waiter while this runs.
      PERFORM 1 FROM :schema.lh_queues q WHERE q.id = p_queue FOR NO KEY UPDATE;
      IF p_group IS NULL THEN
        SELECT d.group_id INTO v_group FROM :schema.lh_dead_letters d WHERE d.queue = p_queue AND d.seq = p_seq;
        IF FOUND THEN
          v_dead := p_seq;
          v_from := CASE WHEN p_dependents THEN p_seq + 1 END;
        ELSIF p_dependents THEN
          SELECT m.group_id INTO v_group FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.seq = p_seq;
          IF NOT FOUND THEN RETURN; END IF;
          v_from := p_seq;
        ELSE
          RETURN;
        END IF;
      ELSE
        v_group := p_group;
        v_from := 0;
        SELECT g.held_seq INTO v_dead FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group;
      END IF;
      WITH RECURSIVE roots(group_id, from_seq) AS (
        SELECT v_group, v_from WHERE v_from IS NOT NULL
        UNION ALL
        SELECT w.group_id, w.seq FROM :schema.lh_waits w WHERE p_dependents AND v_dead IS NOT NULL AND w.queue = p_queue AND w.on_seq = v_dead
      ), chosen(group_id, seq) AS (
        SELECT m.group_id, m.seq FROM roots r JOIN :schema.lh_messages m ON m.queue = p_queue AND m.group_id = r.group_id AND m.seq >= r.from_seq
        UNION
        SELECT m.group_id, m.seq FROM chosen c
          JOIN :schema.lh_waits w ON p_dependents AND w.queue = p_queue AND w.on_seq = c.seq
          JOIN :schema.lh_messages m ON m.queue = p_queue AND m.group_id = w.group_id AND m.seq >= w.seq
      )
      SELECT coalesce(array_agg(c.seq ORDER BY c.seq DESC), '{}'), coalesce(array_agg(c.group_id ORDER BY c.seq DESC), '{}')
        INTO v_seqs, v_groups FROM chosen c;
      PERFORM 1 FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = ANY (v_groups)
        ORDER BY g.group_id COLLATE "C" FOR UPDATE;
      SELECT h.seq INTO v_leased FROM :schema.lh_groups g
        CROSS JOIN LATERAL (SELECT m.seq FROM :schema.lh_messages m WHERE m.queue = g.queue AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1) h
        WHERE g.queue = p_queue AND g.group_id = ANY (v_groups) AND g.holder IS NOT NULL AND g.locked_until >= v_now AND h.seq = ANY (v_seqs)
        LIMIT 1;
      IF FOUND THEN
        o_seq := -v_leased;
        RETURN NEXT;
        RETURN;
      END IF;
      -- Newest first: every waiter goes before what it waits for.
      FOR i IN 1 .. coalesce(array_length(v_seqs, 1), 0) LOOP
        IF :schema.lh_cancel(p_queue, v_seqs[i], v_now, NULL) > 0 THEN
          o_seq := v_seqs[i];
          o_group := v_groups[i];
          RETURN NEXT;
        END IF;
      END LOOP;
      IF v_dead IS NOT NULL AND :schema.lh_discard(p_queue, v_dead, NULL) THEN
        o_seq := v_dead;
        o_group := v_group;
        RETURN NEXT;
      END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
    END $function$;

-- function lh_remove_head(p_queue integer, p_group text, p_seq bigint)
CREATE OR REPLACE FUNCTION :schema.lh_remove_head(p_queue integer, p_group text, p_seq bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    DECLARE v_next bigint; v_not_before double precision;
    BEGIN
      DELETE FROM :schema.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq;
      SELECT m.seq, m.not_before INTO v_next, v_not_before FROM :schema.lh_messages m
        WHERE m.queue = p_queue AND m.group_id = p_group ORDER BY m.seq LIMIT 1;
      IF NOT FOUND THEN
        DELETE FROM :schema.lh_groups g WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
        RETURN false;
      END IF;
      UPDATE :schema.lh_groups g SET head_attempt = 0, holder = NULL, locked_until = v_not_before,
          first_seq = CASE WHEN g.claim_order = 0 THEN v_next ELSE g.first_seq END
        WHERE g.queue = p_queue AND g.group_id = p_group AND g.held_seq IS NULL;
      RETURN FOUND;
    END $function$;

-- function lh_resume(p_queue integer, p_group text, p_channel text)
CREATE OR REPLACE FUNCTION :schema.lh_resume(p_queue integer, p_group text, p_channel text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    DECLARE v_probe tid;
    BEGIN
      IF p_group IS NULL THEN
        UPDATE :schema.lh_queues q SET paused = NULL WHERE q.id = p_queue AND q.paused;
      ELSE
        DELETE FROM :schema.lh_paused_groups p WHERE p.queue = p_queue AND p.group_id = p_group;
        IF NOT FOUND THEN RETURN false; END IF;
        
      INSERT INTO :schema.lh_groups (queue, group_id, priority, first_seq) VALUES (p_queue, p_group, 0, 0)
        ON CONFLICT DO NOTHING RETURNING ctid INTO v_probe;
      IF v_probe IS NOT NULL THEN DELETE FROM :schema.lh_groups g WHERE g.ctid = v_probe; END IF;
        UPDATE :schema.lh_groups g SET paused = NULL WHERE g.queue = p_queue AND g.group_id = p_group;
        IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
        RETURN true;
      END IF;
      IF NOT FOUND THEN RETURN false; END IF;
      IF p_channel IS NOT NULL THEN PERFORM pg_notify(p_channel, ''); END IF;
      RETURN true;
    END $function$;

-- function lh_satisfy(p_queue integer, p_seq bigint)
CREATE OR REPLACE FUNCTION :schema.lh_satisfy(p_queue integer, p_seq bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      UPDATE :schema.lh_messages m SET waits = nullif(m.waits - 1, 0)
        FROM :schema.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq;
      UPDATE :schema.lh_messages m SET not_before = m.delay_until, delay_until = NULL
        FROM :schema.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq AND m.queue = p_queue AND m.group_id = w.group_id AND m.seq = w.seq
          AND m.waits IS NULL AND m.not_before = 9007199254740990;
      UPDATE :schema.lh_groups g SET locked_until = (SELECT m.not_before FROM :schema.lh_messages m
          WHERE m.queue = g.queue AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1)
        WHERE g.queue = p_queue AND g.locked_until = 9007199254740990
          AND g.group_id IN (SELECT w.group_id FROM :schema.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq);
      DELETE FROM :schema.lh_waits w WHERE w.queue = p_queue AND w.on_seq = p_seq;
    END $function$;

-- function lh_waited_gone()
CREATE OR REPLACE FUNCTION :schema.lh_waited_gone()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM :schema.lh_dead_letters d WHERE d.queue = OLD.queue AND d.seq = OLD.seq) THEN
        PERFORM :schema.lh_satisfy(OLD.queue, OLD.seq);
      END IF;
      RETURN NULL;
    END $function$;

-- function lh_waiter_gone()
CREATE OR REPLACE FUNCTION :schema.lh_waiter_gone()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
    BEGIN
      DELETE FROM :schema.lh_waits w WHERE w.queue = OLD.queue AND w.seq = OLD.seq;
      RETURN NULL;
    END $function$;

-- trigger lh_dead_letters.lh_dead_letter_counter
CREATE TRIGGER lh_dead_letter_counter BEFORE INSERT ON :schema.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION :schema.lh_dead_letter_counter();

-- trigger lh_dead_letters.lh_dead_letter_gone
CREATE TRIGGER lh_dead_letter_gone AFTER DELETE ON :schema.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION :schema.lh_dead_letter_gone();

-- trigger lh_groups.lh_group_created
CREATE TRIGGER lh_group_created BEFORE INSERT ON :schema.lh_groups FOR EACH ROW EXECUTE FUNCTION :schema.lh_group_created();

-- trigger lh_messages.lh_waited_gone
CREATE TRIGGER lh_waited_gone AFTER DELETE ON :schema.lh_messages FOR EACH ROW WHEN (old.watched) EXECUTE FUNCTION :schema.lh_waited_gone();

-- trigger lh_messages.lh_waiter_gone
CREATE TRIGGER lh_waiter_gone AFTER DELETE ON :schema.lh_messages FOR EACH ROW WHEN ((old.waits IS NOT NULL)) EXECUTE FUNCTION :schema.lh_waiter_gone();
