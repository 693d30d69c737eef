/**
 * One queue spread over N transports (N Durable Objects, N named queues of one database, any N
 * transports): a group lives in the part its id hashes to, so FIFO order and one message in
 * flight hold per group exactly as in one transport, while the parts' throughput adds up. A
 * claim asks the parts in turn. The transport conformance suite runs on it
 * (test/transport-spread.test.ts), with the limits below as its capability gates.
 *
 * Limits (also in the README):
 * - N is fixed for the life of the queue: another N sends a group to another part, whose
 *   queue does not have its messages. To change N, drain the queue first.
 * - Round-robin order and priorities hold within each part, not across them: a claim takes
 *   the next group of the part whose turn it is.
 * - `publishMany`, `claimMany` and `ackMany` are one transaction per part, not across parts:
 *   every item is checked before anything is sent, but a storage failure of one part can leave
 *   the other parts' shares done. `ackAndClaimMany` is `ackMany` then `claimMany`: two steps,
 *   so another caller's claim can come between them, and when the claims fail the call rejects
 *   with its acks already done (a retry then finds those leases lost).
 * - A seq is `localSeq * N + index`: unique and increasing within a group, not across groups.
 * - A lease's `origin`, `counter` and `lowWater` are its part's, passed through: each part is
 *   its own sequence for a server (its own origin, N Durable Objects; or its own queue name, N
 *   named queues of one database), gap-free on its own, not across parts.
 * - Events must be JSON (checked here, whatever the parts keep): over in-memory parts a
 *   non-JSON event is refused, yet a lease carries the very object that was published.
 * - An empty claim costs N calls; idle consumers should wait on `onChange` instead of polling.
 */
import { checkClaim, checkClaimMany, checkLease, checkLeases, checkPublish, checkPublishItems, checkRemoveOptions, checkSeq, type PublishArgs } from './shared.js';
import { checkId, toJson } from '../validate.js';
import type {
  AckAndClaimManyResult,
  AckManyResult,
  ChangeNotifier,
  ClaimManyOptions,
  ClaimOptions,
  DeadLetter,
  GroupInspection,
  Lease,
  PublishItem,
  PublishOptions,
  RemoveOptions,
  Transport,
  TransportSnapshot,
  TransportStats,
} from './contract.js';
import { isChangeNotifier } from './contract.js';
import { LeaseLostError } from '../errors.js';

/**
 * The part a group lives in is `groupHash(groupId) % N`: FNV-1a over the UTF-16 code units, an
 * unsigned 32-bit integer, stable across runtimes and releases (it decides where data lives).
 * @throws TypeError when `groupId` is not a string.
 */
export function groupHash(groupId: string): number {
  if (typeof groupId !== 'string') throw new TypeError(`groupId must be a string, got ${typeof groupId}`);
  let hash = 0x811c9dc5;
  for (let i = 0; i < groupId.length; i++) {
    hash ^= groupId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * A {@link Transport} over `parts` (N ≥ 1, order fixed for the queue's life): see the module
 * comment for what holds across parts and what only within one. Events must be JSON (checked
 * here, before any part is called). `close()` closes every part.
 * @throws TypeError when `parts` is not a non-empty array of transports.
 */
export function spreadTransport<E = unknown>(parts: readonly Transport<E>[]): Transport<E> & ChangeNotifier {
  if (!Array.isArray(parts) || parts.length === 0 || parts.some((p) => typeof p?.claim !== 'function')) {
    throw new TypeError('parts must be a non-empty array of transports');
  }
  const n = parts.length;
  let turn = 0;
  const indexOf = (groupId: string) => groupHash(groupId) % n;
  const partOf = (groupId: string) => parts[indexOf(groupId)]!;
  const toGlobal = (seq: number, index: number) => seq * n + index;
  const outLease = (lease: Lease<E> | null, index: number): Lease<E> | null => (lease ? { ...lease, seq: toGlobal(lease.seq, index) } : null);
  const inLease = (lease: Lease<E>): Lease<E> => ({ ...lease, seq: Math.floor(lease.seq / n) });
  /** The lease as its part knows it, or null when its seq cannot be of its group's part (then it holds nothing). */
  const localLease = (lease: Lease<E>): Lease<E> | null => (lease.seq % n === indexOf(lease.groupId) ? inLease(lease) : null);
  /**
   * Checks `lease` and routes `use` to its part; a lease that cannot be of that part is lost.
   * The part's LeaseLostError names its own seq: the caller is told the seq it holds.
   */
  const withLease = async <T>(lease: Lease<E>, use: (part: Transport<E>, local: Lease<E>) => Promise<T>): Promise<T> => {
    checkLease(lease, null);
    const local = localLease(lease);
    if (!local) throw new LeaseLostError(lease.seq, lease.attempt, lease.groupId);
    try {
      return await use(partOf(lease.groupId), local);
    } catch (error) {
      throw error instanceof LeaseLostError ? new LeaseLostError(lease.seq, lease.attempt, lease.groupId) : error;
    }
  };
  /** Claims from the parts in turn, starting with the next one, until `take` finds something. */
  const rotate = async <T>(take: (part: Transport<E>, index: number) => Promise<T | null>): Promise<T | null> => {
    const start = turn;
    turn = (turn + 1) % n;
    for (let k = 0; k < n; k++) {
      const index = (start + k) % n;
      const found = await take(parts[index]!, index);
      if (found !== null) return found;
    }
    return null;
  };
  const bySeq = (seq: number): [Transport<E>, number, number] => [parts[seq % n]!, Math.floor(seq / n), seq % n];
  /**
   * `options` with `after` in the part's own seqs. A part keeps order only among its own
   * messages, so a seq or a group of another part (of a group that hashes elsewhere) is refused.
   */
  const localAfter = (groupId: string, { after, afterGroups }: PublishArgs, options: PublishOptions | undefined, at = ''): PublishOptions | undefined => {
    if (after.length === 0 && afterGroups.length === 0) return options;
    const index = indexOf(groupId);
    const refuse = (what: string) => {
      throw new RangeError(`${at}options.after names ${what}, of another part of this spread queue than group ${JSON.stringify(groupId)}: a spreadTransport keeps after only between groups of one part`);
    };
    for (const seq of after) if (seq % n !== index) refuse(`seq ${seq}`);
    for (const group of afterGroups) if (indexOf(group) !== index) refuse(`group ${JSON.stringify(group)}`);
    return { ...options, after: [...after.map((seq) => Math.floor(seq / n)), ...afterGroups.map((group) => ({ group }))] };
  };

  const transport: Transport<E> & ChangeNotifier = {
    async publish(groupId: string, event: E, options?: PublishOptions) {
      const args = checkPublish(groupId, options);
      toJson('event', event);
      return toGlobal(await partOf(groupId).publish(groupId, event, localAfter(groupId, args, options)), indexOf(groupId));
    },
    async publishMany(input: readonly PublishItem<E>[]) {
      const checked = checkPublishItems<E>(input);
      checked.forEach((item, i) => toJson(`items[${i}].event`, item.event));
      const items = checked.map(({ groupId, args }, i) => ({ ...input[i]!, options: localAfter(groupId, args, input[i]!.options, `items[${i}].`) }));
      const byPart = new Map<number, number[]>();
      items.forEach((item, i) => byPart.set(indexOf(item.groupId), [...(byPart.get(indexOf(item.groupId)) ?? []), i]));
      const seqs: number[] = new Array<number>(items.length);
      await Promise.all(
        [...byPart].map(async ([index, positions]) => {
          const local = await parts[index]!.publishMany(positions.map((i) => items[i]!));
          positions.forEach((position, k) => (seqs[position] = toGlobal(local[k]!, index)));
        }),
      );
      return seqs;
    },
    async claim(workerId: string, visibilityMs: number, options?: ClaimOptions) {
      checkClaim(workerId, visibilityMs, options);
      return rotate(async (part, index) => outLease(await part.claim(workerId, visibilityMs, options), index));
    },
    async claimMany(workerId: string, visibilityMs: number, options: ClaimManyOptions) {
      const { max } = checkClaimMany(workerId, visibilityMs, options);
      const leases: Lease<E>[] = [];
      await rotate(async (part, index) => {
        const got = await part.claimMany(workerId, visibilityMs, { ...options, max: max - leases.length });
        for (const lease of got) leases.push(outLease(lease, index)!);
        return leases.length === max ? true : null;
      });
      return leases;
    },
    async ack(lease: Lease<E>) {
      await withLease(lease, (part, local) => part.ack(local));
    },
    async ackMany(leases: readonly Lease<E>[]): Promise<AckManyResult<E>> {
      checkLeases<E>(leases, null);
      const local = leases.map(localLease);
      const done = new Set<number>(); // positions acked
      const byPart = new Map<number, number[]>();
      local.forEach((lease, i) => lease && byPart.set(indexOf(lease.groupId), [...(byPart.get(indexOf(lease.groupId)) ?? []), i]));
      await Promise.all(
        [...byPart].map(async ([index, positions]) => {
          // A part answers with the very objects it was given, so they identify the positions.
          const acked = new Set((await parts[index]!.ackMany(positions.map((i) => local[i]!))).acked);
          for (const i of positions) if (acked.has(local[i]!)) done.add(i);
        }),
      );
      return { acked: leases.filter((_, i) => done.has(i)), lost: leases.filter((_, i) => !done.has(i)) };
    },
    async ackAndClaimMany(leases: readonly Lease<E>[], workerId: string, visibilityMs: number, options: ClaimManyOptions): Promise<AckAndClaimManyResult<E>> {
      checkLeases<E>(leases, null);
      checkClaimMany(workerId, visibilityMs, options);
      const done = await transport.ackMany(leases);
      return { ...done, claimed: await transport.claimMany(workerId, visibilityMs, options) };
    },
    async ackAndClaim(lease: Lease<E>, workerId: string, visibilityMs: number, options?: ClaimOptions) {
      checkLease(lease, null);
      checkClaim(workerId, visibilityMs, options);
      // One step in the lease's own part; the other parts are asked only if it has nothing.
      const next = await withLease(lease, async (part, local) => outLease(await part.ackAndClaim(local, workerId, visibilityMs, options), indexOf(lease.groupId)));
      return next ?? transport.claim(workerId, visibilityMs, options);
    },
    async nack(lease: Lease<E>, delayMs?: number, reason?: string) {
      await withLease(lease, (part, local) => part.nack(local, delayMs, reason));
    },
    async release(lease: Lease<E>, delayMs?: number, reason?: string) {
      await withLease(lease, (part, local) => part.release(local, delayMs, reason));
    },
    async reject(lease: Lease<E>, reason?: string) {
      await withLease(lease, (part, local) => part.reject(local, reason));
    },
    async extend(lease: Lease<E>, visibilityMs: number) {
      const renewed = await withLease(lease, (part, local) => part.extend(local, visibilityMs));
      return { ...renewed, seq: lease.seq };
    },
    async inspect() {
      const snapshots: TransportSnapshot<E>[] = await Promise.all(parts.map((part) => part.inspect()));
      // Paused if any part is: a pause() that reached only some parts must not read as running.
      const merged: TransportSnapshot<E> = { now: Math.max(...snapshots.map((s) => s.now)), paused: snapshots.some((s) => s.paused), groups: [], deadLetters: [] };
      snapshots.forEach((snapshot, index) => {
        for (const group of snapshot.groups) merged.groups.push({ ...group, heldBy: group.heldBy === null ? null : toGlobal(group.heldBy, index), messages: group.messages.map((m) => ({ ...m, seq: toGlobal(m.seq, index), waitsFor: m.waitsFor.map((seq) => toGlobal(seq, index)) })) });
        for (const letter of snapshot.deadLetters) merged.deadLetters.push({ ...letter, seq: toGlobal(letter.seq, index) });
      });
      return merged;
    },
    // A group, its messages, what they wait for and its dead letters all live in its part.
    async inspectGroup(groupId: string) {
      checkId('groupId', groupId);
      const index = indexOf(groupId);
      const { group, deadLetters, ...rest }: GroupInspection<E> = await parts[index]!.inspectGroup(groupId);
      const global = (seq: number): number => toGlobal(seq, index);
      return {
        ...rest,
        group: group && { ...group, heldBy: group.heldBy === null ? null : global(group.heldBy), messages: group.messages.map((m) => ({ ...m, seq: global(m.seq), waitsFor: m.waitsFor.map(global) })) },
        deadLetters: deadLetters.map((letter) => ({ ...letter, seq: global(letter.seq) })),
      };
    },
    async deadLetters() {
      const lists: DeadLetter<E>[][] = await Promise.all(parts.map((part) => part.deadLetters()));
      return lists.flatMap((list, index) => list.map((letter): DeadLetter<E> => ({ ...letter, seq: toGlobal(letter.seq, index) })));
    },
    async redrive(seq: number) {
      checkSeq(seq);
      const [part, local, index] = bySeq(seq);
      return toGlobal(await part.redrive(local), index);
    },
    async discard(seq: number, options?: RemoveOptions) {
      checkSeq(seq);
      checkRemoveOptions(options);
      const [part, local, index] = bySeq(seq);
      const removed = await part.discard(local, options);
      return { ...removed, seqs: removed.seqs.map((seq: number) => toGlobal(seq, index)) };
    },
    // A group's messages and what waits on them live in its part: `after` never crosses parts.
    async cancelGroup(groupId: string, options?: RemoveOptions) {
      checkId('groupId', groupId);
      checkRemoveOptions(options);
      const removed = await partOf(groupId).cancelGroup(groupId, options);
      return { ...removed, seqs: removed.seqs.map((seq: number) => toGlobal(seq, indexOf(groupId))) };
    },
    // The queue's pause goes to every part (in parallel: a part that fails leaves the others
    // paused, and the call rejects); a group's, to the part the group lives in.
    async pause(groupId?: string) {
      if (groupId !== undefined) checkId('groupId', groupId);
      if (groupId === undefined) await Promise.all(parts.map((part) => part.pause()));
      else await parts[indexOf(groupId)]!.pause(groupId);
    },
    async resume(groupId?: string) {
      if (groupId !== undefined) checkId('groupId', groupId);
      if (groupId === undefined) await Promise.all(parts.map((part) => part.resume()));
      else await parts[indexOf(groupId)]!.resume(groupId);
    },
    async cancel(seq: number) {
      checkSeq(seq);
      const [part, local] = bySeq(seq);
      return part.cancel(local);
    },
    async expireLeases(workerId: string) {
      checkId('workerId', workerId);
      const ended = await Promise.all(parts.map((part) => part.expireLeases(workerId)));
      return ended.reduce((total, n) => total + n, 0);
    },
    async stats() {
      const all = await Promise.all(parts.map((part) => part.stats()));
      const sum = (key: Exclude<keyof TransportStats, 'nextReadyAt' | 'paused'>) => all.reduce((total, s) => total + s[key], 0);
      const next = all.map((s) => s.nextReadyAt).filter((t): t is number => t !== null);
      return {
        queued: sum('queued'),
        groups: sum('groups'),
        ready: sum('ready'),
        leased: sum('leased'),
        waiting: sum('waiting'),
        dead: sum('dead'),
        held: sum('held'),
        blocked: sum('blocked'),
        paused: all.some((s) => s.paused),
        pausedGroups: sum('pausedGroups'),
        nextReadyAt: next.length ? Math.min(...next) : null,
      };
    },
    onChange(listener: () => void) {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      const stops = parts.map((part) => (isChangeNotifier(part) ? part.onChange(listener) : () => {}));
      return () => stops.forEach((stop) => stop());
    },
    async close() {
      await Promise.all(parts.map((part) => part.close()));
    },
  };
  return transport;
}
