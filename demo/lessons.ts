/**
 * The six lessons. Each sets up a scenario on an emptied queue at time 0 — real messages, real
 * workers, a few timed actions (a crash, a stall) — says in a few sentences what to watch, and
 * lets it run. Nothing is scripted beyond those actions: what follows is the library's doing.
 */
import type { DemoWorker, DemoEvent, WorkerSettings } from './workers.ts';

export interface LessonContext {
  addWorker(settings: Partial<WorkerSettings>): DemoWorker;
  publish(groupId: string, event: DemoEvent, priority?: number): Promise<number>;
  /** Runs `action` when the demo clock reaches `ms` (dropped if another lesson starts first). */
  at(ms: number, action: () => void): void;
  createExecution(id: string): Promise<void>;
  send(executionId: string, event: Record<string, unknown>): Promise<void>;
}

export interface Lesson {
  id: number;
  title: string;
  /** What to watch, in two or three sentences. */
  text: string;
  setup(ctx: LessonContext): Promise<void>;
}

async function publishAll(ctx: LessonContext, groups: [string, string[], number?][]): Promise<void> {
  for (const [groupId, labels, priority] of groups) for (const label of labels) await ctx.publish(groupId, { label }, priority ?? 0);
}

export const LESSONS: readonly Lesson[] = [
  {
    id: 1,
    title: 'Crash recovery',
    text: 'w1 claims order-7’s first message with a 5 s lease, then crashes at 1 s without acking. Nobody may take order-7 while that lease lives — watch its countdown — and when it runs out at 5.0 s, w2 claims the message again as attempt 2. order-8 keeps flowing meanwhile.',
    async setup(ctx) {
      await publishAll(ctx, [
        ['order-7', ['pay', 'ship']],
        ['order-8', ['pack']],
      ]);
      const w1 = ctx.addWorker({ visibilityMs: 5_000, workMs: 3_000 });
      ctx.addWorker({ visibilityMs: 5_000, workMs: 1_000 });
      ctx.at(1_000, () => w1.crash());
    },
  },
  {
    id: 2,
    title: 'Round-robin',
    text: 'One busy group with six messages, three quiet groups with one each, and a single worker. It does not drain the busy group first: every claim goes to the free group claimed least recently, so the quiet groups are served in between. Watch the numbers on the left: a group goes to the back of the line when it is claimed.',
    async setup(ctx) {
      await publishAll(ctx, [
        ['busy', ['job 1', 'job 2', 'job 3', 'job 4', 'job 5', 'job 6']],
        ['quiet-a', ['job 1']],
        ['quiet-b', ['job 1']],
        ['quiet-c', ['job 1']],
      ]);
      ctx.addWorker({ workMs: 1_000 });
    },
  },
  {
    id: 3,
    title: 'Priority floor',
    text: 'w1 has a priority floor of 3: its claims skip every group below priority 3, so report and sync (P0, P1) wait however idle w1 is. At 5 s w2 joins with floor 0 and takes them. A group’s priority is set by the publish that creates it.',
    async setup(ctx) {
      await publishAll(ctx, [
        ['report', ['weekly', 'monthly'], 0],
        ['sync', ['contacts'], 1],
        ['alert', ['disk full', 'cpu hot'], 4],
        ['page', ['on-call'], 3],
      ]);
      ctx.addWorker({ minPriority: 3, workMs: 1_000 });
      ctx.at(5_000, () => void ctx.addWorker({ minPriority: 0, workMs: 1_000 }));
    },
  },
  {
    id: 4,
    title: 'Park',
    text: 'The payment gateway tells w1 to retry pay-1’s charge later, so w1 nacks it with a 4 s delay. The message is parked: it stays at the head of pay-1 and blocks the group (the receipt waits behind it) while the mail groups keep flowing. When the park ends, the charge is delivered again as attempt 2.',
    async setup(ctx) {
      await ctx.publish('pay-1', { label: 'charge', parkMs: 4_000 });
      await publishAll(ctx, [
        ['pay-1', ['receipt']],
        ['mail-1', ['welcome', 'tips']],
        ['mail-2', ['welcome', 'tips']],
        ['mail-3', ['welcome', 'tips']],
      ]);
      ctx.addWorker({ workMs: 1_000 });
      ctx.addWorker({ workMs: 1_000 });
    },
  },
  {
    id: 5,
    title: 'Fencing',
    text: 'w1 claims invoice-1 with a 3 s lease and stalls at 1 s, frozen with its lease in hand. The lease runs out at 3.0 s and w2 claims the message as attempt 2. At 4 s w1 wakes and tries to ack attempt 1: the transport refuses with LeaseLostError, so a late worker can never delete work another worker now holds.',
    async setup(ctx) {
      await ctx.publish('invoice-1', { label: 'send' });
      const w1 = ctx.addWorker({ visibilityMs: 3_000, workMs: 2_000 });
      ctx.addWorker({ visibilityMs: 3_000, workMs: 2_000 });
      ctx.at(1_000, () => w1.stall());
      ctx.at(4_000, () => w1.comeBack());
    },
  },
  {
    id: 6,
    title: 'Trace ring',
    text: 'A runtime worker applies twelve edits to the execution doc-1. Each commit appends a trace step with the next index, but the store keeps only the last 8 (traceMax): the ring fills up, then each new step takes the slot of the oldest, while the indices keep climbing to 11.',
    async setup(ctx) {
      await ctx.createExecution('doc-1');
      for (let i = 1; i <= 12; i++) await ctx.send('doc-1', { id: `edit-${i}`, type: 'edit', label: `edit ${i}` });
      ctx.addWorker({ kind: 'runtime', workMs: 500 });
    },
  },
];
