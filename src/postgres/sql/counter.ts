/**
 * Message numbers (`Lease.counter`, with `Lease.revision`) kept by a dead letter, and the low-water mark.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const counter: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_dead_letter_counter() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT m.counter, m.revision INTO NEW.counter, NEW.revision FROM ${s}.lh_messages m WHERE m.queue = NEW.queue AND m.group_id = NEW.group_id AND m.seq = NEW.seq;
      RETURN NEW;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_low_water(p_queue integer) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      RETURN (SELECT min(m.counter) FROM ${s}.lh_messages m WHERE m.queue = p_queue);
    END $$`,
  ],
  triggers: (s) => [
    `CREATE TRIGGER lh_dead_letter_counter BEFORE INSERT ON ${s}.lh_dead_letters FOR EACH ROW EXECUTE FUNCTION ${s}.lh_dead_letter_counter()`,
  ],
};
