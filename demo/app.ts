/**
 * The demo's state and actions: the open database, this tab's workers, the executions it knows,
 * and running a lesson. The views read from here; nothing here touches the DOM.
 */
import { type DeadLetter, type DeadLetterPolicy, type MessageSnapshot, Runtime, type TransportSnapshot } from 'leasehold';
import type { BrowserDatabase, OwnerInfo } from 'leasehold/browser';
import { Workflows } from 'leasehold/workflow';
import type { DemoClock } from './clock.ts';
import { Activity, drain, MAX_ATTEMPTS, openDemoDatabase, type Storage } from './database.ts';
import { History } from './history.ts';
import { LESSONS, type LessonContext } from './lessons.ts';
import { EventLog, type LeaseEnding } from './log.ts';
import type { LessonServer } from './server.ts';
import type { Settings } from './settings.ts';
import { TimelineModel } from './timeline/model.ts';
import { observe } from './timeline/observe.ts';
import type { WorkerAction } from './views/workers.ts';
import { DemoWorker, type DemoEvent, type WorkerContext, type WorkerSettings } from './workers.ts';
import { ledger, ORDER_WORKFLOW, orderWorkflow } from './workflow.ts';

export class Demo {
  readonly clock: DemoClock;
  readonly settings: Settings;
  readonly log = new EventLog();
  /** Calls in flight from workers and lessons; zero means the page has caught up. */
  readonly activity = new Activity();
  /** Every lease, wait and refusal since the lesson started: what the timeline draws. */
  readonly timeline = new TimelineModel();
  /** What the page showed at each moment: what scrubbing shows. */
  readonly history = new History();
  /** Starts this tab's worker ids: a joining tab's workers must not share names with the first tab's. */
  workerPrefix = '';
  db!: BrowserDatabase;
  /** Starts workflows and reads where they stand; never steps (the workers run them). */
  workflows!: Workflows;
  workers: DemoWorker[] = [];
  executions = new Set<string>();
  /** Lesson 11's server, while that lesson is the one running. */
  server: LessonServer | undefined;
  owner: OwnerInfo | undefined;
  /** The latest snapshot, and its messages by seq (for the "why" of claims). */
  snapshot: TransportSnapshot | undefined;
  #seen = new Map<number, MessageSnapshot>();
  readonly #endings = new Map<number, LeaseEnding>();
  #ctx!: WorkerContext;
  #nextWorker = 1;
  #lesson: AbortController | undefined;
  /** Bumped by anything that may change what a snapshot shows. */
  changes = 0;
  readonly #listeners = new Set<() => void>();

  constructor(clock: DemoClock, settings: Settings) {
    this.clock = clock;
    this.settings = settings;
    this.activity.onSettle = () => this.changed();
  }

  /** The open database's dead-letter policy: 'hold' only for the lessons that ask for it. */
  policy: DeadLetterPolicy = 'continue';

  /** Opens `storage` with the queue policy `policy` (closing the current database; this tab's workers stop with it). */
  async open(storage: Storage, policy: DeadLetterPolicy = this.policy): Promise<void> {
    this.#stopWorkers();
    this.#lesson?.abort();
    await this.db?.close();
    this.settings.storage = storage;
    this.policy = policy;
    this.db = await openDemoDatabase(storage, this.clock, policy);
    this.executions = new Set(this.settings.executions[storage]);
    this.snapshot = undefined;
    this.#seen.clear();
    this.#endings.clear();
    this.timeline.clear();
    this.history.clear();
    this.#ctx = {
      transport: observe(this.activity.wrap(this.db.transport), this.timeline, this.clock.now),
      store: this.activity.wrap(this.db.store),
      clock: this.clock,
      log: this.log,
      endings: this.#endings,
      seen: (seq) => this.#seen.get(seq),
      onExecution: (id) => this.trackExecution(id),
      tab: () => (this.workerPrefix ? 'tab 2' : 'tab 1'),
      // Counted like a database call: the page is not settled while a request is with the server.
      server: () => this.server && { fetch: (input, init) => this.activity.track(this.server!.fetch(input, init)) },
    };
    const pageRunsNoStep = (): Promise<string> => Promise.reject(new Error('the page only starts workflows; its workers run them'));
    // The store unwrapped: `get` runs with every snapshot, and a counted call would ask for the next one.
    this.workflows = new Workflows({ store: this.db.store, transport: this.#ctx.transport, workerId: 'page', visibilityMs: 5_000, clock: this.clock.now, workflows: [orderWorkflow(pageRunsNoStep)] });
    this.db.transport.onChange(() => this.changed());
    this.db.onOwnerChange((owner) => {
      const took = owner.isThisTab && this.owner?.isThisTab === false;
      this.owner = owner;
      const at = this.clock.now();
      if (took) this.log.add({ at, kind: 'owner', text: 'This tab took over the database file: the owner tab went away, its Web Lock passed here, and this tab opened the file. Calls it had forwarded were sent again; the old owner’s journal answers any it had applied.' });
      else if (!owner.isThisTab) this.log.add({ at, kind: 'owner', text: 'Another tab owns the database file now; this tab forwards its calls there.' });
      this.changed();
    });
    this.owner = await this.db.owner();
    this.changed();
  }

  setSnapshot(snapshot: TransportSnapshot): void {
    for (const letter of snapshot.deadLetters) {
      if (this.timeline.isDeadMarked(letter.seq)) continue;
      this.log.add({
        at: letter.deadAt,
        kind: 'dead',
        group: letter.groupId,
        seq: letter.seq,
        attempt: letter.attempt,
        text:
          this.policy === 'hold'
            ? `${letter.groupId}#${letter.seq} went to the dead letters (${deathOf(letter)}) and holds ${letter.groupId}: its later messages wait until it is redriven or discarded, while other groups go on`
            : `${letter.groupId}#${letter.seq} went to the dead letters (${deathOf(letter)}): the claim that found it due again moved it aside in its own transaction and took the next message, so ${letter.groupId} is no longer blocked`,
      });
    }
    this.timeline.reconcile(snapshot);
    this.snapshot = snapshot;
    this.#seen = new Map(snapshot.groups.flatMap((group) => group.messages.map((m) => [m.seq, m] as const)));
  }

  addWorker(options: Partial<WorkerSettings> = {}): DemoWorker {
    const settings: WorkerSettings = { id: `${this.workerPrefix}${options.kind === 'runtime' ? 'rt' : 'w'}${this.#nextWorker++}`, kind: 'plain', visibilityMs: 5_000, minPriority: 0, workMs: 1_000, ...options };
    const worker = new DemoWorker(settings, this.#ctx);
    this.workers.push(worker);
    const floor = settings.minPriority > 0 ? `, floor P${settings.minPriority}` : '';
    this.log.add({ at: this.clock.now(), kind: 'info', text: `${settings.id} joins (${settings.kind}, lease ${settings.visibilityMs / 1000} s${floor})`, worker: settings.id });
    this.changed();
    return worker;
  }

  publish(groupId: string, event: DemoEvent, priority = 0, delayMs = 0): Promise<number> {
    return this.#ctx.transport.publish(groupId, event, delayMs > 0 ? { priority, delayMs } : { priority });
  }

  async redrive(seq: number): Promise<number> {
    const fresh = await this.#ctx.transport.redrive(seq);
    const text =
      this.policy === 'hold'
        ? `Redrove dead letter #${seq}: it is back at the head of its group, with its own seq and no deliveries counted, and the group goes on from it`
        : `Redrove dead letter #${seq}: it is back at its group’s tail as #${fresh}, with no deliveries counted`;
    this.log.add({ at: this.clock.now(), kind: 'redrive', seq: fresh, text });
    return fresh;
  }

  /** Discards dead letter `seq`, with `dependents` the later messages of its group and what waits on them (after) too. */
  async discard(seq: number, dependents = false): Promise<void> {
    const { seqs, groups } = await this.#ctx.transport.discard(seq, { dependents });
    if (dependents) {
      const others = seqs.filter((s) => s !== seq);
      const also = others.length === 0 ? ': nothing depended on it' : `, and with it ${others.map((s) => `#${s}`).join(', ')} of ${groups.join(', ')} — the later messages of its group and what waited on them (after), which would only be refused in turn`;
      this.log.add({ at: this.clock.now(), kind: 'discard', seq, text: `Discarded dead letter #${seq} with its dependents${also}` });
      return;
    }
    const held = this.policy === 'hold' ? ': the group it held goes on with its next message' : '';
    this.log.add({ at: this.clock.now(), kind: 'discard', seq, text: `Discarded dead letter #${seq} for good${held}` });
  }

  /** A control on a worker's card. */
  workerAction(id: string, action: WorkerAction): void {
    const worker = this.workers.find((w) => w.id === id);
    if (!worker) return;
    if (action === 'pause') worker.pause(!worker.paused);
    else if (action === 'stall') worker.stall();
    else if (action === 'late') worker.comeBack();
    else worker.crash();
  }

  /**
   * Runs lesson `id` (0: free play) from an empty queue at time 0. The clock holds still while
   * the scene is set, so every lesson starts the same way, then plays on if it was playing.
   */
  async startLesson(id: number): Promise<void> {
    this.#lesson?.abort();
    const run = new AbortController();
    this.#lesson = run;
    this.settings.lesson = id;
    this.#stopWorkers();
    this.log.clear();
    this.server?.close();
    this.server = undefined;
    const wasPaused = this.clock.paused;
    this.clock.setPaused(true);
    try {
      await this.activity.track(this.#reset());
      this.timeline.clear();
      this.history.clear();
      const lesson = LESSONS.find((l) => l.id === id);
      if (lesson?.server && !run.signal.aborted) {
        // Loaded on first use: only this lesson needs a second sqlite-wasm, the server's.
        const server = await this.activity.track(import('./server.ts').then((m) => m.openLessonServer(this.clock.now)));
        if (run.signal.aborted) server.close();
        else this.server = server;
      }
      if (lesson && !run.signal.aborted) await this.activity.track(lesson.setup(this.#lessonContext(run.signal)));
    } finally {
      if (!run.signal.aborted || this.#lesson === run) this.clock.setPaused(wasPaused);
      this.changed();
    }
  }

  /** Workers of this tab stop with the page; a reload is a crash for them. */
  #stopWorkers(): void {
    for (const worker of this.workers) worker.dispose();
    this.workers = [];
    this.#nextWorker = 1;
  }

  async #reset(): Promise<void> {
    const drained = await drain(this.db, this.clock, this.executions);
    this.executions.clear();
    this.settings.executions[this.settings.storage] = [];
    this.#endings.clear();
    ledger.clear();
    this.clock.set(0);
    if (drained > 0) this.log.add({ at: 0, kind: 'info', text: `Emptied the queue for the lesson (${drained} message${drained === 1 ? '' : 's'} claimed and acked)` });
  }

  #lessonContext(signal: AbortSignal): LessonContext {
    // A runtime that never steps: it creates executions and sends their events, as an app would.
    const sender = new Runtime({ store: this.#ctx.store, transport: this.#ctx.transport, handler: () => {}, workerId: 'page', visibilityMs: 5_000, clock: this.clock.now });
    return {
      addWorker: (settings) => this.addWorker(settings),
      publish: (groupId, event, priority = 0, key) => (key === undefined ? this.publish(groupId, event, priority) : this.#ctx.transport.publish(groupId, event, { priority, key, onDuplicate: 'merge' })),
      edit: async (groupId, key, patch) => {
        const queued = new Set(this.snapshot?.groups.find((g) => g.groupId === groupId)?.messages.map((m) => m.seq));
        const at = this.clock.now();
        const seq = await this.#ctx.transport.publish(groupId, patch, { key, onDuplicate: 'merge' });
        const text = queued.has(seq)
          ? `The user edits ${groupId} (${JSON.stringify(patch)}, published under key ${key} with onDuplicate: 'merge'). ${groupId}#${seq} was waiting in the queue, under no lease, so the edit was merged into it in place: same seq, same counter, its revision one higher — its next delivery goes out under a new delivery id`
          : `The user edits ${groupId} (${JSON.stringify(patch)}, key ${key}). The queued message was under a live lease (its worker may have sent it already), so the edit became a message of its own, #${seq}, behind it`;
        this.log.add({ at, kind: 'edit', group: groupId, seq, text });
        return seq;
      },
      type: async (groupId, key, patch, window) => {
        const queued = new Set(this.snapshot?.groups.find((g) => g.groupId === groupId)?.messages.map((m) => m.seq));
        const at = this.clock.now();
        const seq = await this.#ctx.transport.publish(groupId, patch, { key, onDuplicate: 'merge', ...window });
        const text = queued.has(seq)
          ? `The user types into ${groupId} (${JSON.stringify(patch.label)}): merged into ${groupId}#${seq}, which waits until ${window.debounceMs / 1000} s pass with no keystroke, and no longer than ${window.maxWaitMs / 1000} s after the first`
          : `The user types into ${groupId} (${JSON.stringify(patch.label)}): a new message, #${seq}, that waits for the typing to stop (debounceMs ${window.debounceMs}, maxWaitMs ${window.maxWaitMs})`;
        this.log.add({ at, kind: 'edit', group: groupId, seq, text });
        return seq;
      },
      publishAfter: (groupId, event, after) => this.#ctx.transport.publish(groupId, event, { after: { group: after } }),
      discard: (seq, dependents) => this.discard(seq, dependents),
      loseAnswersUntil: (ms) => {
        if (this.server) this.server.loseAnswersUntil = ms;
      },
      redrive: (seq) => this.redrive(seq),
      at: (ms, action) => void this.clock.until(ms, signal).then(() => signal.aborted || action()),
      createExecution: async (id) => {
        await sender.createExecution(id);
        this.trackExecution(id);
      },
      startOrder: async (id, input) => {
        await this.workflows.start(ORDER_WORKFLOW, id, input);
        this.trackExecution(id);
      },
      trackExecution: (id) => this.trackExecution(id),
      send: async (executionId, event) => void (await sender.send(executionId, event)),
    };
  }

  /** Shows execution `id` in the executions panel (the store has no "list all"). */
  trackExecution(id: string): void {
    if (this.executions.has(id)) return;
    this.executions.add(id);
    this.settings.executions[this.settings.storage] = [...this.executions];
    this.changed();
  }

  changed(): void {
    this.changes++;
    for (const listener of this.#listeners) listener();
  }

  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }
}

/** Why a message died, as the log says it: refused at once, or out of attempts (with its last error). */
function deathOf(letter: DeadLetter): string {
  if (letter.attempt < MAX_ATTEMPTS) return `rejected${letter.reason === null ? '' : `: ${letter.reason}`}`;
  return `after ${letter.attempt} deliveries, maxAttempts ${MAX_ATTEMPTS}${letter.reason === null ? '' : `; last error: ${letter.reason}`}`;
}
