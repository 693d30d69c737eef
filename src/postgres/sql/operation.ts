/**
 * One operation's server-side source: the `CREATE OR REPLACE FUNCTION` statements (and the
 * triggers that call some of them) as they are today, for a quoted schema name. Installed after
 * the table migrations by `installOperations`; never versioned one by one.
 * @internal
 */
export interface SqlOperation {
  /** `CREATE OR REPLACE FUNCTION <s>.lh_…` statements, in an order that needs none before it. */
  functions(s: string): string[];
  /** `CREATE [CONSTRAINT] TRIGGER lh_… ON <s>.lh_…` statements, run after every function exists. */
  triggers?(s: string): string[];
}
