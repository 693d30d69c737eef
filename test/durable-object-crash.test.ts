/**
 * A LeaseholdObject survives its process: a worker publishes, claims, acks and commits through
 * the client (over HTTP, and with calls on the WebSocket) while workerd is stopped, or killed with SIGKILL at random moments, and started
 * again on the same storage. The history checker then finds nothing acknowledged lost, nothing
 * delivered twice, no FIFO break, and the store holds every commit it acknowledged.
 *
 * One sequential worker on a logical clock (one tick per call) keeps the history exact: the
 * object processes calls in the order they were sent, and the one call in flight at a kill is
 * retried after the restart (a publish with its key, an ack whose LeaseLostError then means the
 * first try landed).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { consume } from '../src/consume/consume.js';
import { LeaseLostError, StorageError, StoreConflictError } from '../src/errors.js';
import { checkHistory, type HistoryEntry } from './support/history.js';
import { seeded } from './support/torture.js';
import { connect } from './support/workerd-backends.js';
import { startWorkerd, type Workerd } from './support/workerd.js';

const KILLS = 6;
const VISIBILITY = 40;

describe.each([
  { route: 'q' as const, label: 'HTTP' },
  { route: 'ws' as const, label: 'WebSocket calls' },
])('a LeaseholdObject across workerd restarts and SIGKILL ($label)', ({ route }) => {
  let workerd: Workerd | undefined;
  afterAll(async () => {
    await workerd?.kill();
    workerd?.remove();
  });

  it(`loses nothing acknowledged across a graceful restart and ${KILLS} kills mid-stream`, async () => {
    workerd = await startWorkerd();
    const random = seeded(17);
    let tick = 1_000;
    const clock = () => tick;
    const open = () => connect(route, 'crash', clock, {}, workerd!.url);
    let client = open();
    const history: HistoryEntry[] = [];
    const exe = { id: 'stream', version: 0, n: 0 };
    let committed = 0;

    let restarts = 0;
    /**
     * Runs `call` until it gets an answer, restarting workerd when it is down (after a kill).
     * `landed`: on a retry, whether this error means the first try was applied before the kill.
     */
    const settle = async <T>(call: () => Promise<T>, landed: (error: unknown) => boolean = () => false): Promise<T | undefined> => {
      for (let retry = false; ; retry = true) {
        try {
          return await call();
        } catch (error) {
          if (retry && landed(error)) return undefined;
          if (!(error instanceof StorageError) || error.code !== 'STORAGE_UNAVAILABLE') throw error;
          await client.close();
          const dir = workerd!.dir;
          await workerd!.kill();
          workerd = await startWorkerd(dir);
          client = open();
          restarts += 1;
        }
      }
    };

    let n = 0;
    const step = async () => {
      tick += 1;
      n += 1;
      // Retried with its key, a publish that landed answers its first seq.
      const seq = (await settle(() => client.transport.publish(`g${n % 4}`, { n }, { key: `n${n}` })))!;
      history.push({ op: 'publish', seq, groupId: `g${n % 4}`, t: tick });
      exe.n = n;
      // A commit whose answer was lost may have landed: then the retry meets the newer version.
      const before = exe.version;
      await settle(() => client.store.commit(exe, { emits: [{ targetId: null, event: { n } }] }), (error) => error instanceof StoreConflictError);
      committed = exe.version = before + 1;
      if (n % 2 === 0) {
        tick += 1;
        // A claim whose answer was lost leaves a lease nobody holds: it runs out and is claimed again.
        const lease = (await settle(() => client.transport.claim('w', VISIBILITY)))!;
        if (lease) {
          history.push({ op: 'claim', seq: lease.seq, groupId: lease.groupId, attempt: lease.attempt, worker: 'w', t: tick, expiresAt: lease.expiresAt });
          tick += 1;
          // A retried ack whose lease is lost: the first try landed (nobody else claims, and the
          // clock stays within the lease).
          await settle(() => client.transport.ack(lease), (error) => error instanceof LeaseLostError);
          history.push({ op: 'ack', seq: lease.seq, attempt: lease.attempt, worker: 'w', t: tick, ok: true });
        }
      }
    };

    for (let round = 0; round <= KILLS; round++) {
      if (round === 0) {
        for (let i = 0; i < 30; i++) await step();
        // A graceful restart first.
        await client.close();
        const dir = workerd.dir;
        await workerd.stop();
        workerd = await startWorkerd(dir);
        client = open();
        continue;
      }
      // A kill at a random moment while calls are in flight; the worker carries on until it has
      // met the kill and restarted workerd.
      const target = restarts + 1;
      setTimeout(() => void workerd!.kill(), 20 + Math.floor(random() * 200));
      while (restarts < target) await step();
    }

    // Drain what is left (the lease held at a kill runs out first), then check everything.
    tick += VISIBILITY + 1;
    for (;;) {
      tick += 1;
      const lease = await settle(() => client.transport.claim('w', VISIBILITY));
      if (!lease) break;
      history.push({ op: 'claim', seq: lease.seq, groupId: lease.groupId, attempt: lease.attempt, worker: 'w', t: tick, expiresAt: lease.expiresAt });
      tick += 1;
      await settle(() => client.transport.ack(lease));
      history.push({ op: 'ack', seq: lease.seq, attempt: lease.attempt, worker: 'w', t: tick, ok: true });
    }
    const remaining = (await client.transport.inspect()).groups.flatMap((g) => g.messages.map((m) => m.seq));
    expect(restarts).toBe(KILLS);
    expect(remaining).toEqual([]);
    expect(checkHistory(history, remaining)).toEqual({ lost: [], unexpected: [], duplicated: [], overlapping: [], fifoBreaks: [], staleAccepted: [], stopBreaks: [] });
    expect(history.filter((e) => e.op === 'publish')).toHaveLength(n);
    const stored = (await client.store.load('stream'))!;
    expect(stored).toMatchObject({ n, version: committed });
    const outbox = await client.store.pendingOutbox();
    expect(outbox.map((entry) => (entry.event as { n: number }).n)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    await client.close();
  }, 180_000);
});

describe('consume() through a workerd kill', () => {
  let workerd: Workerd | undefined;
  afterAll(async () => {
    await workerd?.kill();
    workerd?.remove();
  });

  it('tries failed acks again once the object is back: nothing lost, nothing delivered twice', async () => {
    workerd = await startWorkerd();
    const port = Number(new URL(workerd.url).port);
    const publisher = connect('q', 'acks-through-a-kill', undefined, {}, workerd.url);
    const seqs = await publisher.transport.publishMany(Array.from({ length: 40 }, (_, i) => ({ groupId: `g${i % 8}`, event: { i } })));
    const deliveries = new Map<number, number>();
    let killed = false;
    let release: () => void = () => {};
    const kill = new Promise<void>((resolve) => (release = resolve));
    const acksRefused: (number | undefined)[] = [];
    // Two consumers × 4 slots on clients of their own; the first eight handlers finish while
    // workerd is down, so their acks fail. The leases (20 s) outlive the outage: an ack that was
    // not tried again would leave its group until the lease ran out and deliver it twice.
    const clients = [0, 1].map(() => connect('q', 'acks-through-a-kill', undefined, {}, workerd!.url));
    const consumers = clients.map((client) =>
      consume(
        client.transport,
        async (_event, lease) => {
          deliveries.set(lease.seq, (deliveries.get(lease.seq) ?? 0) + 1);
          if (!killed) await kill;
        },
        {
          concurrency: 4,
          visibilityMs: 20_000,
          onError: (error, info) => {
            if (!(error instanceof StorageError)) throw error;
            if (info.phase === 'ack') acksRefused.push(info.retryInMs);
          },
        },
      ),
    );
    try {
      while (deliveries.size < 8) await new Promise((resolve) => setTimeout(resolve, 20));
      const dir = workerd.dir;
      await workerd.kill();
      killed = true;
      release();
      while (acksRefused.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      workerd = await startWorkerd(dir, undefined, port);
      while (consumers.reduce((n, c) => n + c.handled, 0) < seqs.length) await new Promise((resolve) => setTimeout(resolve, 50));
      expect([...deliveries.keys()].sort((a, b) => a - b)).toEqual(seqs);
      expect([...deliveries.values()].filter((n) => n > 1)).toEqual([]);
      expect(consumers.reduce((n, c) => n + c.lost, 0)).toBe(0);
      expect(acksRefused.filter((retryInMs) => retryInMs === undefined)).toEqual([]); // every one tried again
    } finally {
      await Promise.all(consumers.map((c) => c.stop({ graceMs: 0 })));
      await Promise.all([publisher, ...clients].map((client) => client.close()));
    }
  }, 120_000);
});
