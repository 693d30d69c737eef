/**
 * A consuming process to be killed: runs consume() (4 at once) on a better-sqlite3 file and
 * reports every transport call it makes on stdout, waiting until each line is in the pipe before
 * the call returns to consume() (Node keeps a write to a full pipe in the process's memory, which
 * a SIGKILL loses): a lease is reported before its handler runs, an ack before it is sent.
 * Lines, each ending in ` $` so a torn line could never parse:
 *   `L <seq> <group> <attempt> <t> <expiresAt>` a lease it got (claim, claimMany, ackAndClaim,
 *   ackAndClaimMany);
 *   `a <seq> <attempt> <t>` an ack about to be sent; `A <seq> <attempt> ok|lost` its outcome;
 *   `E <seq> <attempt> <t> <expiresAt>|lost` a renewal.
 * Times are the transport's clock (Date.now), so the parent's history checker can use them.
 */
import { consume } from '../../src/consume/consume.js';
import { LeaseLostError } from '../../src/errors.js';
import { openBetterSqliteDatabase } from '../../src/sqlite/better.js';
import type { Lease, Transport } from '../../src/transport/contract.js';
import { SqliteTransport } from '../../src/transport/sqlite.js';

const [file, visibility] = process.argv.slice(2);
const VISIBILITY_MS = Number(visibility);
const db = await openBetterSqliteDatabase(file!);
const transport = new SqliteTransport(db);
/** Resolves once the line has been handed to the kernel (it then outlives a SIGKILL). */
const say = (line: string) => new Promise<void>((resolve) => process.stdout.write(`${line} $\n`, () => resolve()));
const leased = async (lease: Lease | null) => {
  if (lease) await say(`L ${lease.seq} ${lease.groupId} ${lease.attempt} ${lease.expiresAt - VISIBILITY_MS} ${lease.expiresAt}`);
  return lease;
};
const intent = (lease: Lease) => say(`a ${lease.seq} ${lease.attempt} ${Date.now()}`);
const outcome = async <T>(lease: Lease, call: () => Promise<T>): Promise<T> => {
  await intent(lease);
  try {
    const value = await call();
    await say(`A ${lease.seq} ${lease.attempt} ok`);
    return value;
  } catch (error) {
    if (error instanceof LeaseLostError) await say(`A ${lease.seq} ${lease.attempt} lost`);
    throw error;
  }
};

const recorded: Transport = new Proxy(transport, {
  get(target, property) {
    const value = Reflect.get(target, property) as unknown;
    if (typeof value !== 'function') return value;
    const call = (...args: unknown[]) => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    switch (property) {
      case 'claim':
        return async (...args: unknown[]) => leased((await call(...args)) as Lease | null);
      case 'claimMany':
        return async (...args: unknown[]) => {
          const leases = (await call(...args)) as Lease[];
          for (const lease of leases) await leased(lease);
          return leases;
        };
      case 'ackAndClaim':
        return async (lease: Lease, ...rest: unknown[]) => leased(await outcome(lease, () => call(lease, ...rest) as Promise<Lease | null>));
      case 'ack':
        return (lease: Lease) => outcome(lease, () => call(lease));
      case 'ackMany':
        return async (leases: Lease[]) => {
          for (const lease of leases) await intent(lease);
          const result = (await call(leases)) as { acked: Lease[]; lost: Lease[] };
          for (const lease of result.acked) await say(`A ${lease.seq} ${lease.attempt} ok`);
          for (const lease of result.lost) await say(`A ${lease.seq} ${lease.attempt} lost`);
          return result;
        };
      case 'ackAndClaimMany':
        return async (leases: Lease[], ...rest: unknown[]) => {
          for (const lease of leases) await intent(lease);
          const result = (await call(leases, ...rest)) as { acked: Lease[]; lost: Lease[]; claimed: Lease[] };
          for (const lease of result.acked) await say(`A ${lease.seq} ${lease.attempt} ok`);
          for (const lease of result.lost) await say(`A ${lease.seq} ${lease.attempt} lost`);
          for (const lease of result.claimed) await leased(lease);
          return result;
        };
      case 'extend':
        return async (lease: Lease, ms: number) => {
          const t = Date.now();
          try {
            const renewed = (await call(lease, ms)) as Lease;
            await say(`E ${lease.seq} ${lease.attempt} ${t} ${renewed.expiresAt}`);
            return renewed;
          } catch (error) {
            if (error instanceof LeaseLostError) await say(`E ${lease.seq} ${lease.attempt} ${t} lost`);
            throw error;
          }
        };
      default:
        return call;
    }
  },
});

await say('READY');
let n = 0;
consume(
  recorded,
  // Some handlers finish at once, some take a few milliseconds: kills land in every phase.
  async () => {
    if (++n % 3 !== 0) await new Promise((resolve) => setTimeout(resolve, n % 7));
  },
  { workerId: `child-${process.pid}`, visibilityMs: VISIBILITY_MS, concurrency: 4, idleMinMs: 5, idleMaxMs: 20, onError: () => {} },
);
