/**
 * The page's own consumers. A plain worker is the smallest honest consumer: claim, work for a
 * while on demo time, then ack (or nack, when the event asks for it). A runtime worker is a real
 * `Runtime` stepping executions, so their state and trace rings change. Both talk to the real
 * transport; the controls (pause, stall, crash, come back late) only change what the worker
 * does next, never the queue behind its back. A delivery worker (lesson 11) sends each event to
 * the lesson's server with `leasehold/http` and does what its answer says, as `consume()` would.
 */
import { type ChangeNotifier, type ExecutionStore, type Lease, LeaseLostError, type MessageSnapshot, RejectError, RetryLaterError, Runtime, type StepResult, type Transport } from 'leasehold';
import { httpDelivery } from 'leasehold/http';
import { Workflows } from 'leasehold/workflow';
import { type DemoClock, seconds } from './clock.ts';
import { claimReason, type EventLog, eventLabel, type LeaseEnding } from './log.ts';
import { ledger, list, orderWorkflow } from './workflow.ts';

/** What the demo publishes: a label, and optionally how the worker should treat it. */
export interface DemoEvent {
  label: string;
  /** On its first delivery the worker nacks it with this delay: a park. */
  parkMs?: number;
  /** The worker fails it every time (nack with a retry delay) until it is dead-lettered. */
  poison?: boolean;
  /** The worker fails it (like poison) while the demo clock is before this time: a service that is down. */
  failUntil?: number;
  /** The worker rejects it (a 4xx: dead at once) while the demo clock is before this time: a server that refuses it until a fix ships. */
  refuseUntil?: number;
  /** Lesson 11: the note this edit is to, as the server's table keys it. */
  note?: string;
}

/** How long a poison message is parked before its next try. */
const RETRY_MS = 2_000;
/** Where a delivery worker sends: lesson 11's in-page fetch answers for it, nothing goes out. */
const SERVER_URL = 'https://server.example/outbox';
/** How often (demo time) an idle worker looks again; change notices wake it sooner. */
const IDLE_POLL_MS = 100;

export interface WorkerContext {
  transport: Transport & ChangeNotifier;
  store: ExecutionStore;
  clock: DemoClock;
  log: EventLog;
  /** How this tab's workers' leases ended, by seq: the "why" of the next claim. */
  endings: Map<number, LeaseEnding>;
  /** The message as the last snapshot showed it. */
  seen(seq: number): MessageSnapshot | undefined;
  /** A runtime worker touched this execution: show it. */
  onExecution(id: string): void;
  /** Which tab this is, as the ledger of side effects names it ("tab 1"). */
  tab(): string;
  /** Lesson 11's server, while it runs: where a delivery worker's requests go. */
  server(): { fetch: typeof globalThis.fetch } | undefined;
}

/**
 * plain: claim, work, ack; runtime: a `Runtime` stepping executions; workflow: `Workflows` running
 * lesson 10's order workflow; delivery: claim, send to lesson 11's server (the request is on the
 * wire for `workMs`), then ack, release or reject by its answer.
 */
export type WorkerKind = 'plain' | 'runtime' | 'workflow' | 'delivery';
export type WorkerStatus = 'idle' | 'working' | 'paused' | 'stalled' | 'crashed';

export interface WorkerSettings {
  id: string;
  kind: WorkerKind;
  visibilityMs: number;
  minPriority: number;
  workMs: number;
}

export class DemoWorker {
  readonly settings: WorkerSettings;
  status: WorkerStatus = 'idle';
  /** The lease it holds (or held, when crashed or stalled). */
  lease: Lease | null = null;
  /** Its last outcome, for its card. */
  note = '';
  readonly #ctx: WorkerContext;
  #paused = false;
  #stalled = false;
  #crashed = false;
  readonly #crash = new AbortController();
  /** The workflow step whose `fn` this worker ran in the event it is handling. */
  #ranStep: string | undefined;
  /** The answer to the delivery worker's last request, read before its ack. */
  #answer: { status: number; repeat: string | null; body: string } | undefined;
  /** A delivery worker claims nothing until then, as consume() does after a RetryLaterError. */
  #backOffUntil = 0;
  #kick!: Promise<void>;
  #kicked!: () => void;

  constructor(settings: WorkerSettings, ctx: WorkerContext) {
    this.settings = settings;
    this.#ctx = ctx;
    this.#renewKick();
    const running = settings.kind === 'plain' || settings.kind === 'delivery' ? this.#runPlain() : this.#runSteps(settings.kind === 'runtime' ? this.#runtime() : this.#workflows());
    void running.catch((error: unknown) => {
      // A storage failure or a closed database (storage switched): the worker stops, visibly.
      if (this.#crashed) return;
      this.#crashed = true;
      this.status = 'crashed';
      this.note = `stopped: ${error instanceof Error ? error.message : String(error)}`;
    });
  }

  get id(): string {
    return this.settings.id;
  }

  /** Asked to pause (it may still be finishing its current message). */
  get paused(): boolean {
    return this.#paused;
  }

  get crashed(): boolean {
    return this.#crashed;
  }

  /** Finish the current message, then claim nothing until resumed. */
  pause(paused: boolean): void {
    this.#paused = paused;
    this.#log(paused ? 'pause' : 'info', paused ? `${this.id} pauses after its current message` : `${this.id} resumes`);
    this.#poke();
  }

  /** Stop dead, keeping the lease: a frozen process (a GC pause, a hung fetch). */
  stall(): void {
    if (this.settings.kind !== 'plain' || this.#stalled || this.#crashed) return;
    this.#stalled = true;
    const lease = this.lease;
    if (lease) this.#ctx.endings.set(lease.seq, { holder: this.id, expiresAt: lease.expiresAt, end: 'abandoned' });
    this.#log('stall', lease ? `${this.id} stalls holding ${tag(lease)}: its lease runs out at ${seconds(lease.expiresAt)} unless it comes back first` : `${this.id} stalls`, lease);
    this.#poke();
  }

  /** A stalled worker wakes up and carries on where it stopped: it tries to ack what it held. */
  comeBack(): void {
    if (!this.#stalled || this.#crashed) return;
    this.#stalled = false;
    this.#poke();
  }

  /** Vanish without acking: the lease stays until it runs out, as after a real crash. */
  crash(): void {
    if (this.#crashed) return;
    this.#crashed = true;
    this.status = 'crashed';
    const lease = this.lease;
    if (lease) this.#ctx.endings.set(lease.seq, { holder: this.id, expiresAt: lease.expiresAt, end: 'abandoned' });
    this.#log('crash', lease ? `${this.id} crashed holding ${tag(lease)}: nobody else can take it until the lease runs out at ${seconds(lease.expiresAt)}` : `${this.id} crashed (it held nothing)`, lease);
    this.#crash.abort();
    this.#poke();
  }

  /** Stops without a word: the storage is being switched and this worker's database goes away. */
  dispose(): void {
    this.#crashed = true;
    this.#crash.abort();
    this.#poke();
  }

  async #runPlain(): Promise<void> {
    const { transport, clock } = this.#ctx;
    const { id, visibilityMs, minPriority, workMs } = this.settings;
    while (!this.#crashed) {
      if (await this.#gate()) continue;
      if (clock.now() < this.#backOffUntil) {
        this.status = 'idle';
        await this.#wait(clock.until(this.#backOffUntil, this.#crash.signal));
        continue;
      }
      const lease = await transport.claim(id, visibilityMs, { minPriority });
      if (this.#crashed) {
        // Crashed while its claim was on the way: the lease is abandoned like any other.
        if (lease) this.#ctx.endings.set(lease.seq, { holder: id, expiresAt: lease.expiresAt, end: 'abandoned' });
        return;
      }
      if (!lease) {
        await this.#idle();
        continue;
      }
      this.#claimed(lease);
      const end = clock.now() + workMs;
      while (clock.now() < end && !this.#crashed && !this.#stalled) await this.#wait(clock.until(end, this.#crash.signal));
      let late = false;
      if (this.#stalled) {
        this.status = 'stalled';
        while (this.#stalled && !this.#crashed) await this.#kick;
        late = true;
      }
      if (this.#crashed) return;
      await this.#finish(lease, late);
    }
  }

  async #finish(lease: Lease, late: boolean): Promise<void> {
    const { transport, clock, endings } = this.#ctx;
    const event = lease.event as Partial<DemoEvent> | null;
    const wasExpired = clock.now() > lease.expiresAt;
    try {
      if (this.settings.kind === 'delivery') {
        await this.#deliver(lease);
      } else if (typeof event?.parkMs === 'number' && lease.attempt === 1) {
        await transport.nack(lease, event.parkMs);
        endings.set(lease.seq, { holder: this.id, expiresAt: clock.now() + event.parkMs, end: 'parked' });
        this.note = `parked ${tag(lease)}`;
        this.#log('park', `${this.id} nacked ${tag(lease)} with a ${seconds(event.parkMs)} delay: it is parked until ${seconds(clock.now() + event.parkMs)} and blocks ${lease.groupId}; other groups keep flowing`, lease);
      } else if (typeof event?.refuseUntil === 'number' && clock.now() < event.refuseUntil) {
        const reason = `422: refused until the fix ships at ${seconds(event.refuseUntil)}`;
        await transport.reject(lease, reason);
        this.note = `rejected ${tag(lease)}`;
        this.#log('reject', `${this.id} rejected ${tag(lease)} (attempt ${lease.attempt}): the server refused it (${reason}), so it goes to the dead letters at once, whatever attempts remain`, lease);
      } else if (event?.poison === true || (typeof event?.failUntil === 'number' && clock.now() < event.failUntil)) {
        await transport.nack(lease, RETRY_MS, event?.poison === true ? 'it fails every time' : 'the service is down');
        endings.set(lease.seq, { holder: this.id, expiresAt: clock.now() + RETRY_MS, end: 'parked' });
        this.note = `failed ${tag(lease)}`;
        this.#log('retry', `${this.id} failed ${tag(lease)} (attempt ${lease.attempt}) and parked it for ${seconds(RETRY_MS)}; too many attempts send it to the dead letters`, lease);
      } else {
        await transport.ack(lease);
        this.note = `acked ${tag(lease)}`;
        if (late) {
          this.#log('late-ack', `${this.id} came back late and acked ${tag(lease)}: ${wasExpired ? 'its lease had run out, but nobody had claimed the message again, so it still held' : 'its lease was still live'}`, lease);
        } else {
          this.#log('ack', `${this.id} acked ${tag(lease)}: done, removed from ${lease.groupId}`, lease);
        }
      }
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
      const now = this.#ctx.seen(lease.seq);
      const who = now?.holder && now.attempt > lease.attempt ? `${now.holder} holds attempt ${now.attempt} now` : 'the message has moved on';
      this.note = `ack refused: LeaseLostError`;
      this.#log('refused', `${this.id}'s ack of ${tag(lease)} (attempt ${lease.attempt}) was refused with LeaseLostError — fencing: ${who}`, lease);
    }
    this.lease = null;
  }

  /** Sends `lease`'s event with leasehold/http (the answer read by `onDelivered`), then acks, releases or rejects it by the answer. */
  async #deliver(lease: Lease): Promise<void> {
    const { transport, clock, endings } = this.#ctx;
    const id = shortId(lease.deliveryId ?? '');
    this.#answer = undefined;
    try {
      await this.#send(lease.event, lease);
    } catch (error) {
      if (error instanceof RetryLaterError) {
        await transport.release(lease, error.afterMs, error.message);
        this.#backOffUntil = clock.now() + error.afterMs;
        endings.set(lease.seq, { holder: this.id, expiresAt: this.#backOffUntil, end: 'unanswered' });
        this.note = `no answer for ${tag(lease)}`;
        this.#log('lost', `${this.id} sent ${tag(lease)} as delivery ${id} and got no answer (${error.message}). It cannot tell whether the server applied it, so it gives the message back — a release: no attempt spent — and sends it again in ${seconds(error.afterMs)}: under the same delivery id, unless an edit changes the message meanwhile`, lease);
        return;
      }
      if (!(error instanceof RejectError)) throw error;
      await transport.reject(lease, error.message);
      this.note = `refused ${tag(lease)}`;
      this.#log('reject', `${this.id} sent ${tag(lease)} as ${id}: the server refused it (${error.message}), a dead letter at once`, lease);
      return;
    }
    await transport.ack(lease);
    const answer = this.#answer as { status: number; repeat: string | null; body: string } | undefined;
    const said = answer ? `${answer.status} ${answer.body}` : 'its answer';
    this.note = `delivered ${tag(lease)}`;
    if (answer?.repeat === '1') {
      this.#log('repeat', `${this.id} sent ${tag(lease)} again under the same delivery id ${id}: the server found its receipt and answered ${said} from it (Leasehold-Repeat: 1) without applying it again. ${this.id} acked it`, lease);
    } else {
      const revision = lease.revision ?? 0;
      const why = revision > 0 ? `revision ${revision}, a new id since an edit was merged into the queued message: new content, so the server applied it` : 'the server applied it and committed its receipt';
      this.#log('ack', `${this.id} sent ${tag(lease)} as delivery ${id} (${why}), answered ${said}. ${this.id} acked it: done, removed from ${lease.groupId}`, lease);
    }
  }

  /** The client half of lesson 11: leasehold/http, over the lesson server's in-page fetch. */
  readonly #send = httpDelivery<unknown>({
    url: SERVER_URL,
    retryMs: RETRY_MS,
    fetch: (input, init) => {
      const server = this.#ctx.server();
      return server ? server.fetch(input, init) : Promise.reject(new TypeError('no server is running (lesson 11 starts one)'));
    },
    onDelivered: async (response) => {
      this.#answer = { status: response.status, repeat: response.headers.get('leasehold-repeat'), body: await response.text() };
    },
  });

  /** A Runtime whose handler counts the events of an execution, working `workMs` on each. */
  #runtime(): Runtime {
    const { clock, store } = this.#ctx;
    const { id, visibilityMs } = this.settings;
    return new Runtime({
      store,
      transport: this.#observed(),
      workerId: id,
      visibilityMs,
      clock: clock.now,
      scheduler: clock.scheduler(this.#crash.signal),
      handler: async (execution, event) => {
        await this.#work();
        execution.handled = (Number(execution.handled) || 0) + 1;
        execution.last = eventLabel(event);
        return { trace: { label: eventLabel(event) } };
      },
    });
  }

  /** Workflows running the order workflow: each step works `workMs`, marked in the ledger. */
  #workflows(): Workflows {
    const { clock, store } = this.#ctx;
    const { id, visibilityMs } = this.settings;
    const order = orderWorkflow(async (executionId, step, replayed) => {
      const runs = ledger.read().filter((r) => r.execution === executionId && r.step === step).length + 1;
      const at = clock.now();
      ledger.add({ execution: executionId, step, worker: id, tab: this.#ctx.tab(), at });
      this.#ranStep = step;
      const from = replayed.length ? `; ${list(replayed)} came back from the record without running again` : '';
      this.#ctx.log.add({ at, kind: 'step', text: `${this.id} runs ${step} for ${executionId} (run ${runs} of this step in the ledger)${from}`, worker: this.id, group: executionId });
      await this.#work();
      return `${step}: ${id} in ${this.#ctx.tab()} at ${seconds(at)}`;
    });
    return new Workflows({ store, transport: this.#observed(), workerId: id, visibilityMs, clock: clock.now, scheduler: clock.scheduler(this.#crash.signal), workflows: [order] });
  }

  /** Works `workMs` of demo time; a crashed worker's work never ends, so its lease is left to run out. */
  async #work(): Promise<void> {
    const { clock } = this.#ctx;
    const end = clock.now() + this.settings.workMs;
    while (clock.now() < end && !this.#crashed) await this.#wait(clock.until(end, this.#crash.signal));
    if (this.#crashed) await new Promise(() => {});
  }

  async #runSteps(runner: { step(): Promise<StepResult> }): Promise<void> {
    // Only a crash interrupts a step: a paused worker finishes the event it is on.
    const crashed = new Promise<undefined>((resolve) => this.#crash.signal.addEventListener('abort', () => resolve(undefined)));
    while (!this.#crashed) {
      if (await this.#gate()) continue;
      const result = await Promise.race([runner.step(), crashed]);
      if (this.#crashed) return;
      if (!result || result.kind === 'idle') {
        await this.#idle();
        continue;
      }
      this.#stepped(result);
    }
  }

  /** The transport as this runtime worker sees it: its priority floor applied, its lease shown. */
  #observed(): Transport {
    const t = this.#ctx.transport;
    const release = <T>(promise: Promise<T>): Promise<T> =>
      promise.finally(() => {
        this.lease = null;
      });
    return {
      publish: (groupId, event, options) => t.publish(groupId, event, options),
      claim: async (workerId, visibilityMs) => {
        const lease = await t.claim(workerId, visibilityMs, { minPriority: this.settings.minPriority });
        if (lease && !this.#crashed) this.#claimed(lease);
        return lease;
      },
      ack: (lease) => release(t.ack(lease)),
      ackAndClaim: async (lease, workerId, visibilityMs) => {
        const next = await release(t.ackAndClaim(lease, workerId, visibilityMs, { minPriority: this.settings.minPriority }));
        if (next && !this.#crashed) this.#claimed(next);
        return next;
      },
      nack: (lease, delayMs, reason) => release(t.nack(lease, delayMs, reason)),
      release: (lease, delayMs) => release(t.release(lease, delayMs)),
      reject: (lease, reason) => release(t.reject(lease, reason)),
      extend: async (lease, visibilityMs) => {
        const renewed = await t.extend(lease, visibilityMs);
        if (this.lease?.seq === renewed.seq) this.lease = renewed;
        return renewed;
      },
      // The runtime claims and acks one at a time; the batch and counting calls pass through.
      publishMany: (items) => t.publishMany(items),
      claimMany: (workerId, visibilityMs, options) => t.claimMany(workerId, visibilityMs, options),
      ackMany: (leases) => t.ackMany(leases),
      ackAndClaimMany: (leases, workerId, visibilityMs, options) => t.ackAndClaimMany(leases, workerId, visibilityMs, options),
      stats: () => t.stats(),
      expireLeases: (workerId) => t.expireLeases(workerId),
      cancel: (seq) => t.cancel(seq),
      inspect: () => t.inspect(),
      inspectGroup: (groupId) => t.inspectGroup(groupId),
      deadLetters: () => t.deadLetters(),
      redrive: (seq) => t.redrive(seq),
      discard: (seq, options) => t.discard(seq, options),
      cancelGroup: (groupId, options) => t.cancelGroup(groupId, options),
      pause: (groupId) => t.pause(groupId),
      resume: (groupId) => t.resume(groupId),
      close: async () => {},
    };
  }

  #claimed(lease: Lease): void {
    this.lease = lease;
    this.status = 'working';
    const why = claimReason(lease.groupId, lease.attempt, this.#ctx.endings.get(lease.seq), this.#ctx.seen(lease.seq));
    this.#ctx.endings.delete(lease.seq);
    this.#log('claim', `${this.id} claimed ${tag(lease)} (attempt ${lease.attempt}) until ${seconds(lease.expiresAt)}: ${why}`, lease);
  }

  #stepped(result: StepResult): void {
    if (!('executionId' in result)) return;
    this.#ctx.onExecution(result.executionId);
    const what = `${result.executionId}#${result.seq}`;
    const acked = result.kind === 'handled' && result.acked ? ', then acked' : '; the ack was refused (another worker took over)';
    const ran = this.#ranStep;
    this.#ranStep = undefined;
    const text =
      result.kind !== 'handled'
        ? `${this.id}: ${result.kind} ${what}`
        : this.settings.kind !== 'workflow'
          ? `${this.id} handled ${what}: new state, dedupe mark and trace step committed in one transaction${acked}`
          : ran
            ? `${this.id} handled ${what}: ${ran}'s result is recorded — the step, the workflow's state and the event that moves it on committed in one transaction${acked}. No replay runs ${ran} again`
            : `${this.id} handled ${what}: the workflow ran again from the top, its recorded steps returned their results without running, and what came next (a sleep, or its end) committed in one transaction${acked}`;
    this.note = `${result.kind} ${what}`;
    this.#log('handled', text, { groupId: result.executionId, seq: result.seq, attempt: result.attempt });
  }

  /** Holds the loop while paused or stalled (returns true if it waited, so the caller re-checks). */
  async #gate(): Promise<boolean> {
    if (!this.#paused && !this.#stalled) return false;
    this.status = this.#stalled ? 'stalled' : 'paused';
    await this.#kick;
    return true;
  }

  async #idle(): Promise<void> {
    this.status = 'idle';
    const cancel = new AbortController();
    let unsubscribe = (): void => {};
    const notice = new Promise<void>((resolve) => (unsubscribe = this.#ctx.transport.onChange(resolve)));
    await Promise.race([this.#ctx.clock.sleep(IDLE_POLL_MS, cancel.signal), notice, this.#kick]);
    cancel.abort();
    unsubscribe();
  }

  /** Waits for `promise` or any control (pause, stall, crash); undefined if a control came first. */
  #wait<T>(promise: Promise<T>): Promise<T | undefined> {
    return Promise.race([promise, this.#kick.then(() => undefined)]);
  }

  #poke(): void {
    const kicked = this.#kicked;
    this.#renewKick();
    kicked();
  }

  #renewKick(): void {
    this.#kick = new Promise((resolve) => (this.#kicked = resolve));
  }

  #log(kind: Parameters<EventLog['add']>[0]['kind'], text: string, lease?: Pick<Lease, 'groupId' | 'seq' | 'attempt'> | null): void {
    const entry: Parameters<EventLog['add']>[0] = { at: this.#ctx.clock.now(), kind, text, worker: this.id };
    if (lease) Object.assign(entry, { group: lease.groupId, seq: lease.seq, attempt: lease.attempt });
    this.#ctx.log.add(entry);
  }
}

/** A delivery id with its origin cut to its first 6 digits: "9f3a1c…/default/2/1". */
export function shortId(id: string): string {
  return id.replace(/^([0-9a-f]{6})[0-9a-f]{26}\//, '$1…/');
}

/** "order-7#3": group and seq, how the log names a message. */
export function tag(lease: Pick<Lease, 'groupId' | 'seq'>): string {
  return `${lease.groupId}#${lease.seq}`;
}
