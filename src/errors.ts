/**
 * Errors leasehold raises on purpose. Callers branch on the class (`instanceof`) or, where
 * classes do not survive (postMessage, logs), on the stable `code` string.
 *
 * Invalid arguments are not LeaseholdErrors: they are plain `TypeError` (wrong type) or
 * `RangeError` (right type, bad value) naming the argument, raised before anything is written.
 */

/** Stable codes of {@link LeaseholdError}; new codes may be added, existing ones never change meaning. */
export type LeaseholdErrorCode =
  | 'LEASE_LOST'
  | 'STORE_CONFLICT'
  | 'NOT_FOUND'
  | 'MESSAGE_LEASED'
  | 'CLOSED'
  | 'STORAGE_FULL'
  | 'STORAGE_CORRUPT'
  | 'STORAGE_BUSY'
  | 'STORAGE_UNAVAILABLE'
  | 'STORAGE_FAILED'
  | 'SCHEMA_TOO_NEW'
  | 'DRIVER_MISSING'
  /**
   * A host was asked for a method it does not know: the call came from a tab (or client) of
   * another leasehold build than the host's. Nothing was applied.
   */
  | 'UNKNOWN_METHOD'
  /** A transport was opened with options that contradict the queue's own (its `onDeadLetter`). */
  | 'QUEUE_MISMATCH'
  /**
   * A remote host refused the caller's credentials (HTTP 401 or 403), or a database refused the
   * connection's credentials or a privilege (a `StorageError`): nothing was applied.
   */
  | 'ACCESS_DENIED'
  /** A workflow's code no longer makes the steps its recorded history has (leasehold/workflow). */
  | 'WORKFLOW_NONDETERMINISM'
  /** A child workflow failed or was cancelled; its parent's `step.child` rejects with this. */
  | 'WORKFLOW_CHILD_FAILED'
  /** A workflow step threw on each of its `maxAttempts`; its `step.run` rejects with this. */
  | 'WORKFLOW_STEP_FAILED'
  /** A workflow whose result was awaited (`Workflows.result`) failed or was cancelled. */
  | 'WORKFLOW_FAILED'
  /** An execution names a workflow this worker has not registered, or is no workflow at all. */
  | 'WORKFLOW_UNKNOWN';

/** The base class of every error leasehold raises on purpose. `cause` keeps the original error, if any. */
export class LeaseholdError extends Error {
  override name = 'LeaseholdError';
  readonly code: LeaseholdErrorCode;

  constructor(code: LeaseholdErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The lease `(seq, attempt)` no longer holds its message: the message was claimed again after
 * the lease ran out, was acked, released by `nack(0)` or parked. Nothing was changed.
 * The caller must drop the work it did under this lease (another worker owns it now).
 */
export class LeaseLostError extends LeaseholdError {
  override name = 'LeaseLostError';

  constructor(
    readonly seq: number,
    readonly attempt: number,
    readonly groupId: string,
  ) {
    super(
      'LEASE_LOST',
      `lease ${seq}#${attempt} of group ${JSON.stringify(groupId)} is no longer held: ` +
        'the message was acked, released, parked or claimed again after the lease ran out',
    );
  }
}

/**
 * Optimistic concurrency failed: the stored execution is at version `found`, but the writer
 * held version `expected`. Nothing was written; reload the execution and retry, or drop the work.
 */
export class StoreConflictError extends LeaseholdError {
  override name = 'StoreConflictError';

  constructor(
    readonly executionId: string,
    readonly expected: number,
    readonly found: number,
  ) {
    super(
      'STORE_CONFLICT',
      `execution ${JSON.stringify(executionId)} is at version ${found}, not ${expected}: ` +
        'another writer committed first; reload and retry',
    );
  }
}

/** The underlying storage failed (full, corrupt, locked, unavailable). The transaction was rolled back whole. */
export class StorageError extends LeaseholdError {
  override name = 'StorageError';
}

/** A call on a transport, store or database after its `close()`. */
export class ClosedError extends LeaseholdError {
  override name = 'ClosedError';

  constructor(what: string) {
    super('CLOSED', `${what} is closed`);
  }
}

/**
 * The database was written by a newer leasehold: a component of its schema (`'core'`, the
 * transport and store tables; `'host'`, the browser host's call journal) is at version `found`,
 * and this leasehold knows versions up to `supported` only. Nothing was read or changed, and the
 * data is fine: upgrade leasehold (in every process and tab that opens the database) to open it.
 * Not a {@link StorageError}: the storage did not fail, and its advice (restore a copy, free
 * space) would be wrong here.
 */
export class SchemaTooNewError extends LeaseholdError {
  override name = 'SchemaTooNewError';

  /**
   * @param database what holds the schema, for the message: `database "queue.db"`, or a
   *   PostgreSQL schema and server.
   */
  constructor(
    readonly database: string,
    readonly component: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      'SCHEMA_TOO_NEW',
      `${database} has leasehold schema version ${found} (${component}), newer than the ${supported} this leasehold supports: ` +
        'it was written by a newer version of leasehold. Upgrade leasehold to open it; nothing was changed.',
    );
  }
}
