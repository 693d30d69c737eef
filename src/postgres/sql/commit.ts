/**
 * The execution store's commit as one statement, and its trace ring.
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const commit: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_record(p_id text, p_step text, p_explicit boolean, p_trace_max bigint) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE v_position bigint;
    BEGIN
      INSERT INTO ${s}.lh_trace_cursors AS c (execution_id, next_index) VALUES (p_id, 1)
        ON CONFLICT (execution_id) DO UPDATE SET next_index = c.next_index + 1 RETURNING c.next_index - 1 INTO v_position;
      INSERT INTO ${s}.lh_trace (execution_id, position, step) VALUES (p_id, v_position,
        CASE WHEN p_explicit THEN p_step
             WHEN p_step = '{}' THEN '{"index":' || v_position || '}'
             ELSE left(p_step, -1) || ',"index":' || v_position || '}' END);
      -- Positions of one execution are contiguous: everything at or below this is outside the ring.
      IF p_trace_max > 0 AND v_position >= p_trace_max THEN
        DELETE FROM ${s}.lh_trace t WHERE t.execution_id = p_id AND t.position <= v_position - p_trace_max;
      END IF;
    END $$`,

    `CREATE OR REPLACE FUNCTION ${s}.lh_commit(p_id text, p_expected bigint, p_body text, p_emits json, p_processed text, p_timers json,
        p_spawns json, p_step text, p_explicit boolean, p_trace_max bigint) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE v_found bigint;
    BEGIN
      INSERT INTO ${s}.lh_executions AS e (id, version, body) VALUES (p_id, p_expected + 1, p_body)
        ON CONFLICT (id) DO UPDATE SET version = excluded.version, body = excluded.body WHERE e.version = p_expected;
      IF NOT FOUND THEN
        SELECT e.version INTO v_found FROM ${s}.lh_executions e WHERE e.id = p_id;
        RETURN v_found;
      END IF;
      INSERT INTO ${s}.lh_outbox (target_id, event) SELECT x->>0, x->>1 FROM json_array_elements(p_emits) WITH ORDINALITY AS a(x, n) ORDER BY n;
      IF p_processed IS NOT NULL THEN
        INSERT INTO ${s}.lh_processed (execution_id, event_id) VALUES (p_id, p_processed) ON CONFLICT DO NOTHING;
      END IF;
      DECLARE t json;
      BEGIN
        -- In order: a later change of the same path wins, as in the other stores.
        FOR t IN SELECT x FROM json_array_elements(p_timers) WITH ORDINALITY AS a(x, n) ORDER BY n LOOP
          IF t->>1 IS NULL THEN
            DELETE FROM ${s}.lh_timers tm WHERE tm.execution_id = p_id AND tm.path = t->>0;
          ELSE
            INSERT INTO ${s}.lh_timers AS tm (execution_id, path, fire_at) VALUES (p_id, t->>0, (t->>1)::double precision)
              ON CONFLICT (execution_id, path) DO UPDATE SET fire_at = excluded.fire_at;
          END IF;
        END LOOP;
      END;
      INSERT INTO ${s}.lh_spawns (parent_id, child_id, root_path, context)
        SELECT p_id, x->>0, x->>1, x->>2 FROM json_array_elements(p_spawns) WITH ORDINALITY AS a(x, n) ORDER BY n;
      IF p_step IS NOT NULL THEN PERFORM ${s}.lh_record(p_id, p_step, p_explicit, p_trace_max); END IF;
      RETURN NULL;
    END $$`,
  ],
};
