/**
 * Owner election and call routing of one host worker, as a pure state machine: `step(state,
 * event)` returns the next state and the effects the worker must perform, and touches nothing
 * itself (no locks, ports, timers or database), so every transition and race runs in Node.
 * host.ts feeds it what the worker observes and performs what it returns.
 *
 * The hosts of a database elect an owner with a Web Lock held for the owner's lifetime; only the
 * owner opens the database. Every other host forwards its page's calls to the owner: over a
 * MessagePort the link broker paired (broker.ts) once nothing sent over the channel still waits,
 * else over the database's BroadcastChannel, which also carries announcements (`owner`, `who`)
 * and change notices. When the owner goes away the lock passes to a waiting host, which opens the
 * database and announces itself; calls still waiting for an answer are sent again (or served by
 * the new owner itself), and the owner's call journal answers any that were already applied.
 *
 * Phases: `idle` (before the page's open) → `seeking` (lock requested, no owner heard of) →
 * `forwarding` (another host owns the database) → `promoting` (this host got the lock, or uses
 * memory storage, and is opening the database) → `owner` → `closing` → `closed`; `unavailable`
 * when the browser lacks what a shared database needs. Ports are opaque (`P`): the machine only
 * compares them and hands them back in effects.
 *
 * A host whose open failed (`failed`: a database a newer leasehold wrote, a damaged file) never
 * owns: it lets the lock go at once, so a tab that can open the database takes it, and goes back
 * to `seeking` without asking for the lock. Its page's calls fail with its open error while no
 * owner is known, and are forwarded once one announces itself; only then does it ask for the lock
 * again, to learn when that owner goes (granted, it lets go at once). So it takes the lock at
 * most once per owner that announced itself, and never spins on it.
 *
 * Builds: each host announces its {@link HostVersion} in `who` and `owner`. The newest schema
 * owns. An owner that hears `who` from a newer host hands the database over (`yielding`): it
 * stops taking calls at a batch boundary (other hosts send theirs again to the next owner; its
 * page's calls wait here and follow), closes the database, lets the lock go and asks for it again
 * behind the newer host. A host that hears an owner of a newer build announce itself forwards to
 * it and is `outdated` (its page is told): it never opens the database again, since that owner
 * migrated it (granted the lock, it fails as a host whose open failed). A newer host that hears
 * an older owner does not forward to it; it asks again (`who`), and that owner yields. Ownership
 * so changes at most once per newer build that joins; hosts of one rank never yield to each other,
 * and a host that announces no version (an older leasehold) is followed as before.
 * @internal
 */
import { ClosedError, SchemaTooNewError, StorageError } from '../errors.js';
import { errorToWire } from '../remote/wire.js';
import type { AnswerMessage, CallMessage, HostOptions, HostToBroker, HostToHost, HostToPage, HostVersion, OwnerInfo } from './protocol.js';

/**
 * The version of the messages between hosts (protocol.ts's HostToHost, the call and answer
 * envelopes). Hosts compare builds, and forward to one another, only within one protocol: raise
 * it when a change means an older host could not read the messages of a newer one.
 */
export const PROTOCOL_VERSION = 1;

/** How long a page's open waits for an owner to answer before it reports the database stuck. */
export const OPEN_TIMEOUT_MS = 10_000;
/**
 * How long a host that cannot open the database, having let the lock go, waits for a tab that
 * can to take over before it fails the calls its page made meanwhile: the next tab in line opens
 * in a few hundred milliseconds (more on a loaded machine), and when there is none the calls
 * fail with the host's open error after this long at most.
 */
export const TAKEOVER_MS = 5_000;
/** How long a forwarded call waits for the owner's answer before failing. */
export const CALL_TIMEOUT_MS = 15_000;
/**
 * How long a host waits for a new link broker to say it is alive before it asks its page for
 * another. A SharedWorker can start and never answer: Firefox attaches a `new SharedWorker` made
 * in the same tick that the previous broker of that name let its lock go to the dying worker;
 * Safari's SharedWorkers have misbehaved alike. Calls take the BroadcastChannel meanwhile, so a
 * broker that is merely slow costs a second port to the same worker, nothing more.
 */
export const BROKER_TIMEOUT_MS = 3_000;
/**
 * Brokers in a row that never answered, after which the host stays on the BroadcastChannel
 * until {@link BROKER_RETRY_MS} has passed.
 */
export const BROKER_ATTEMPTS = 3;
/**
 * How long a host that gave up on brokers waits before it tries one more: what made them silent
 * (a loaded machine, a browser attaching new ones to a dying worker) passes, and the host should
 * not stay on the slower channel for the rest of the page's life.
 */
export const BROKER_RETRY_MS = 30_000;
/**
 * How long after a broker died a host asks for the next: a SharedWorker started at once may
 * join the dying one (Firefox); 50 ms later it is a fresh one.
 */
export const BROKER_RESTART_MS = 50;

/** What the worker offers that a shared (OPFS) database needs, read when the page opens. */
export interface HostEnvironment {
  /** `navigator.locks` exists. */
  locks: boolean;
  /** `BroadcastChannel` exists. */
  broadcastChannel: boolean;
  /** `navigator.storage.getDirectory` exists (the origin private file system). */
  storage: boolean;
  /** `isSecureContext`; undefined where the browser does not say. */
  secureContext: boolean | undefined;
}

/** Where a message between hosts goes or came from: the BroadcastChannel, or a link port. */
export type Via<P> = 'channel' | { port: P };

/** Where a served call's answer goes: this host's page, or host `host` over `via`. */
export type Reply<P> = { to: 'page' } | { to: 'host'; host: string; via: Via<P> };

/**
 * The open timeout, a forwarded call's timeout (by call id), the wait for a new broker's
 * `alive` (`broker`), the pause before asking for a broker after one died (`broker-restart`), or
 * the longer one after every try was silent (`broker-retry`).
 */
export type TimerId = 'open' | 'broker' | 'broker-restart' | 'broker-retry' | 'takeover' | `call:${string}`;

/** From the link broker: a paired port (see protocol.ts's BrokerToHost), or the broker's life lock. */
export type BrokerMessage<P> = { kind: 'link'; side: 'owner' | 'caller'; peer: string; port: P } | { kind: 'alive'; lock: string };

/** A forwarding host's port to its owner `peer`; `ready` once calls may take it (see {@link settle}). */
export interface Link<P> {
  peer: string;
  port: P;
  ready: boolean;
}

interface Opened<P> {
  hostId: string;
  options: HostOptions;
  /** The page's port to the link broker, while it has a live one. */
  broker: P | undefined;
  /** That broker said it is alive (until then the `broker` timer runs). */
  brokerAlive: boolean;
  /** Brokers in a row that never said so (see {@link BROKER_ATTEMPTS}). */
  brokerMisses: number;
  /** The page's open was answered (opened or open-failed): later outcomes are not reported again. */
  openSettled: boolean;
  /** This host could not open the database (the error its page's calls get while no owner is known): it never owns. */
  failed: { error: unknown } | undefined;
  /** What this host announces of its build; undefined: nothing (as a leasehold from before builds were announced). */
  version: HostVersion | undefined;
  /** A tab of this newer build owns (or owned) the database: this host never opens it again. */
  outdated: HostVersion | undefined;
  /** A host of a newer build asked while this one was not (yet) the owner: handed over to it as soon as this host owns. */
  yieldTo: string | undefined;
}

/** Calls of this host's page sent to (or held for) another owner, awaiting an answer, by id. */
interface Forwarder {
  forwarded: ReadonlyMap<string, CallMessage>;
}

export type HostState<P> =
  | { phase: 'idle'; hostId: string }
  /** The browser lacks what a shared database needs: the open failed with `error`. */
  | ({ phase: 'unavailable'; error: StorageError } & Opened<P>)
  /** The lock is requested and `who` asked; no owner has answered yet. */
  /**
   * `waiting`: this host cannot open the database and let the lock go; until a tab that can
   * announces itself (or {@link TAKEOVER_MS} passes) its page's calls wait instead of failing.
   * These are the ones made meanwhile.
   */
  | ({ phase: 'seeking'; waiting?: ReadonlySet<string> } & Opened<P> & Forwarder)
  /** Host `ownerId` owns the database; calls go to it over `link` (when ready) or the channel. */
  | ({ phase: 'forwarding'; ownerId: string; link: Link<P> | undefined } & Opened<P> & Forwarder)
  /**
   * This host holds the lock (or uses memory storage) and is opening the database. Calls of the
   * page wait here (with OPFS; memory serves them at once) and are served once it is open: the
   * old owner, whose lock this is, can no longer answer. `ownerId`: the last owner heard of.
   */
  | ({ phase: 'promoting'; ownerId: string | null; held: ReadonlySet<string> } & Opened<P> & Forwarder)
  /** This host owns the database, which it opened. */
  | ({ phase: 'owner'; links: readonly P[] } & Opened<P>)
  /**
   * This host owned the database and hands it over to the newer host `to`: the database is
   * closing; calls of its page wait here, to be forwarded to `to` once it announces itself.
   */
  | ({ phase: 'yielding'; to: string; links: readonly P[] } & Opened<P> & Forwarder)
  /**
   * close() has begun; the database is still opening (closed once it is open) or closing.
   * `ports`: link ports closed at the end; `ownerId` for reports only.
   */
  | ({ phase: 'closing'; database: 'opening' | 'closing'; ownerId: string | null; ports: readonly P[] } & Opened<P>)
  | { phase: 'closed'; hostId: string };

export type HostEvent<P> =
  /** The page asks to open the database; `env` is what the worker offers; `version` what this host announces (none: nothing). */
  | { kind: 'open'; options: HostOptions; broker?: P; env: HostEnvironment; version?: HostVersion }
  /** A call from this host's page. */
  | { kind: 'page-call'; call: CallMessage }
  /** The page sends a port to a new link broker (after the host asked for one). */
  | { kind: 'broker-port'; port: P }
  /** The page closes the database. */
  | { kind: 'close' }
  /** A message from another host, over the channel or a link port. */
  | { kind: 'host'; message: HostToHost; via: Via<P> }
  /** A message from the broker on `port`. */
  | { kind: 'broker'; port: P; message: BrokerMessage<P> }
  /** The broker behind `port` died (its life lock was released). */
  | { kind: 'broker-gone'; port: P }
  /** A link port's other end closed. */
  | { kind: 'port-closed'; port: P }
  /** The database's Web Lock was granted to this host. */
  | { kind: 'lock-granted' }
  | { kind: 'database-opened' }
  | { kind: 'database-failed'; error: unknown }
  /** The owner's database committed a change that may make work claimable in `queue`. */
  | { kind: 'changed'; queue: string }
  /** A `serve` effect finished; `call` is the call it served. */
  | { kind: 'served'; answer: AnswerMessage; reply: Reply<P>; call?: CallMessage }
  | { kind: 'database-closed' }
  | { kind: 'timeout'; timer: TimerId };

export type HostEffect<P> =
  | { kind: 'to-page'; message: HostToPage }
  | { kind: 'to-host'; via: Via<P>; message: HostToHost }
  | { kind: 'to-broker'; port: P; message: HostToBroker }
  /** Open the database's BroadcastChannel and deliver its messages as `host` events. */
  | { kind: 'open-channel'; name: string }
  | { kind: 'close-channel' }
  /** Request the database's Web Lock (exclusive, held until `release-lock`): `lock-granted`. */
  | { kind: 'request-lock'; name: string }
  /** Let the lock go, or stop waiting for it. */
  | { kind: 'release-lock' }
  /** Deliver a link port's messages as `host` events and its closing as `port-closed`. */
  | { kind: 'listen'; port: P }
  /** Deliver a broker port's messages as `broker` events. */
  | { kind: 'listen-broker'; port: P }
  /** Wait (shared) for the broker's life lock `lock`: `broker-gone` once it is released. */
  | { kind: 'watch-broker'; port: P; lock: string }
  | { kind: 'close-port'; port: P }
  | { kind: 'set-timer'; timer: TimerId; ms: number }
  | { kind: 'clear-timer'; timer: TimerId }
  /** Open the database and its HostCore: `database-opened` or `database-failed`; `changed` after commits. */
  | { kind: 'open-database'; options: HostOptions }
  /**
   * Serve a call on this host (HostCore.serve with `journaled` and `caller`, or the host's own
   * methods): `served` with the answer and `reply`.
   */
  | { kind: 'serve'; call: CallMessage; journaled: boolean; caller: string; reply: Reply<P> }
  /** Close HostCore and hand the file over (whatever opened): `database-closed`. */
  | { kind: 'close-database' };

/** The outcome of one {@link step}: perform `effects` in order. */
export interface Step<P> {
  state: HostState<P>;
  effects: HostEffect<P>[];
}

/** A host before its page opened anything. */
export function initialHostState<P>(hostId: string): HostState<P> {
  return { phase: 'idle', hostId };
}

/**
 * The next state of a host and what it must do, given what it observed. Pure: `state` is not
 * changed, and nothing is performed. Events that do not apply in the current phase (a late
 * timer, a stale answer) change nothing.
 */
export function step<P>(state: HostState<P>, event: HostEvent<P>): Step<P> {
  const effects: HostEffect<P>[] = [];
  return { state: transition(state, event, effects), effects };
}

/** Who owns the database, as this host sees it (the page's `owner()`). */
export function ownerInfo<P>(state: HostState<P>): OwnerInfo {
  switch (state.phase) {
    case 'owner':
      return { ownerId: state.hostId, isThisTab: true, via: 'self' };
    case 'forwarding':
      return { ownerId: state.ownerId, isThisTab: false, via: state.link?.ready ? 'port' : 'channel' };
    case 'promoting':
    case 'closing':
      return { ownerId: state.ownerId, isThisTab: state.ownerId === state.hostId, via: state.ownerId === state.hostId ? 'self' : 'channel' };
    default:
      return { ownerId: null, isThisTab: false, via: 'channel' };
  }
}

/**
 * Why a shared database cannot be opened here, naming what is really missing, or undefined.
 * Only a page known not to be a secure context is told to move to one: a secure page whose
 * browser lacks a feature (WebKit without its StorageAPI feature has no `navigator.storage`)
 * must hear that, not advice it already follows.
 */
export function unavailableError(env: HostEnvironment): StorageError | undefined {
  const missing = [
    ...(env.locks ? [] : ['no Web Locks (navigator.locks)']),
    ...(env.broadcastChannel ? [] : ['no BroadcastChannel']),
    ...(env.storage ? [] : ['no OPFS (navigator.storage.getDirectory)']),
  ];
  if (missing.length === 0) return undefined;
  const list = missing.length === 1 ? missing[0]! : `${missing.slice(0, -1).join(', ')} and ${missing.at(-1)!}`;
  const memory = "or open it with storage: 'memory' (this tab only, gone on reload).";
  if (env.secureContext === false) {
    return new StorageError('STORAGE_UNAVAILABLE', `this page is not a secure context, so the browser offers it ${list}, which a shared OPFS database needs. Serve the page from https:// or http://localhost, ${memory}`);
  }
  const why = env.secureContext === true ? 'though the page is a secure context: this browser lacks it or has it switched off' : 'the page may not be a secure context (https:// or http://localhost), or this browser lacks it';
  return new StorageError('STORAGE_UNAVAILABLE', `this browser offers ${list} here (${why}), which a shared OPFS database needs. Use a browser that has it, ${memory}`);
}

function transition<P>(state: HostState<P>, event: HostEvent<P>, fx: HostEffect<P>[]): HostState<P> {
  switch (event.kind) {
    case 'open':
      return open(state, event, fx);
    case 'page-call':
      return pageCall(state, event.call, fx);
    case 'broker-port':
      return attachBroker(state, event.port, fx);
    case 'close':
      return close(state, fx);
    case 'host':
      return hostMessage(state, event.message, event.via, fx);
    case 'broker':
      return brokerMessage(state, event.port, event.message, fx);
    case 'broker-gone':
      if (!live(state) || event.port !== state.broker) return state;
      fx.push({ kind: 'set-timer', timer: 'broker-restart', ms: BROKER_RESTART_MS });
      return { ...state, broker: undefined, brokerAlive: false };
    case 'port-closed':
      if (state.phase !== 'owner' || !state.links.includes(event.port)) return state;
      return { ...state, links: state.links.filter((port) => port !== event.port) };
    case 'lock-granted':
      return lockGranted(state, fx);
    case 'database-opened':
      return databaseOpened(state, undefined, fx);
    case 'database-failed':
      return databaseOpened(state, { error: event.error }, fx);
    case 'changed':
      if (state.phase !== 'owner' && state.phase !== 'yielding' && state.phase !== 'closing') return state;
      fx.push({ kind: 'to-page', message: { kind: 'changed', queue: event.queue } });
      if (shared(state)) fx.push({ kind: 'to-host', via: 'channel', message: { kind: 'changed', queue: event.queue } });
      return state;
    case 'served':
      if (event.reply.to === 'page' && event.call && !event.answer.ok && event.answer.error.name === 'ClosedError' && live(state)) {
        // Refused unapplied by a database this host closed to hand it over (the page closed
        // nothing: it is live): the call goes where a new one would, to wait for the next owner
        // or to it. The refusal may come after the handover finished.
        return pageCall(state, event.call, fx);
      }
      if (event.reply.to === 'page') {
        fx.push({ kind: 'to-page', message: event.answer });
      } else if (state.phase !== 'closing' && state.phase !== 'closed' && state.phase !== 'yielding') {
        // Unanswered (closing), the caller's host sends the call again to the next owner: the
        // journal there answers it if it was applied here.
        fx.push({ kind: 'to-host', via: event.reply.via, message: { kind: 'answer', to: event.reply.host, answer: event.answer } });
      }
      return state;
    case 'database-closed':
      if (state.phase === 'yielding') return handedOver(state, fx);
      return state.phase === 'closing' ? finish(state, state.ports, true, fx) : state;
    case 'timeout':
      return timeout(state, event.timer, fx);
  }
}

type Live<P> = Extract<HostState<P>, { phase: 'unavailable' | 'seeking' | 'forwarding' | 'promoting' | 'owner' | 'yielding' }>;
type Forwarding<P> = Extract<HostState<P>, { phase: 'seeking' | 'forwarding' | 'promoting' | 'yielding' }>;

/** Opened and not closing. */
function live<P>(state: HostState<P>): state is Live<P> {
  return state.phase === 'unavailable' || state.phase === 'owner' || forwarding(state);
}

function forwarding<P>(state: HostState<P>): state is Forwarding<P> {
  return state.phase === 'seeking' || state.phase === 'forwarding' || state.phase === 'promoting' || state.phase === 'yielding';
}

/**
 * How `a` ranks against `b`: positive when `a` is the newer build (a newer core schema, or the
 * same with a newer host schema), 0 for the same rank, undefined when they cannot be compared (one
 * announced nothing, or they speak different protocols: then neither yields to the other).
 */
export function compareVersions(a: HostVersion | undefined, b: HostVersion | undefined): number | undefined {
  if (!a || !b || a.protocol !== b.protocol) return undefined;
  return Math.sign(a.schema - b.schema || a.host - b.host);
}

/**
 * Whether `other` claims this host's app build id with other schema versions or protocol: two
 * builds of the app share one id, so nothing the id says can be trusted. Neither yields to the
 * other; the tab that hears it while opening fails its open (see {@link ownerAnnounced}).
 */
function conflicting(other: HostVersion | undefined, own: HostVersion | undefined): boolean {
  return other?.build !== undefined && other.build === own?.build && compareVersions(other, own) !== 0;
}

function buildConflict(other: HostVersion, own: HostVersion): RangeError {
  const describe = (v: HostVersion) => `schema ${v.schema}, host schema ${v.host}, protocol ${v.protocol}`;
  return new RangeError(
    `options.build ${JSON.stringify(own.build)} is announced by another tab of this site whose leasehold writes ${describe(other)}, while this tab's writes ${describe(own)}: ` +
      'two builds of the app share one build id. Give each build its own id (a release tag, a commit, a bundle hash).',
  );
}

/** `who`, carrying this host's id and version when it announces one (a host without says only `who`). */
function who<P>(state: Opened<P>): HostToHost {
  return state.version ? { kind: 'who', from: state.hostId, version: state.version } : { kind: 'who' };
}

/** `owner`, with this host's version when it announces one. */
function ownerMessage<P>(state: Opened<P>): HostToHost {
  return state.version ? { kind: 'owner', hostId: state.hostId, version: state.version } : { kind: 'owner', hostId: state.hostId };
}

/** The database is shared through a lock and a channel (OPFS), not this host's alone (memory). */
function shared<P>(state: Opened<P>): boolean {
  return state.options.storage !== 'memory';
}

function open<P>(state: HostState<P>, event: Extract<HostEvent<P>, { kind: 'open' }>, fx: HostEffect<P>[]): HostState<P> {
  if (state.phase !== 'idle') return state;
  const { options } = event;
  const base = { hostId: state.hostId, options, broker: undefined, brokerAlive: false, brokerMisses: 0, openSettled: false, failed: undefined, version: event.version, outdated: undefined, yieldTo: undefined, forwarded: new Map<string, CallMessage>() };
  if (options.storage === 'memory') {
    // This tab's alone: its own owner, no lock, no channel, no broker.
    fx.push({ kind: 'open-database', options });
    return { phase: 'promoting', ownerId: null, held: new Set(), ...base };
  }
  let opened: Opened<P> = base;
  if (event.broker !== undefined) opened = attach(opened, event.broker, fx);
  const error = unavailableError(event.env);
  if (error) {
    fx.push({ kind: 'to-page', message: { kind: 'open-failed', error: errorToWire(error) } });
    return { phase: 'unavailable', error, ...opened, openSettled: true };
  }
  fx.push({ kind: 'open-channel', name: options.name }, { kind: 'set-timer', timer: 'open', ms: OPEN_TIMEOUT_MS }, { kind: 'request-lock', name: options.name }, { kind: 'to-host', via: 'channel', message: who(base) });
  return { phase: 'seeking', ...base, broker: opened.broker };
}

/** Listens to a new broker port and starts the wait for its `alive`. */
function attach<S extends Opened<P>, P>(state: S, port: P, fx: HostEffect<P>[]): S {
  if (state.broker !== undefined && !state.brokerAlive) fx.push({ kind: 'clear-timer', timer: 'broker' });
  fx.push({ kind: 'listen-broker', port }, { kind: 'set-timer', timer: 'broker', ms: BROKER_TIMEOUT_MS });
  return { ...state, broker: port, brokerAlive: false };
}

/**
 * A port to the broker, at open or after the last one died: register there (serve, or ask for
 * a link to the current owner when there is none yet).
 */
function attachBroker<P>(state: HostState<P>, port: P, fx: HostEffect<P>[]): HostState<P> {
  if (!live(state)) {
    fx.push({ kind: 'close-port', port });
    return state;
  }
  const next = attach(state, port, fx);
  if (next.phase === 'owner') fx.push({ kind: 'to-broker', port, message: { kind: 'serve', hostId: next.hostId } });
  if (next.phase === 'forwarding' && !next.link) fx.push({ kind: 'to-broker', port, message: { kind: 'connect', from: next.hostId, to: next.ownerId } });
  return next;
}

function answer<P>(id: string, value: unknown, fx: HostEffect<P>[]): void {
  fx.push({ kind: 'to-page', message: { kind: 'answer', id, ok: true, value } });
}

function fail<P>(id: string, error: unknown, fx: HostEffect<P>[]): void {
  fx.push({ kind: 'to-page', message: { kind: 'answer', id, ok: false, error: errorToWire(error) } });
}

function pageCall<P>(state: HostState<P>, call: CallMessage, fx: HostEffect<P>[]): HostState<P> {
  if (call.target === 'host' && call.method === 'owner') {
    answer(call.id, ownerInfo(state), fx);
    return state;
  }
  switch (state.phase) {
    case 'idle':
      fail(call.id, new StorageError('STORAGE_UNAVAILABLE', 'the database is not open'), fx);
      return state;
    case 'unavailable':
      fail(call.id, state.error, fx);
      return state;
    case 'closing':
    case 'closed':
      fail(call.id, new ClosedError('database'), fx);
      return state;
    case 'owner':
      fx.push({ kind: 'serve', call, journaled: false, caller: state.hostId, reply: { to: 'page' } });
      return state;
    case 'promoting':
      if (!shared(state)) {
        fx.push({ kind: 'serve', call, journaled: false, caller: state.hostId, reply: { to: 'page' } });
        return state;
      }
      break;
    case 'seeking':
      // This host cannot open the database and no owner is known or coming: waiting could only
      // end in the call timeout, and the open error says what is wrong and what to do.
      if (state.failed && !state.waiting) {
        fail(call.id, state.failed.error, fx);
        return state;
      }
      if (state.waiting) state = { ...state, waiting: new Set(state.waiting).add(call.id) };
  }
  fx.push({ kind: 'set-timer', timer: `call:${call.id}`, ms: CALL_TIMEOUT_MS });
  // Held while promoting (served once the database is open); otherwise sent to the owner, over
  // the channel while no one is known (an owner that has not answered `who` yet still serves it).
  // A host waiting for a takeover holds them: no owner is there, and once one announces itself
  // every waiting call is sent to it (so one failed when the wait ends has reached no one).
  if (state.phase === 'seeking' && !state.waiting) fx.push({ kind: 'to-host', via: 'channel', message: { kind: 'call', from: state.hostId, call } });
  if (state.phase === 'forwarding') fx.push({ kind: 'to-host', via: state.link?.ready ? { port: state.link.port } : 'channel', message: { kind: 'call', from: state.hostId, call } });
  const forwarded = new Map(state.forwarded).set(call.id, call);
  if (state.phase === 'promoting') return { ...state, forwarded, held: new Set(state.held).add(call.id) };
  return { ...state, forwarded };
}

/**
 * A forwarded call was answered or gave up. Calls take the link port only once nothing sent over
 * the channel waits for an answer, so a page's calls reach the owner in the order it made them,
 * as over the channel alone.
 */
function settle<P>(state: Forwarding<P>, id: string): Forwarding<P> {
  const forwarded = new Map(state.forwarded);
  forwarded.delete(id);
  if (state.phase === 'forwarding' && state.link && !state.link.ready && forwarded.size === 0) return { ...state, forwarded, link: { ...state.link, ready: true } };
  return { ...state, forwarded };
}

function settleOpen<S extends Opened<P>, P>(state: S, failure: { error: unknown } | undefined, owner: OwnerInfo, fx: HostEffect<P>[]): S {
  if (state.openSettled) return state;
  if (shared(state)) fx.push({ kind: 'clear-timer', timer: 'open' });
  fx.push({ kind: 'to-page', message: failure ? { kind: 'open-failed', error: errorToWire(failure.error) } : { kind: 'opened', owner } });
  return { ...state, openSettled: true };
}

function hostMessage<P>(state: HostState<P>, message: HostToHost, via: Via<P>, fx: HostEffect<P>[]): HostState<P> {
  switch (message.kind) {
    case 'call':
      // A host that is not (yet) the owner ignores calls: their hosts send them again when the
      // owner announces itself. A closing owner drops them too, to be retried on the next owner.
      if (state.phase === 'owner') fx.push({ kind: 'serve', call: message.call, journaled: true, caller: message.from, reply: { to: 'host', host: message.from, via } });
      return state;
    case 'answer': {
      if (message.to !== state.hostId || !forwarding(state) || !state.forwarded.has(message.answer.id)) return state;
      fx.push({ kind: 'clear-timer', timer: `call:${message.answer.id}` }, { kind: 'to-page', message: message.answer });
      return settle(state, message.answer.id);
    }
    case 'who': {
      const newer = message.from !== undefined && live(state) && !conflicting(message.version, state.version) && compareVersions(message.version, state.version) === 1;
      if (state.phase === 'owner') {
        if (newer) return handOver(state, message.from!, fx);
        fx.push({ kind: 'to-host', via: 'channel', message: ownerMessage(state) });
        return state;
      }
      // Not the owner (yet): should this host come to own the database, it hands it over at once.
      if (newer && state.phase !== 'unavailable' && state.phase !== 'yielding') return { ...state, yieldTo: message.from };
      return state;
    }
    case 'owner':
      return ownerAnnounced(state, message.hostId, message.version, fx);
    case 'changed':
      if (live(state) || state.phase === 'closing') fx.push({ kind: 'to-page', message: { kind: 'changed', queue: message.queue } });
      return state;
  }
}

/**
 * Host `ownerId` announced that it owns the database. Only a host that does not hold the lock
 * follows it: a promoting or owning host holds the lock, so any other announcement is stale.
 */
function ownerAnnounced<P>(state: HostState<P>, ownerId: string, version: HostVersion | undefined, fx: HostEffect<P>[]): HostState<P> {
  if (state.phase !== 'seeking' && state.phase !== 'forwarding') return state;
  if (conflicting(version, state.version)) {
    // Opening: the page is told, and ends this host. Already open: ranks are all there is.
    if (!state.openSettled) return settleOpen(state, { error: buildConflict(version!, state.version!) }, ownerInfo(state), fx);
  }
  const rank = compareVersions(version, state.version);
  if (rank === -1) {
    // An owner of an older build: its code must not serve this host's calls. Asked again, it
    // hands the database over (it may not have heard the first `who`: it was still opening).
    fx.push({ kind: 'to-host', via: 'channel', message: who(state) });
    return state;
  }
  if (rank === 1 && !state.outdated) {
    state = { ...state, outdated: version };
    fx.push({ kind: 'to-page', message: { kind: 'outdated', newer: version! } });
  }
  if (state.phase === 'forwarding' && state.ownerId === ownerId) return state;
  if (state.phase === 'seeking' && state.waiting) {
    fx.push({ kind: 'clear-timer', timer: 'takeover' });
    const { waiting, ...rest } = state;
    void waiting;
    state = rest;
  }
  if (state.phase === 'forwarding' && state.link) fx.push({ kind: 'close-port', port: state.link.port });
  if (state.broker !== undefined) fx.push({ kind: 'to-broker', port: state.broker, message: { kind: 'connect', from: state.hostId, to: ownerId } });
  // A host that cannot open asked for the lock only while an owner holds it: the grant says that owner is gone.
  if (state.failed && state.phase === 'seeking') fx.push({ kind: 'request-lock', name: state.options.name });
  let next: HostState<P> = { ...state, phase: 'forwarding', ownerId, link: undefined };
  fx.push({ kind: 'to-page', message: { kind: 'owner', owner: ownerInfo(next) } });
  next = settleOpen(next, undefined, ownerInfo(next), fx);
  // The previous owner may have died holding these calls: send them again, over the channel
  // (no port to the new owner is paired yet). Each keeps the timer of its first send.
  for (const call of state.forwarded.values()) fx.push({ kind: 'to-host', via: 'channel', message: { kind: 'call', from: state.hostId, call } });
  return next;
}

function brokerMessage<P>(state: HostState<P>, from: P, message: BrokerMessage<P>, fx: HostEffect<P>[]): HostState<P> {
  if (message.kind === 'alive') {
    if (!live(state)) return state;
    // Shared, so every host waiting is told at once, none waits for another (a frozen tab's, say).
    fx.push({ kind: 'watch-broker', port: from, lock: message.lock });
    if (from !== state.broker || state.brokerAlive) return state;
    fx.push({ kind: 'clear-timer', timer: 'broker' });
    return { ...state, brokerAlive: true, brokerMisses: 0 };
  }
  const { port, peer } = message;
  if (message.side === 'owner' && state.phase === 'owner') {
    // A forwarding host's link: its calls are answered on the same port.
    fx.push({ kind: 'listen', port });
    return { ...state, links: [...state.links, port] };
  }
  if (message.side === 'caller' && state.phase === 'forwarding' && peer === state.ownerId && !state.link) {
    fx.push({ kind: 'listen', port });
    return { ...state, link: { peer, port, ready: state.forwarded.size === 0 } };
  }
  // Paired with an owner that has since been replaced, or again (a connect re-sent to a new
  // broker crossed the link the old one paired), or by a host now closing.
  fx.push({ kind: 'close-port', port });
  return state;
}

function lockGranted<P>(state: HostState<P>, fx: HostEffect<P>[]): HostState<P> {
  if (state.phase === 'closing' || state.phase === 'closed') {
    fx.push({ kind: 'release-lock' });
    return state;
  }
  if (state.phase !== 'seeking' && state.phase !== 'forwarding') return state;
  // The owner whose lock this was is gone: its link is of no more use.
  if (state.phase === 'forwarding' && state.link) fx.push({ kind: 'close-port', port: state.link.port });
  const { hostId, options, broker, brokerAlive, brokerMisses, openSettled, version, outdated, forwarded } = state;
  // A newer build owned the database and migrated it: this build can no longer open it.
  const failed = state.failed ?? (outdated && version ? { error: tooNew(options.name, outdated, version) } : undefined);
  const rest = { version, outdated, yieldTo: state.yieldTo };
  if (failed) {
    // It cannot open the database: the next tab in line (or the next to come) takes the lock.
    // Calls it had sent to the gone owner wait for the next one, which answers them from its journal.
    fx.push({ kind: 'release-lock' }, { kind: 'set-timer', timer: 'takeover', ms: TAKEOVER_MS });
    const next: HostState<P> = { phase: 'seeking', hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, ...rest, forwarded, waiting: new Set() };
    if (state.phase === 'forwarding') fx.push({ kind: 'to-page', message: { kind: 'owner', owner: ownerInfo(next) } });
    return next;
  }
  fx.push({ kind: 'open-database', options: state.options });
  return { phase: 'promoting', hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, ...rest, forwarded, held: new Set(), ownerId: state.phase === 'forwarding' ? state.ownerId : null };
}

/** The error of a host whose build is older than the database's, named from what the newer owner announced. */
function tooNew(name: string, newer: HostVersion, own: HostVersion): SchemaTooNewError {
  const database = `database ${JSON.stringify(name)}`;
  return newer.schema > own.schema ? new SchemaTooNewError(database, 'core', newer.schema, own.schema) : new SchemaTooNewError(database, 'host', newer.host, own.host);
}

function databaseOpened<P>(state: HostState<P>, failure: { error: unknown } | undefined, fx: HostEffect<P>[]): HostState<P> {
  if (state.phase === 'closing' && state.database === 'opening') {
    fx.push({ kind: 'close-database' });
    return { ...state, database: 'closing' };
  }
  if (state.phase !== 'promoting') return state;
  const { hostId, options, broker, brokerAlive, brokerMisses, openSettled, version, outdated } = state;
  if (failure) return openFailed(state, failure, fx);
  const opened: Extract<HostState<P>, { phase: 'owner' }> = { phase: 'owner', hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed: undefined, version, outdated, yieldTo: undefined, links: [] };
  // A newer host asked while this one opened: it gets the database before this one serves anything.
  if (state.yieldTo !== undefined && shared(state)) return handOver(opened, state.yieldTo, fx, state.forwarded);
  let owner: HostState<P> = opened;
  if (broker !== undefined) fx.push({ kind: 'to-broker', port: broker, message: { kind: 'serve', hostId } });
  if (shared(owner)) fx.push({ kind: 'to-host', via: 'channel', message: ownerMessage(owner) });
  fx.push({ kind: 'to-page', message: { kind: 'owner', owner: ownerInfo(owner) } });
  owner = settleOpen(owner, undefined, ownerInfo(owner), fx);
  // Calls this tab had forwarded to the old owner are now ours to serve, journaled: the journal
  // answers any the old owner applied before it went away.
  for (const call of state.forwarded.values()) {
    fx.push({ kind: 'clear-timer', timer: `call:${call.id}` }, { kind: 'serve', call, journaled: true, caller: hostId, reply: { to: 'page' } });
  }
  return owner;
}

/**
 * Opening the database failed: this host never owns it. It lets the lock go (with OPFS) so a tab
 * that can open the database takes over, announces nothing, and fails its page's open, if the
 * page was not open yet. The calls the page made while this host opened never left it: they
 * wait here, with the page's later ones, for a tab that can open the database to take over
 * ({@link TAKEOVER_MS}), and fail with the open error if none does; calls it had sent to the gone owner may have been applied
 * there, and wait for the next owner's journal, or their timeout. In memory no other tab can
 * help: those calls fail at once.
 */
function openFailed<P>(state: Extract<HostState<P>, { phase: 'promoting' }>, failure: { error: unknown }, fx: HostEffect<P>[]): HostState<P> {
  const { hostId, options, broker, brokerAlive, brokerMisses, openSettled } = state;
  const forwarded = new Map(state.forwarded);
  const waiting = new Set<string>();
  if (shared(state)) fx.push({ kind: 'release-lock' }, { kind: 'set-timer', timer: 'takeover', ms: TAKEOVER_MS });
  for (const id of state.held) {
    if (!forwarded.has(id)) continue;
    if (shared(state)) {
      waiting.add(id);
      continue;
    }
    forwarded.delete(id);
    fx.push({ kind: 'clear-timer', timer: `call:${id}` });
    fail(id, failure.error, fx);
  }
  let next: HostState<P> = { phase: 'seeking', hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed: failure, version: state.version, outdated: state.outdated, yieldTo: undefined, forwarded, ...(shared(state) ? { waiting } : {}) };
  fx.push({ kind: 'to-page', message: { kind: 'owner', owner: ownerInfo(next) } });
  next = settleOpen(next, failure, ownerInfo(next), fx);
  return next;
}

/**
 * The owner hands the database over to the newer host `to`: it leaves the broker and closes the
 * database. Batches run whole, so it stops between two: calls still queued are refused unapplied
 * (its page's wait here for the next owner; other hosts' go unanswered and are sent again to it).
 */
function handOver<P>(state: Extract<HostState<P>, { phase: 'owner' }>, to: string, fx: HostEffect<P>[], forwarded: ReadonlyMap<string, CallMessage> = new Map()): HostState<P> {
  if (state.broker !== undefined) fx.push({ kind: 'to-broker', port: state.broker, message: { kind: 'leave', hostId: state.hostId } });
  fx.push({ kind: 'close-database' });
  return { ...state, phase: 'yielding', to, yieldTo: undefined, forwarded };
}

/**
 * The yielding owner's database is closed: it lets the lock go to the newer host and asks for it
 * again behind it. Should that host go away without owning, this one opens the database again;
 * once it announces itself, this one forwards to it (and is outdated).
 */
function handedOver<P>(state: Extract<HostState<P>, { phase: 'yielding' }>, fx: HostEffect<P>[]): HostState<P> {
  const { hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, version, outdated, forwarded } = state;
  fx.push({ kind: 'release-lock' });
  for (const port of state.links) fx.push({ kind: 'close-port', port });
  fx.push({ kind: 'request-lock', name: options.name });
  const next: HostState<P> = { phase: 'seeking', hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, version, outdated, yieldTo: undefined, forwarded };
  fx.push({ kind: 'to-page', message: { kind: 'owner', owner: ownerInfo(next) } });
  return next;
}

function timeout<P>(state: HostState<P>, timer: TimerId, fx: HostEffect<P>[]): HostState<P> {
  if (timer === 'broker') {
    if (!live(state) || state.phase === 'unavailable' || state.broker === undefined || state.brokerAlive) return state;
    // Started and silent: let it go and ask the page for another, a bounded number of times.
    const brokerMisses = state.brokerMisses + 1;
    fx.push({ kind: 'close-port', port: state.broker });
    if (brokerMisses < BROKER_ATTEMPTS) fx.push({ kind: 'to-page', message: { kind: 'broker' } });
    else fx.push({ kind: 'set-timer', timer: 'broker-retry', ms: BROKER_RETRY_MS });
    return { ...state, broker: undefined, brokerMisses };
  }
  if (timer === 'broker-restart' || timer === 'broker-retry') {
    if (!live(state) || state.broker !== undefined) return state;
    fx.push({ kind: 'to-page', message: { kind: 'broker' } });
    // After a pause, one broker more: if it is silent too, the next try is another pause away.
    return timer === 'broker-retry' ? { ...state, brokerMisses: BROKER_ATTEMPTS - 1 } : state;
  }
  if (timer === 'takeover') {
    if (state.phase !== 'seeking' || !state.waiting) return state;
    // No tab that can open the database took over: the calls made meanwhile reached no owner.
    const { waiting, ...rest } = state;
    const forwarded = new Map(state.forwarded);
    for (const id of waiting) {
      if (!forwarded.delete(id)) continue;
      fx.push({ kind: 'clear-timer', timer: `call:${id}` });
      fail(id, state.failed?.error, fx);
    }
    return { ...rest, forwarded };
  }
  if (timer === 'open') {
    // Holding the lock and opening the database itself, this tab waits for its own open, whose
    // waits are bounded (installPool's retries while a holder lets go): no other tab is involved,
    // and "another tab does not answer" would name the wrong cause.
    if (!live(state) || state.openSettled || state.phase === 'promoting') return state;
    const error = new StorageError(
      'STORAGE_BUSY',
      `database ${JSON.stringify(state.options.name)} is owned by another tab that does not answer; close the other tabs of this site and retry.`,
    );
    return settleOpen(state, { error }, ownerInfo(state), fx);
  }
  const id = timer.slice('call:'.length);
  if (!forwarding(state) || !state.forwarded.has(id)) return state;
  const error = new StorageError(
    'STORAGE_BUSY',
    `no tab answered for database ${JSON.stringify(state.options.name)} within ${CALL_TIMEOUT_MS / 1000} s; the call may or may not have been applied. The tab that owns it may be frozen: close it, or retry.`,
  );
  fail(id, error, fx);
  return settle(state, id);
}

function close<P>(state: HostState<P>, fx: HostEffect<P>[]): HostState<P> {
  if (state.phase === 'idle') {
    fx.push({ kind: 'to-page', message: { kind: 'closed' } });
    return { phase: 'closed', hostId: state.hostId };
  }
  if (!live(state)) return state;
  // Forwarded calls still waiting go unanswered: the page fails them itself as it closes.
  if (forwarding(state)) for (const id of state.forwarded.keys()) fx.push({ kind: 'clear-timer', timer: `call:${id}` });
  const { hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, version, outdated } = state;
  const closing = { phase: 'closing' as const, hostId, options, broker, brokerAlive, brokerMisses, openSettled, failed, version, outdated, yieldTo: undefined, ownerId: ownerInfo(state).ownerId };
  // Handing over: the database is closing already.
  if (state.phase === 'yielding') return { ...closing, database: 'closing', ports: state.links };
  if (state.phase === 'owner') {
    if (broker !== undefined) fx.push({ kind: 'to-broker', port: broker, message: { kind: 'leave', hostId } });
    fx.push({ kind: 'close-database' });
    return { ...closing, database: 'closing', ports: state.links };
  }
  // The database is opening: it is closed (and the lock let go) once it is open.
  if (state.phase === 'promoting') return { ...closing, database: 'opening', ports: [] };
  // No database was opened here: done at once (an unavailable host has no lock or channel either).
  return finish(closing, state.phase === 'forwarding' && state.link ? [state.link.port] : [], state.phase !== 'unavailable', fx);
}

/** The last of close(): once the database is closed, let the lock go (the next owner opens the file) and every port. */
function finish<P>(state: Opened<P>, ports: readonly P[], elected: boolean, fx: HostEffect<P>[]): HostState<P> {
  if (elected && shared(state)) fx.push({ kind: 'release-lock' }, { kind: 'close-channel' });
  for (const port of ports) fx.push({ kind: 'close-port', port });
  if (state.broker !== undefined) fx.push({ kind: 'close-port', port: state.broker });
  fx.push({ kind: 'to-page', message: { kind: 'closed' } });
  return { phase: 'closed', hostId: state.hostId };
}
