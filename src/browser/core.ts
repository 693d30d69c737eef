/**
 * The owner's side of the browser host: the SQL host (see remote/host.ts) with its call
 * journal, served by group commit (remote/batches.ts). Free of DOM APIs, so it runs (and is
 * tested) anywhere. What is browser-specific is only which calls are journaled: those forwarded
 * from another tab, whose host sends them again to the next owner if this one dies.
 * @internal
 */
import type { SqlDatabase } from '../sqlite/driver.js';
import type { DeadLetterPolicy } from '../transport/contract.js';
import { GroupCommit } from '../remote/batches.js';
import { SqlHost } from '../remote/host.js';
import type { Target } from '../remote/methods.js';
import type { CallMessage } from './protocol.js';
import type { SqlTracer } from './trace.js';

export interface CoreOptions {
  maxAttempts?: number;
  onDeadLetter?: DeadLetterPolicy;
  traceMax?: number;
  /** Called after a commit that may make work claimable in `queue`. */
  onChange?: (queue: string) => void;
  /** Records the SQL of claims and acks (the demo's SQL panel). Absent: nothing is wrapped or recorded. */
  trace?: SqlTracer;
}

export class HostCore {
  readonly #host: SqlHost;
  readonly #commits: GroupCommit;

  /** @throws StorageError when the schema cannot be created or migrated. */
  constructor(db: SqlDatabase, options: CoreOptions = {}) {
    this.#host = new SqlHost(db, {
      journal: true,
      ...(options.trace ? { tracer: options.trace } : {}),
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      ...(options.onDeadLetter === undefined ? {} : { onDeadLetter: options.onDeadLetter }),
      ...(options.traceMax === undefined ? {} : { traceMax: options.traceMax }),
    });
    this.#commits = new GroupCommit(this.#host, options.onChange);
  }

  /**
   * Serves one call: queues it behind `caller`'s earlier calls and settles once the batch that
   * applied it has committed, with the answer the caller's proxy expects (for save/commit, the
   * new version). Rejects with the backend's own error (to be sent across as data), a TypeError
   * for a method that is not part of the contracts, the commit's error if the shared COMMIT
   * failed, or a ClosedError once {@link close} was called.
   *
   * `journaled`: the call may be a retry (it came from another tab, whose host sends it again if
   * the owner changes), so its answer is journaled and a retry is answered from the journal. The
   * owner's own page never retries (if the owner's tab dies, so does the page), so its calls skip
   * the journal and the write it costs.
   */
  serve(call: CallMessage, journaled = true, caller = 'default'): Promise<unknown> {
    const { id, target, method, args, queue, now } = call;
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
