/**
 * Migration 10: loss detection, as on SQLite (see `Lease.origin`, `counter`, `lowWater`). The
 * schema gets its origin (`lh_origin`, a random id made here), each queue a counter of
 * publishes (`lh_queues.last_counter`), each message and dead letter its number.
 *
 * Seqs come from a sequence, which is not transactional (a rolled-back publish leaves a gap),
 * so the number is taken apart from them: by a deferred constraint trigger, at COMMIT, for each
 * message still without one, under the queue row's lock. At commit, because every publish
 * function locks its group rows as it goes: a lock on the queue row taken with the first insert
 * would be held while the next item locks its group, and a concurrent publish holding that group
 * and waiting for the queue row would deadlock with it. At commit a transaction takes no lock
 * after the queue row's, and holds it only while it commits: publishes of one queue serialize
 * on their commits, and numbers are given in commit order, so a reader never sees a number
 * before a lower one that will still commit — which is what makes the low-water mark sound.
 * A publish that fails rolls back with its number; a `'skip'` duplicate inserts no row; a
 * replace or merge updates the row and keeps its number. A dead letter takes its message's
 * number (a trigger, so every path that buries one does), and `lh_redrive` gives it back.
 * @internal
 */
import { redriveFunction } from './transport-after-sql.js';

export function transportOriginMigration(s: string): string[] {
  return [
    `CREATE TABLE ${s}.lh_origin (id integer PRIMARY KEY CHECK (id = 1), origin text NOT NULL)`,
    `INSERT INTO ${s}.lh_origin (id, origin) VALUES (1, replace(gen_random_uuid()::text, '-', ''))`,
    `ALTER TABLE ${s}.lh_messages ADD COLUMN counter bigint`,
    `ALTER TABLE ${s}.lh_dead_letters ADD COLUMN counter bigint`,
    `ALTER TABLE ${s}.lh_queues ADD COLUMN last_counter bigint NOT NULL DEFAULT 0`,
    // Messages and dead letters already there are numbered by their seq; the counter goes on above.
    `UPDATE ${s}.lh_messages SET counter = seq`,
    `UPDATE ${s}.lh_dead_letters SET counter = seq`,
    `UPDATE ${s}.lh_queues q SET last_counter = greatest(
       (SELECT coalesce(max(m.seq), 0) FROM ${s}.lh_messages m WHERE m.queue = q.id),
       (SELECT coalesce(max(d.seq), 0) FROM ${s}.lh_dead_letters d WHERE d.queue = q.id))`,
    `CREATE INDEX lh_messages_by_counter ON ${s}.lh_messages (queue, counter)`,

    `CREATE FUNCTION ${s}.lh_take_counter() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE v_counter bigint;
    BEGIN
      -- Nothing to take when the message is gone or numbered since (a redrive gives its message its dead letter's number).
      UPDATE ${s}.lh_queues q SET last_counter = q.last_counter + 1 WHERE q.id = NEW.queue
        AND EXISTS (SELECT 1 FROM ${s}.lh_messages m WHERE m.queue = NEW.queue AND m.group_id = NEW.group_id AND m.seq = NEW.seq AND m.counter IS NULL)
        RETURNING q.last_counter INTO v_counter;
      IF NOT FOUND THEN RETURN NULL; END IF;
      UPDATE ${s}.lh_messages m SET counter = v_counter WHERE m.queue = NEW.queue AND m.group_id = NEW.group_id AND m.seq = NEW.seq;
      RETURN NULL;
    END $$`,
    `CREATE CONSTRAINT TRIGGER lh_counter_taken AFTER INSERT ON ${s}.lh_messages DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW WHEN (NEW.counter IS NULL) EXECUTE FUNCTION ${s}.lh_take_counter()`,

    `CREATE FUNCTION ${s}.lh_dead_letter_counter() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT m.counter INTO NEW.counter FROM ${s}.lh_messages m WHERE m.queue = NEW.queue AND m.group_id = NEW.group_id AND m.seq = NEW.seq;
      RETURN NEW;
    END $$`,
    `CREATE TRIGGER lh_dead_letter_counter BEFORE INSERT ON ${s}.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION ${s}.lh_dead_letter_counter()`,
    redriveFunction(s, true),

    // What a claim's lease carries besides the row its function returns. VOLATILE: called in the
    // claim statement's select list, each reads with a snapshot taken after the claim function ran.
    `CREATE FUNCTION ${s}.lh_counter_of(p_queue integer, p_group text, p_seq bigint) RETURNS bigint LANGUAGE sql VOLATILE AS
      $$ SELECT m.counter FROM ${s}.lh_messages m WHERE m.queue = p_queue AND m.group_id = p_group AND m.seq = p_seq $$`,
    `CREATE FUNCTION ${s}.lh_low_water(p_queue integer) RETURNS bigint LANGUAGE sql VOLATILE AS
      $$ SELECT min(m.counter) FROM ${s}.lh_messages m WHERE m.queue = p_queue $$`,
  ];
}
