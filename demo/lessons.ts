/**
 * The twelve lessons. Each sets up a scenario on an emptied queue at time 0 — real messages, real
 * workers, a few timed actions (a crash, a stall) — says in a few sentences what to watch, and
 * lets it run. Nothing is scripted beyond those actions: what follows is the library's doing.
 */
import type { DeadLetterPolicy } from 'leasehold';
import type { DemoWorker, DemoEvent, WorkerSettings } from './workers.ts';
import type { OrderInput } from './workflow.ts';

export interface LessonContext {
  addWorker(settings: Partial<WorkerSettings>): DemoWorker;
  /** With `key`, a later {@link edit} of the same key merges into the message while it is queued. */
  publish(groupId: string, event: DemoEvent, priority?: number, key?: string): Promise<number>;
  /** Publishes `patch` under `key` with `onDuplicate: 'merge'`, as an app saving an edit would, and says what it did. */
  edit(groupId: string, key: string, patch: Partial<DemoEvent>): Promise<number>;
  /**
   * Publishes `patch` under `key` with `onDuplicate: 'merge'` and a coalescing window, as a page
   * saving every keystroke would, and says what it did.
   */
  type(groupId: string, key: string, patch: Partial<DemoEvent>, window: { debounceMs: number; maxWaitMs: number }): Promise<number>;
  /** Publishes `event` to wait for what group `after` holds now (`after: { group }`). */
  publishAfter(groupId: string, event: DemoEvent, after: string): Promise<number>;
  /** Discards a dead letter as an operator would; with `dependents`, what depends on it too. */
  discard(seq: number, dependents: boolean): Promise<void>;
  /** Lesson 11: answers to requests that reach its server before `ms` are lost on the way back. */
  loseAnswersUntil(ms: number): void;
  /** Puts a dead letter back at its group's tail, as an operator would. */
  redrive(seq: number): Promise<number>;
  /** Runs `action` when the demo clock reaches `ms` (dropped if another lesson starts first). */
  at(ms: number, action: () => void): void;
  createExecution(id: string): Promise<void>;
  send(executionId: string, event: Record<string, unknown>): Promise<void>;
  /** Starts lesson 10's order workflow as execution `id`; workflow workers run it. */
  startOrder(id: string, input: OrderInput): Promise<void>;
  /** Shows execution `id` in the executions panel. */
  trackExecution(id: string): void;
}

export interface Lesson {
  id: number;
  title: string;
  /** What to watch, in two or three sentences. */
  text: string;
  setup(ctx: LessonContext): Promise<void>;
  /** The storage the lesson needs ('opfs': several tabs share only a kept file). */
  storage?: 'opfs';
  /** The queue's dead-letter policy the lesson needs (default 'continue'); 'hold' opens its own database. */
  onDeadLetter?: DeadLetterPolicy;
  /** The lesson runs a server (leasehold/receiver in this page), fresh for each start, that its delivery workers send to. */
  server?: boolean;
  /** A button the lesson offers the learner, e.g. opening a second tab. */
  action?: { label: string; run(): void };
  /** What the lesson says in a tab that joined it (lessons 7 and 10's second tab)… */
  joinText?: string;
  /** …and what that tab does: it keeps the queue as it is and adds its own workers. */
  join?(ctx: Pick<LessonContext, 'addWorker' | 'trackExecution'>): void;
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
  {
    id: 7,
    title: 'Two tabs',
    storage: 'opfs',
    text: 'This tab owns the database file: it holds the Web Lock, and only it opens the file. Press “Open a second tab”: the new tab joins the same queue, forwards its calls here and adds its worker tab2-w1, so both tabs work the uploads. Then close this tab. The other one takes the lock, opens the file and carries on; the lease w1 held dies with this tab and runs out like any crash’s, and tab2-w1 claims that message again.',
    joinText: 'This is the second tab. Another tab owns the database file, so this tab’s worker tab2-w1 works through it: every call is forwarded there. Close the first tab and watch this one take the file over (the log says when) while tab2-w1 keeps working — and claims the upload w1 was holding once its lease runs out.',
    action: {
      label: 'Open a second tab',
      run: () => void window.open(`${location.pathname}#lesson=7&tab=2`, '_blank'),
    },
    join(ctx) {
      ctx.addWorker({ visibilityMs: 4_000, workMs: 2_000 });
    },
    async setup(ctx) {
      await publishAll(ctx, [
        ['upload-1', ['part 1', 'part 2', 'part 3']],
        ['upload-2', ['part 1', 'part 2', 'part 3']],
        ['upload-3', ['part 1', 'part 2', 'part 3']],
        ['upload-4', ['part 1', 'part 2', 'part 3']],
      ]);
      ctx.addWorker({ visibilityMs: 4_000, workMs: 2_000 });
    },
  },
  {
    id: 8,
    title: 'Poison message',
    text: 'The import service is down until 17 s, so orders.csv fails on every delivery: w1 nacks it with a 2 s park each time, and customers.csv waits behind it. The database allows 4 deliveries (maxAttempts): the claim that finds a fifth due moves orders.csv to the dead letters (✕ on the timeline) in its own transaction and takes customers.csv instead, so one poison message cannot block its group forever. At 18 s, with the service back, an operator redrives it — or press Redrive in the Dead letters panel yourself.',
    async setup(ctx) {
      const seq = await ctx.publish('import-1', { label: 'orders.csv', failUntil: 17_000 });
      await ctx.publish('import-1', { label: 'customers.csv' });
      ctx.addWorker({ visibilityMs: 5_000, workMs: 1_000 });
      ctx.at(18_000, () => void ctx.redrive(seq).catch(() => {}));
    },
  },
  {
    id: 9,
    title: 'Held at a refusal',
    onDeadLetter: 'hold',
    text: 'This queue holds a group at its dead letter (onDeadLetter: hold). The CRM refuses contact-42’s create until its fix ships at 5 s, so at 1 s w1 rejects it: a dead letter at once, with the server’s reason, whatever attempts remain. Its updates must not reach a CRM that never got the contact: contact-42 is held — watch its updates wait, marked held — while contact-43 flows. After 5 s press Redrive in the Dead letters panel (the create goes back to the head of contact-42, and the updates follow it) or Discard (the create is dropped for good and contact-42 goes on with its updates).',
    async setup(ctx) {
      await ctx.publish('contact-42', { label: 'create', refuseUntil: 5_000 });
      await publishAll(ctx, [
        ['contact-42', ['update phone', 'update email']],
        ['contact-43', ['create', 'update phone']],
      ]);
      ctx.addWorker({ visibilityMs: 5_000, workMs: 1_000 });
    },
  },
  {
    id: 10,
    title: 'Workflow across tabs',
    storage: 'opfs',
    text: 'order-42 is a workflow of three steps — reserve, charge, ship — and a 15 s wait for the courier before ship. w1 runs each step under a lease and records its result in the store, one commit per step; Executions lists the steps as they are recorded, with the tab that ran each and how often its code ran (the shop’s ledger, outside the database). While the order waits (2–17 s) nobody holds a lease: press “Open a second tab”, then close this one. The courier’s timer is in the database, not in this tab: at 17 s the other tab’s worker takes it, gets reserve and charge back from the record without running them — their counts stay at 1 — and runs only ship.',
    joinText: 'This is the second tab: its worker tab2-w1 runs the same order workflow, its calls forwarded to the first tab. Close the first tab while order-42 waits for the courier: this tab takes the file over, and at 17 s the timer comes due here. tab2-w1 replays the workflow from the top — reserve and charge return their recorded results without running (their counts stay at 1) — and runs ship. Close the first tab during a step instead, and that step runs again once its lease runs out: a step’s code runs at least once, its recorded result is final.',
    action: {
      label: 'Open a second tab',
      run: () => void window.open(`${location.pathname}#lesson=10&tab=2`, '_blank'),
    },
    join(ctx) {
      ctx.trackExecution('order-42');
      ctx.addWorker({ kind: 'workflow', visibilityMs: 5_000, workMs: 1_000 });
    },
    async setup(ctx) {
      await ctx.startOrder('order-42', { courierMs: 15_000 });
      ctx.addWorker({ kind: 'workflow', visibilityMs: 5_000, workMs: 1_000 });
    },
  },
  {
    id: 11,
    title: 'The server’s side',
    server: true,
    text: 'w1 and w2 send note-7 and note-8 with leasehold/http to a server — the real leasehold/receiver, on its own SQLite database in this page (Server, under the queue). Until 2 s the connection loses every answer: at 1 s the server applies both and commits a receipt per delivery id, but no answer reaches this tab, so the workers give the messages back (no attempt spent) and send them again after 2 s. note-7 goes out under the same delivery id: the server answers from its receipt — a repeat, applied once. At 2 s the user edits note-8 while it waits: the edit is merged into the queued message, its revision goes up, and it goes out under a new delivery id, which the server applies as the new content it is.',
    async setup(ctx) {
      ctx.loseAnswersUntil(2_000);
      await ctx.publish('note-7', { label: 'milk', note: 'note-7' }, 0, 'note-7');
      await ctx.publish('note-8', { label: 'call Ann', note: 'note-8' }, 0, 'note-8');
      ctx.addWorker({ kind: 'delivery', visibilityMs: 5_000, workMs: 1_000 });
      ctx.addWorker({ kind: 'delivery', visibilityMs: 5_000, workMs: 1_000 });
      ctx.at(2_000, () => void ctx.edit('note-8', 'note-8', { label: 'call Ann at 5' }).catch(() => {}));
    },
  },
  {
    id: 12,
    title: 'Typing, and a refused record',
    onDeadLetter: 'hold',
    text: 'The user types into note-9, a keystroke every 300 ms from 0.3 s to 4.5 s, each published under key edit with onDuplicate: merge, debounceMs 1000 and maxWaitMs 2500: the edit waits (delayed) while the typing goes on, each keystroke moving its wait, and goes out once the bound runs out at 2.8 s; the keystrokes after that coalesce into one more message, sent when they stop or their own bound comes. Fifteen keystrokes, two deliveries. Meanwhile the server refuses note-10’s create (a dead letter that holds its group): its edit waits behind it, and task-5, published after: { group: note-10 }, waits for both. At 6 s an operator discards the create with its dependents — or press Discard with dependents yourself: the edit and the task go with it, and nothing more of note-10 is sent.',
    async setup(ctx) {
      const text = 'Buy milk, eggs';
      for (let i = 1; i <= 15; i++) {
        ctx.at(i * 300, () => void ctx.type('note-9', 'edit', { label: text.slice(0, i) }, { debounceMs: 1_000, maxWaitMs: 2_500 }).catch(() => {}));
      }
      const create = await ctx.publish('note-10', { label: 'create', refuseUntil: 60_000 });
      await ctx.publish('note-10', { label: 'edit' });
      await ctx.publishAfter('task-5', { label: 'create task' }, 'note-10');
      ctx.addWorker({ visibilityMs: 5_000, workMs: 500 });
      ctx.at(6_000, () => void ctx.discard(create, true).catch(() => {}));
    },
  },
];

/** The dead-letter policy lesson `id` runs on (free play: 'continue'). */
export function policyOf(id: number): DeadLetterPolicy {
  return LESSONS.find((l) => l.id === id)?.onDeadLetter ?? 'continue';
}
