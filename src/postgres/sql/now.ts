/**
 * The server's clock in milliseconds, for calls that pass no clock reading (`p_now` NULL).
 * @internal
 */
import type { SqlOperation } from './operation.js';

export const now: SqlOperation = {
  functions: (s) => [
    `CREATE OR REPLACE FUNCTION ${s}.lh_now() RETURNS double precision LANGUAGE sql VOLATILE AS
      $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::double precision $$`,
  ],
};
