/**
 * The owner's side of the browser host: the SQL host (see remote/host.ts) with its call
 * journal, served by group commit (remote/batches.ts). Free of DOM APIs, so it runs (and is
 * tested) anywhere. What is browser-specific is only which calls are journaled: those forwarded
 * from another tab, whose host sends them again to the next owner if this one dies.
 * @internal
 */
import { LeaseholdError } from '../errors.js';
import type { SqlDatabase } from '../sqlite/driver.js';
import type { DeadLetterPolicy } from '../transport/contract.js';
import { GroupCommit } from '../remote/batches.js';
import { SqlHost } from '../remote/host.js';
import { methodSpec, type Target } from '../remote/methods.js';
import type { CallMessage } from './protocol.js';
import type { SqlTracer } from './trace.js';

export interface CoreOptions {
  /** The database's name as the page opened it, for errors (default: the file's name). */
  name?: string;
  maxAttempts?: number;
  maxEventBytes?: number;
  onDeadLetter?: DeadLetterPolicy;
  traceMax?: number;
  /** Called after a commit that may make work claimable in `queue`. */
  onChange?: (queue: string) => void;
  /** Records the SQL of claims and acks (the demo's SQL panel). Absent: nothing is wrapped or recorded. */
  trace?: SqlTracer;
}

/**
 * The methods of target `'host'` the owner serves, beside the contracts' method table: the
 * database's origin and the SQL trace. (`owner` is answered by each tab's own election.)
 */
export const HOST_METHODS: readonly string[] = ['origin', 'sqlTrace'];

/**
 * The answer to a call whose method this host does not know. The page's own proxies send only
 * methods its build knows, so the call came from a tab of another build: say so, and that
 * nothing was applied, rather than answer with another method's result.
 */
export function unknownMethod(name: string, target: string, method: string): LeaseholdError {
  return new LeaseholdError(
    'UNKNOWN_METHOD',
    `${target}.${method} is not a method the leasehold serving database ${JSON.stringify(name)} knows: the tab that owns it runs another (older) build of leasehold. ` +
      'Nothing was applied. Reload the tabs of this site so that they run one version.',
  );
}

export class HostCore {
  readonly #host: SqlHost;
  readonly #commits: GroupCommit;
  /** The database's name, for errors. */
  readonly #name: string;

  /** @throws StorageError when the schema cannot be created or migrated. */
  constructor(db: SqlDatabase, options: CoreOptions = {}) {
    this.#name = options.name ?? db.filename;
    this.#host = new SqlHost(db, {
      journal: true,
      ...(options.trace ? { tracer: options.trace } : {}),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      ...(options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes }),
      ...(options.onDeadLetter === undefined ? {} : { onDeadLetter: options.onDeadLetter }),
      ...(options.traceMax === undefined ? {} : { traceMax: options.traceMax }),
    });
    this.#commits = new GroupCommit(this.#host, options.onChange);
  }

  /**
   * Serves one call: queues it behind `caller`'s earlier calls and settles once the batch that
   * applied it has committed, with the answer the caller's proxy expects (for save/commit, the
   * new version). Rejects with the backend's own error (to be sent across as data), a
   * LeaseholdError `UNKNOWN_METHOD` for a method that is not part of the contracts (a tab of
   * another build sent it; nothing is applied), a TypeError for malformed arguments, the commit's error if the shared COMMIT
   * failed, or a ClosedError once {@link close} was called.
   *
   * `journaled`: the call may be a retry (it came from another tab, whose host sends it again if
   * the owner changes), so its answer is journaled and a retry is answered from the journal. The
   * owner's own page never retries (if the owner's tab dies, so does the page), so its calls skip
   * the journal and the write it costs.
   */
  serve(call: CallMessage, journaled = true, caller = 'default'): Promise<unknown> {
    const { id, target, method, args, queue, now } = call;
    if (!methodSpec(target, method)) return Promise.reject(unknownMethod(this.#name, String(target), String(method)));
    return this.#commits.serve(
      { target: target as Target, method, args, now, ...(queue === undefined ? {} : { queue }), ...(journaled ? { journalId: id } : {}) },
      caller,
    );
  }

  /** Closes the backends and the database; calls still queued reject with a ClosedError. */
  async close(): Promise<void> {
    this.#commits.close();
    await this.#host.close();
  }
}
