/**
 * The host worker's owner election and call routing (src/browser/election.ts), in Node: every
 * transition of the pure state machine and every race host.ts used to describe in comments,
 * driven event by event. Ports are plain objects (the machine only compares them); timers fire
 * when a test says so.
 */
import { describe, expect, it } from 'vitest';
import { BROKER_ATTEMPTS, BROKER_RESTART_MS, BROKER_RETRY_MS, BROKER_TIMEOUT_MS, CALL_TIMEOUT_MS, compareVersions, TAKEOVER_MS, PROTOCOL_VERSION, type HostEffect, type HostEnvironment, type HostEvent, type HostState, initialHostState, OPEN_TIMEOUT_MS, ownerInfo, step, unavailableError } from '../src/browser/election.js';
import { HostCore } from '../src/browser/core.js';
import type { AnswerMessage, CallMessage, HostOptions, HostToHost, HostToPage, HostVersion } from '../src/browser/protocol.js';
import { errorFromWire, errorToWire, type WireError } from '../src/remote/wire.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import { ClosedError, SchemaTooNewError, StorageError } from '../src/errors.js';

interface Port {
  name: string;
}
const port = (name: string): Port => ({ name });

const OPFS: HostOptions = { name: 'db', storage: 'opfs', durability: 'normal' };
const MEMORY: HostOptions = { name: 'db', storage: 'memory', durability: 'normal' };
const ENV: HostEnvironment = { locks: true, broadcastChannel: true, storage: true, secureContext: true };

let ids = 0;
const call = (method = 'publish', target: CallMessage['target'] = 'transport'): CallMessage => ({ kind: 'call', id: `c${++ids}`, target, method, args: [], now: 1000 });
const ok = (id: string, value: unknown = 1): AnswerMessage => ({ kind: 'answer', id, ok: true, value });

/** Freezes a state deeply, so a step that changed its input would throw. */
const frozen = new WeakSet<object>();
function freeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || frozen.has(value)) return value;
  frozen.add(value);
  if (value instanceof Map) {
    for (const v of value.values()) freeze(v);
    const refuse = () => {
      throw new Error('a step mutated its input');
    };
    for (const key of ['set', 'delete', 'clear']) Object.defineProperty(value, key, { value: refuse });
  } else {
    Object.freeze(value);
    for (const v of Object.values(value)) freeze(v);
  }
  return value;
}

/** One host, stepped event by event; `send` returns the effects of that event. */
class Host {
  state: HostState<Port>;
  constructor(readonly id = 'me') {
    this.state = initialHostState(id);
  }
  send(event: HostEvent<Port>): HostEffect<Port>[] {
    const result = step(freeze(this.state), event);
    this.state = result.state;
    return result.effects;
  }
  get phase(): string {
    return this.state.phase;
  }
  get forwarded(): string[] {
    return 'forwarded' in this.state ? [...this.state.forwarded.keys()] : [];
  }
  /** The page asks who owns the database; the answer's value. */
  owner() {
    const c = call('owner', 'host');
    const [effect] = this.send({ kind: 'page-call', call: c });
    return (effect as { message: { value: unknown } }).message.value;
  }
}

const fromHost = (message: HostToHost, via: 'channel' | { port: Port } = 'channel'): HostEvent<Port> => ({ kind: 'host', message, via });
const announce = (hostId: string) => fromHost({ kind: 'owner', hostId });
const answerFrom = (answer: AnswerMessage, to = 'me', via: 'channel' | { port: Port } = 'channel') => fromHost({ kind: 'answer', to, answer }, via);
const link = (side: 'owner' | 'caller', peer: string, p: Port, broker = port('broker')): HostEvent<Port> => ({ kind: 'broker', port: broker, message: { kind: 'link', side, peer, port: p } });
const toPage = (effects: HostEffect<Port>[]) => effects.flatMap((e) => (e.kind === 'to-page' ? [e.message] : []));
const kinds = (effects: HostEffect<Port>[]) => effects.map((e) => e.kind);
const sent = (effects: HostEffect<Port>[]) => effects.flatMap((e) => (e.kind === 'to-host' ? [{ via: e.via === 'channel' ? 'channel' : e.via.port.name, message: e.message }] : []));

/** A host that opened with OPFS (and the broker port `broker`, when given) and is seeking. */
function seeking(broker?: Port): Host {
  const host = new Host();
  host.send({ kind: 'open', options: OPFS, env: ENV, ...(broker ? { broker } : {}) });
  return host;
}

/** A host forwarding to `owner`, optionally over a ready link port. */
function forwarder(options: { owner?: string; broker?: Port; link?: Port } = {}): Host {
  const host = seeking(options.broker ?? port('broker'));
  host.send(announce(options.owner ?? 'old'));
  if (options.link) host.send(link('caller', options.owner ?? 'old', options.link));
  return host;
}

/** A host that won the lock and opened its database. */
function owner(broker: Port | undefined = port('broker')): Host {
  const host = seeking(broker);
  host.send({ kind: 'lock-granted' });
  host.send({ kind: 'database-opened' });
  return host;
}

describe('opening', () => {
  it('with OPFS: opens the channel, starts the open timeout, requests the lock and asks who owns the database', () => {
    const host = new Host();
    const effects = host.send({ kind: 'open', options: OPFS, env: ENV });
    expect(effects).toEqual([
      { kind: 'open-channel', name: 'db' },
      { kind: 'set-timer', timer: 'open', ms: OPEN_TIMEOUT_MS },
      { kind: 'request-lock', name: 'db' },
      { kind: 'to-host', via: 'channel', message: { kind: 'who' } },
    ]);
    expect(host.phase).toBe('seeking');
    expect(host.owner()).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
  });

  it('listens to the broker port it was given, and registers nowhere while no owner is known', () => {
    const broker = port('broker');
    const effects = new Host().send({ kind: 'open', options: OPFS, env: ENV, broker });
    expect(effects[0]).toEqual({ kind: 'listen-broker', port: broker });
    expect(kinds(effects)).not.toContain('to-broker');
  });

  it('with memory storage: is its own owner at once, with no lock, channel or broker', () => {
    const host = new Host();
    const effects = host.send({ kind: 'open', options: MEMORY, env: { ...ENV, locks: false, storage: false }, broker: port('broker') });
    expect(effects).toEqual([{ kind: 'open-database', options: MEMORY }]);
    // A call made before the database is open is served (and told it is not open yet), not forwarded.
    const c = call();
    expect(host.send({ kind: 'page-call', call: c })).toEqual([{ kind: 'serve', call: c, journaled: false, caller: 'me', reply: { to: 'page' } }]);
    const opened = host.send({ kind: 'database-opened' });
    expect(opened).toEqual([
      { kind: 'to-page', message: { kind: 'owner', owner: { ownerId: 'me', isThisTab: true, via: 'self' } } },
      { kind: 'to-page', message: { kind: 'opened', owner: { ownerId: 'me', isThisTab: true, via: 'self' } } },
    ]);
    // Change notices go to the page only: there is no channel.
    expect(host.send({ kind: 'changed', queue: 'default' })).toEqual([{ kind: 'to-page', message: { kind: 'changed', queue: 'default' } }]);
    expect(host.send({ kind: 'close' })).toEqual([{ kind: 'close-database' }]);
    expect(host.send({ kind: 'database-closed' })).toEqual([{ kind: 'to-page', message: { kind: 'closed' } }]);
  });

  it('a second open changes nothing', () => {
    const host = seeking();
    const before = host.state;
    expect(host.send({ kind: 'open', options: MEMORY, env: ENV })).toEqual([]);
    expect(host.state).toBe(before);
  });

  it('gives up after the open timeout when an owner holds the lock and never answers', () => {
    const host = seeking();
    const [failed] = toPage(host.send({ kind: 'timeout', timer: 'open' }));
    expect(failed).toMatchObject({ kind: 'open-failed', error: { name: 'StorageError', code: 'STORAGE_BUSY' } });
    expect((failed as { error: { message: string } }).error.message).toMatch(/owned by another tab that does not answer/);
    // An announcement after that is followed, but the open is not answered twice.
    expect(toPage(host.send(announce('late'))).map((m) => m.kind)).toEqual(['owner']);
    // A timer that fires after the open was answered changes nothing.
    expect(host.send({ kind: 'timeout', timer: 'open' })).toEqual([]);
  });

  it('holding the lock, waits for its own open past the open timeout: the open says what failed', () => {
    const host = seeking();
    host.send({ kind: 'lock-granted' });
    expect(host.send({ kind: 'timeout', timer: 'open' })).toEqual([]);
    const busy = new StorageError('STORAGE_BUSY', 'database "db" is held open by another page or worker that does not let go.');
    const [failed] = toPage(host.send({ kind: 'database-failed', error: busy })).filter((m) => m.kind === 'open-failed');
    expect(failed).toMatchObject({ kind: 'open-failed', error: { code: 'STORAGE_BUSY', message: busy.message } });
  });
});

describe('a browser without what a shared database needs', () => {
  it('an insecure page is told it is not a secure context, and what that costs it', () => {
    const host = new Host();
    const broker = port('broker');
    const effects = host.send({ kind: 'open', options: OPFS, env: { locks: false, broadcastChannel: true, storage: false, secureContext: false }, broker });
    const [failed] = toPage(effects);
    expect(failed).toMatchObject({ kind: 'open-failed', error: { name: 'StorageError', code: 'STORAGE_UNAVAILABLE' } });
    const message = (failed as { error: { message: string } }).error.message;
    expect(message).toMatch(/not a secure context/);
    expect(message).toMatch(/offers it no Web Locks \(navigator\.locks\) and no OPFS \(navigator\.storage\.getDirectory\)/);
    expect(message).toMatch(/storage: 'memory'/);
    // No election: no channel, no lock. Calls get the same error; close lets the broker port go.
    expect(kinds(effects)).not.toContain('open-channel');
    expect(kinds(effects)).not.toContain('request-lock');
    expect(host.phase).toBe('unavailable');
    const [answer] = toPage(host.send({ kind: 'page-call', call: call() }));
    expect(answer).toMatchObject({ ok: false, error: { code: 'STORAGE_UNAVAILABLE' } });
    expect(host.send({ kind: 'close' })).toEqual([{ kind: 'close-port', port: broker }, { kind: 'to-page', message: { kind: 'closed' } }]);
  });

  it('a secure page without the storage API (WebKit without StorageAPI) hears that, not that it is insecure', () => {
    const error = unavailableError({ ...ENV, storage: false })!;
    expect(error.code).toBe('STORAGE_UNAVAILABLE');
    expect(error.message).not.toMatch(/not a secure context/);
    expect(error.message).not.toMatch(/Serve the page from/);
    expect(error.message).toMatch(/^this browser offers no OPFS \(navigator\.storage\.getDirectory\) here/);
    expect(error.message).toMatch(/though the page is a secure context/);
  });

  it('names each missing feature, and says less when the browser does not tell whether the page is secure', () => {
    expect(unavailableError(ENV)).toBeUndefined();
    expect(unavailableError({ ...ENV, broadcastChannel: false })!.message).toMatch(/offers no BroadcastChannel here/);
    expect(unavailableError({ ...ENV, locks: false, broadcastChannel: false })!.message).toMatch(/no Web Locks \(navigator\.locks\) and no BroadcastChannel/);
    const unknown = unavailableError({ ...ENV, locks: false, secureContext: undefined })!.message;
    expect(unknown).toMatch(/may not be a secure context/);
  });
});

describe('election', () => {
  it('the host granted the lock opens the database, then serves: registers with the broker, announces itself, answers the open', () => {
    const broker = port('broker');
    const host = seeking(broker);
    expect(host.send({ kind: 'lock-granted' })).toEqual([{ kind: 'open-database', options: OPFS }]);
    expect(host.phase).toBe('promoting');
    const me = { ownerId: 'me', isThisTab: true, via: 'self' };
    expect(host.send({ kind: 'database-opened' })).toEqual([
      { kind: 'to-broker', port: broker, message: { kind: 'serve', hostId: 'me' } },
      { kind: 'to-host', via: 'channel', message: { kind: 'owner', hostId: 'me' } },
      { kind: 'to-page', message: { kind: 'owner', owner: me } },
      { kind: 'clear-timer', timer: 'open' },
      { kind: 'to-page', message: { kind: 'opened', owner: me } },
    ]);
    expect(host.owner()).toEqual(me);
  });

  it('a host whose open failed never owns: lets the lock go, announces nothing, fails the open, is not offered to the broker', () => {
    const host = seeking(port('broker'));
    host.send({ kind: 'lock-granted' });
    const tooNew = new SchemaTooNewError('database "db"', 'core', 14, 13);
    const effects = host.send({ kind: 'database-failed', error: tooNew });
    expect(effects).toContainEqual({ kind: 'release-lock' });
    expect(effects).toContainEqual({ kind: 'set-timer', timer: 'takeover', ms: TAKEOVER_MS });
    expect(kinds(effects)).not.toContain('to-broker');
    expect(sent(effects)).toEqual([]);
    expect(toPage(effects)).toEqual([
      { kind: 'owner', owner: { ownerId: null, isThisTab: false, via: 'channel' } },
      { kind: 'open-failed', error: errorToWire(tooNew) },
    ]);
    // The code survives the wire: SCHEMA_TOO_NEW, not a storage failure.
    expect(errorFromWire((toPage(effects)[1] as { error: WireError }).error)).toMatchObject({ name: 'SchemaTooNewError', code: 'SCHEMA_TOO_NEW', found: 14, supported: 13 });
    expect(host.phase).toBe('seeking');
    expect(host.owner()).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
    // Other tabs' calls are not served here, nor is `who` answered: a tab that can open takes the lock.
    expect(host.send(fromHost({ kind: 'call', from: 'other', call: call() }))).toEqual([]);
    expect(host.send(fromHost({ kind: 'who' }))).toEqual([]);
    // Its page's calls wait a while for a tab that can open the database to take over (they go
    // nowhere meanwhile); when none does, they fail with the open error, and later ones at once.
    const c = call();
    expect(host.send({ kind: 'page-call', call: c })).toEqual([{ kind: 'set-timer', timer: `call:${c.id}`, ms: CALL_TIMEOUT_MS }]);
    expect(host.send({ kind: 'timeout', timer: 'takeover' })).toEqual([
      { kind: 'clear-timer', timer: `call:${c.id}` },
      { kind: 'to-page', message: { kind: 'answer', id: c.id, ok: false, error: errorToWire(tooNew) } },
    ]);
    const d = call();
    expect(host.send({ kind: 'page-call', call: d })).toEqual([{ kind: 'to-page', message: { kind: 'answer', id: d.id, ok: false, error: errorToWire(tooNew) } }]);
    // A broker that comes later is not given it either, and a late lock grant is let go.
    expect(kinds(host.send({ kind: 'broker-port', port: port('b2') }))).not.toContain('to-broker');
    expect(host.send({ kind: 'lock-granted' })).toEqual([{ kind: 'release-lock' }, { kind: 'set-timer', timer: 'takeover', ms: TAKEOVER_MS }]);
  });

  it('a forwarder whose takeover failed: its calls wait for a tab that can open, and go to it once it announces itself', () => {
    const host = forwarder({ owner: 'new', link: port('link') });
    const sentBefore = call();
    host.send({ kind: 'page-call', call: sentBefore });
    host.send({ kind: 'lock-granted' });
    const held = call();
    host.send({ kind: 'page-call', call: held });
    const tooNew = new SchemaTooNewError('database "db"', 'core', 14, 13);
    const effects = host.send({ kind: 'database-failed', error: tooNew });
    expect(effects).toContainEqual({ kind: 'release-lock' });
    // The page was open already (as a forwarder): its open is not answered again, nor are its calls yet.
    expect(toPage(effects)).toEqual([{ kind: 'owner', owner: { ownerId: null, isThisTab: false, via: 'channel' } }]);
    expect(sent(effects)).toEqual([]);
    expect(host.forwarded).toEqual([sentBefore.id, held.id]);
    // A tab that can open takes over and announces itself: the waiting calls are sent to it (the
    // one the gone owner may have applied is answered from the journal), and this host asks for
    // the lock once, to learn when that owner goes.
    const next = host.send(announce('newer'));
    expect(next).toContainEqual({ kind: 'request-lock', name: 'db' });
    expect(next).toContainEqual({ kind: 'clear-timer', timer: 'takeover' });
    expect(sent(next)).toEqual([
      { via: 'channel', message: { kind: 'call', from: 'me', call: sentBefore } },
      { via: 'channel', message: { kind: 'call', from: 'me', call: held } },
    ]);
    expect(host.phase).toBe('forwarding');
    const later = call();
    expect(sent(host.send({ kind: 'page-call', call: later }))).toEqual([{ via: 'channel', message: { kind: 'call', from: 'me', call: later } }]);
    expect(toPage(host.send(answerFrom(ok(sentBefore.id))))).toEqual([ok(sentBefore.id)]);
    // A late end of the wait changes nothing now.
    expect(host.send({ kind: 'timeout', timer: 'takeover' })).toEqual([]);
  });

  it('a host that cannot open takes the lock at most once per owner that announced itself, and never opens', () => {
    const host = seeking();
    host.send({ kind: 'lock-granted' });
    host.send({ kind: 'database-failed', error: new SchemaTooNewError('database "db"', 'core', 14, 13) });
    const requests: HostEffect<Port>[] = [];
    for (const owner of ['n1', 'n2', 'n3']) {
      requests.push(...host.send(announce(owner)).filter((e) => e.kind === 'request-lock'));
      // The same owner heard again (its answer to another tab's `who`) asks for nothing more.
      requests.push(...host.send(announce(owner)).filter((e) => e.kind === 'request-lock'));
      const granted = host.send({ kind: 'lock-granted' });
      expect(kinds(granted)).not.toContain('open-database');
      expect(granted).toContainEqual({ kind: 'release-lock' });
      expect(host.phase).toBe('seeking');
      // No owner now: nothing asks for the lock until one announces itself.
      expect(kinds(host.send({ kind: 'timeout', timer: 'open' }))).not.toContain('request-lock');
    }
    expect(requests).toHaveLength(3);
  });

  it('a host whose open failed and that closes lets go of what it holds and says it closed', () => {
    const host = seeking(port('broker'));
    host.send({ kind: 'lock-granted' });
    host.send({ kind: 'database-failed', error: new Error('disk on fire') });
    expect(kinds(host.send({ kind: 'close' }))).toEqual(['release-lock', 'close-channel', 'close-port', 'to-page']);
    expect(host.phase).toBe('closed');
  });

  it('memory storage whose open failed: the page hears the error, on the open and on every call', () => {
    const host = new Host();
    host.send({ kind: 'open', options: MEMORY, env: ENV });
    const effects = host.send({ kind: 'database-failed', error: new Error('no wasm') });
    expect(kinds(effects)).not.toContain('release-lock');
    expect(toPage(effects).at(-1)).toEqual({ kind: 'open-failed', error: { name: 'Error', message: 'no wasm' } });
    const c = call();
    expect(toPage(host.send({ kind: 'page-call', call: c }))).toEqual([{ kind: 'answer', id: c.id, ok: false, error: { name: 'Error', message: 'no wasm' } }]);
  });

  it('a host that hears the owner forwards to it: asks the broker for a link, tells its page, answers the open', () => {
    const broker = port('broker');
    const host = seeking(broker);
    const effects = host.send(announce('other'));
    const info = { ownerId: 'other', isThisTab: false, via: 'channel' };
    expect(effects).toEqual([
      { kind: 'to-broker', port: broker, message: { kind: 'connect', from: 'me', to: 'other' } },
      { kind: 'to-page', message: { kind: 'owner', owner: info } },
      { kind: 'clear-timer', timer: 'open' },
      { kind: 'to-page', message: { kind: 'opened', owner: info } },
    ]);
    expect(host.phase).toBe('forwarding');
    // The same announcement again (an answer to another host's `who`) changes nothing.
    expect(host.send(announce('other'))).toEqual([]);
  });

  it('only the owner answers `who`', () => {
    expect(seeking().send(fromHost({ kind: 'who' }))).toEqual([]);
    expect(forwarder().send(fromHost({ kind: 'who' }))).toEqual([]);
    expect(owner().send(fromHost({ kind: 'who' }))).toEqual([{ kind: 'to-host', via: 'channel', message: { kind: 'owner', hostId: 'me' } }]);
  });

  it('a host that holds the lock ignores other announcements: they are stale', () => {
    const host = owner();
    expect(host.send(announce('ghost'))).toEqual([]);
    expect(host.owner()).toMatchObject({ isThisTab: true });
    const promoting = seeking();
    promoting.send({ kind: 'lock-granted' });
    expect(promoting.send(announce('ghost'))).toEqual([]);
  });

  it('only an owner serves calls from other hosts; change notices from the owner reach the page', () => {
    const c = call();
    expect(forwarder().send(fromHost({ kind: 'call', from: 'x', call: c }))).toEqual([]);
    expect(seeking().send(fromHost({ kind: 'call', from: 'x', call: c }))).toEqual([]);
    expect(forwarder().send(fromHost({ kind: 'changed', queue: 'q' }))).toEqual([{ kind: 'to-page', message: { kind: 'changed', queue: 'q' } }]);
  });
});

describe('serving', () => {
  it("the owner serves its page's calls unjournaled, and other hosts' calls journaled, answering on the route they came by", () => {
    const host = owner();
    const mine = call();
    expect(host.send({ kind: 'page-call', call: mine })).toEqual([{ kind: 'serve', call: mine, journaled: false, caller: 'me', reply: { to: 'page' } }]);
    expect(host.send({ kind: 'served', answer: ok(mine.id), reply: { to: 'page' } })).toEqual([{ kind: 'to-page', message: ok(mine.id) }]);

    const theirs = call();
    const p = port('link');
    const [serve] = host.send(fromHost({ kind: 'call', from: 'other', call: theirs }, { port: p }));
    expect(serve).toEqual({ kind: 'serve', call: theirs, journaled: true, caller: 'other', reply: { to: 'host', host: 'other', via: { port: p } } });
    const reply = (serve as Extract<HostEffect<Port>, { kind: 'serve' }>).reply;
    expect(host.send({ kind: 'served', answer: ok(theirs.id), reply })).toEqual([{ kind: 'to-host', via: { port: p }, message: { kind: 'answer', to: 'other', answer: ok(theirs.id) } }]);
  });

  it("the owner's commits notify its page and every other tab", () => {
    expect(owner().send({ kind: 'changed', queue: 'q' })).toEqual([
      { kind: 'to-page', message: { kind: 'changed', queue: 'q' } },
      { kind: 'to-host', via: 'channel', message: { kind: 'changed', queue: 'q' } },
    ]);
  });

  it("answers the page's owner() itself, wherever it is", () => {
    expect(forwarder({ link: port('l') }).owner()).toEqual({ ownerId: 'old', isThisTab: false, via: 'port' });
    expect(new Host().owner()).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
  });
});

describe('forwarding', () => {
  it('sends a call to the owner over the channel, answers the page when the owner does', () => {
    const host = forwarder();
    const c = call();
    expect(host.send({ kind: 'page-call', call: c })).toEqual([
      { kind: 'set-timer', timer: `call:${c.id}`, ms: CALL_TIMEOUT_MS },
      { kind: 'to-host', via: 'channel', message: { kind: 'call', from: 'me', call: c } },
    ]);
    expect(host.forwarded).toEqual([c.id]);
    // Answers for another host, or for a call not waiting, are not this host's.
    expect(host.send(answerFrom(ok(c.id), 'someone-else'))).toEqual([]);
    expect(host.send(answerFrom(ok('unknown')))).toEqual([]);
    expect(host.send(answerFrom(ok(c.id)))).toEqual([{ kind: 'clear-timer', timer: `call:${c.id}` }, { kind: 'to-page', message: ok(c.id) }]);
    expect(host.forwarded).toEqual([]);
    // A second answer (the call was sent twice, across a failover) is dropped.
    expect(host.send(answerFrom(ok(c.id)))).toEqual([]);
  });

  it('fails a call no owner answers within the call timeout; a late answer is dropped', () => {
    const host = forwarder();
    const c = call();
    host.send({ kind: 'page-call', call: c });
    const [failed] = toPage(host.send({ kind: 'timeout', timer: `call:${c.id}` }));
    expect(failed).toMatchObject({ kind: 'answer', id: c.id, ok: false, error: { name: 'StorageError', code: 'STORAGE_BUSY' } });
    expect((failed as { error: { message: string } }).error.message).toMatch(/no tab answered for database "db" within 15 s; the call may or may not have been applied/);
    expect(host.send(answerFrom(ok(c.id)))).toEqual([]);
    expect(host.send({ kind: 'timeout', timer: `call:${c.id}` })).toEqual([]);
  });

  it('calls made while seeking go over the channel (an owner that has not answered `who` yet serves them)', () => {
    const host = seeking();
    const c = call();
    expect(sent(host.send({ kind: 'page-call', call: c }))).toEqual([{ via: 'channel', message: { kind: 'call', from: 'me', call: c } }]);
  });
});

describe('the link port', () => {
  it('paired while nothing waits: calls take it at once, and answers come back on it', () => {
    const p = port('link');
    const host = forwarder();
    expect(host.send(link('caller', 'old', p))).toEqual([{ kind: 'listen', port: p }]);
    expect(host.owner()).toMatchObject({ via: 'port' });
    const c = call();
    expect(sent(host.send({ kind: 'page-call', call: c }))).toEqual([{ via: 'link', message: { kind: 'call', from: 'me', call: c } }]);
    expect(toPage(host.send(answerFrom(ok(c.id), 'me', { port: p })))).toEqual([ok(c.id)]);
  });

  it('ordering: calls take the port only once nothing sent over the channel awaits an answer', () => {
    const p = port('link');
    const host = forwarder();
    const [a, b, c, d] = [call(), call(), call(), call()];
    host.send({ kind: 'page-call', call: a });
    host.send({ kind: 'page-call', call: b });
    host.send(link('caller', 'old', p));
    expect(host.owner()).toMatchObject({ via: 'channel' });
    // While a and b wait on the channel, c must not overtake them on the port.
    expect(sent(host.send({ kind: 'page-call', call: c }))[0]!.via).toBe('channel');
    host.send(answerFrom(ok(a.id)));
    host.send(answerFrom(ok(b.id)));
    expect(host.owner()).toMatchObject({ via: 'channel' });
    // The last of them settles by timing out: settled all the same.
    host.send({ kind: 'timeout', timer: `call:${c.id}` });
    expect(host.owner()).toMatchObject({ via: 'port' });
    expect(sent(host.send({ kind: 'page-call', call: d }))[0]!.via).toBe('link');
  });

  it('a link paired with an owner since replaced is closed, as is a second link to the same owner', () => {
    const host = forwarder({ owner: 'old' });
    host.send(announce('new'));
    const stale = port('stale');
    expect(host.send(link('caller', 'old', stale))).toEqual([{ kind: 'close-port', port: stale }]);
    const first = port('first');
    host.send(link('caller', 'new', first));
    // A connect re-sent to a new broker crossed the link the old broker paired.
    const again = port('again');
    expect(host.send(link('caller', 'new', again))).toEqual([{ kind: 'close-port', port: again }]);
    expect(host.owner()).toMatchObject({ ownerId: 'new', via: 'port' });
  });

  it('a host that does not own the database closes an owner-side link; a seeking host closes any', () => {
    const p = port('p');
    expect(forwarder().send(link('owner', 'x', p))).toEqual([{ kind: 'close-port', port: p }]);
    expect(seeking().send(link('caller', 'x', p))).toEqual([{ kind: 'close-port', port: p }]);
  });

  it("the owner keeps each forwarding host's link, serves calls on it, and forgets it when it closes", () => {
    const host = owner();
    const p = port('from-x');
    expect(host.send(link('owner', 'x', p))).toEqual([{ kind: 'listen', port: p }]);
    expect(host.state).toMatchObject({ links: [p] });
    expect(host.send({ kind: 'port-closed', port: p })).toEqual([]);
    expect(host.state).toMatchObject({ links: [] });
    // Closing the owner closes its links still open.
    const q = port('from-y');
    host.send(link('owner', 'y', q));
    host.send({ kind: 'close' });
    expect(host.send({ kind: 'database-closed' })).toContainEqual({ kind: 'close-port', port: q });
  });
});

describe('failover', () => {
  it('calls forwarded to an owner that dies are sent again to the new owner, over the channel, keeping their timers', () => {
    const p = port('link');
    const broker = port('broker');
    const host = forwarder({ owner: 'old', link: p, broker });
    const [a, b] = [call(), call()];
    host.send({ kind: 'page-call', call: a });
    host.send({ kind: 'page-call', call: b });
    const effects = host.send(announce('new'));
    expect(effects).toContainEqual({ kind: 'close-port', port: p });
    expect(effects).toContainEqual({ kind: 'to-broker', port: broker, message: { kind: 'connect', from: 'me', to: 'new' } });
    expect(toPage(effects)).toEqual([{ kind: 'owner', owner: { ownerId: 'new', isThisTab: false, via: 'channel' } }]);
    expect(sent(effects)).toEqual([
      { via: 'channel', message: { kind: 'call', from: 'me', call: a } },
      { via: 'channel', message: { kind: 'call', from: 'me', call: b } },
    ]);
    expect(kinds(effects)).not.toContain('set-timer');
    expect(kinds(effects)).not.toContain('clear-timer');
    // The new owner's link comes while a and b wait: calls keep to the channel until they are answered.
    const q = port('new-link');
    host.send(link('caller', 'new', q));
    const c = call();
    expect(sent(host.send({ kind: 'page-call', call: c }))[0]!.via).toBe('channel');
    host.send(answerFrom(ok(a.id)));
    host.send(answerFrom(ok(b.id)));
    host.send(answerFrom(ok(c.id)));
    expect(sent(host.send({ kind: 'page-call', call: call() }))[0]!.via).toBe('new-link');
  });

  it('calls forwarded to an owner that dies are served here, journaled, when this host becomes the owner', () => {
    const p = port('link');
    const host = forwarder({ owner: 'old', link: p });
    const [a, b] = [call(), call()];
    host.send({ kind: 'page-call', call: a });
    host.send({ kind: 'page-call', call: b });
    // The lock passes to this host: the old owner is gone, and so is its link.
    expect(host.send({ kind: 'lock-granted' })).toEqual([{ kind: 'close-port', port: p }, { kind: 'open-database', options: OPFS }]);
    // A call made while the database opens waits here: no one else can answer it now.
    const c = call();
    expect(host.send({ kind: 'page-call', call: c })).toEqual([{ kind: 'set-timer', timer: `call:${c.id}`, ms: CALL_TIMEOUT_MS }]);
    // An answer the old owner sent before it died still settles its call.
    expect(toPage(host.send(answerFrom(ok(a.id))))).toEqual([ok(a.id)]);
    // Other hosts' calls are not served until the database is open (they are sent again on our announcement).
    expect(host.send(fromHost({ kind: 'call', from: 'x', call: call() }))).toEqual([]);
    const effects = host.send({ kind: 'database-opened' });
    const serves = effects.filter((e) => e.kind === 'serve');
    expect(serves).toEqual([
      { kind: 'serve', call: b, journaled: true, caller: 'me', reply: { to: 'page' } },
      { kind: 'serve', call: c, journaled: true, caller: 'me', reply: { to: 'page' } },
    ]);
    expect(effects).toContainEqual({ kind: 'clear-timer', timer: `call:${b.id}` });
    expect(effects).toContainEqual({ kind: 'clear-timer', timer: `call:${c.id}` });
    // Opened already (as a forwarder): not answered again.
    expect(toPage(effects).map((m) => m.kind)).toEqual(['owner']);
    expect(host.forwarded).toEqual([]);
  });

  it('a closing owner drops the answers of forwarded calls still being served, so they are retried on the next owner', () => {
    const host = owner();
    const p = port('from-x');
    host.send(link('owner', 'x', p));
    const queued = call();
    const [serve] = host.send(fromHost({ kind: 'call', from: 'x', call: queued }, { port: p }));
    const mine = call();
    host.send({ kind: 'page-call', call: mine });
    expect(host.send({ kind: 'close' })).toEqual([{ kind: 'to-broker', port: port('broker'), message: { kind: 'leave', hostId: 'me' } }, { kind: 'close-database' }]);
    expect(host.phase).toBe('closing');
    // The forwarded call's answer (a ClosedError, or a result the journal keeps) goes unanswered…
    const reply = (serve as Extract<HostEffect<Port>, { kind: 'serve' }>).reply;
    expect(host.send({ kind: 'served', answer: ok(queued.id), reply })).toEqual([]);
    // …and calls that arrive now are not served; the page's own answer still reaches it.
    expect(host.send(fromHost({ kind: 'call', from: 'x', call: call() }, { port: p }))).toEqual([]);
    expect(host.send({ kind: 'served', answer: ok(mine.id), reply: { to: 'page' } })).toEqual([{ kind: 'to-page', message: ok(mine.id) }]);
    const late = call();
    expect(toPage(host.send({ kind: 'page-call', call: late }))).toEqual([{ kind: 'answer', id: late.id, ok: false, error: expect.objectContaining({ name: 'ClosedError' }) }]);
    // The lock goes only once the database is closed (the next owner opens the file at once).
    expect(host.send({ kind: 'database-closed' })).toEqual([
      { kind: 'release-lock' },
      { kind: 'close-channel' },
      { kind: 'close-port', port: p },
      { kind: 'close-port', port: port('broker') },
      { kind: 'to-page', message: { kind: 'closed' } },
    ]);
    expect(host.phase).toBe('closed');
  });
});

describe('the link broker', () => {
  it('watches the broker it is told is alive; when that one dies, asks the page for a new one', () => {
    const broker = port('broker');
    const host = forwarder({ broker });
    expect(host.send({ kind: 'broker', port: broker, message: { kind: 'alive', lock: 'b1' } })).toEqual([
      { kind: 'watch-broker', port: broker, lock: 'b1' },
      { kind: 'clear-timer', timer: 'broker' },
    ]);
    // A broker replaced since is no news.
    expect(host.send({ kind: 'broker-gone', port: port('older') })).toEqual([]);
    // Not at once: a SharedWorker started in the same tick may join the dying broker (Firefox).
    expect(host.send({ kind: 'broker-gone', port: broker })).toEqual([{ kind: 'set-timer', timer: 'broker-restart', ms: BROKER_RESTART_MS }]);
    expect(host.state).toMatchObject({ broker: undefined });
    expect(host.send({ kind: 'timeout', timer: 'broker-restart' })).toEqual([{ kind: 'to-page', message: { kind: 'broker' } }]);
    // No broker: a new owner's announcement asks none for a link.
    expect(kinds(host.send(announce('new')))).not.toContain('to-broker');
  });

  it('a broker that never says it is alive is let go and another started, a bounded number of times', () => {
    const first = port('silent-1');
    const host = new Host();
    expect(host.send({ kind: 'open', options: OPFS, env: ENV, broker: first }).slice(0, 2)).toEqual([
      { kind: 'listen-broker', port: first },
      { kind: 'set-timer', timer: 'broker', ms: BROKER_TIMEOUT_MS },
    ]);
    host.send(announce('o'));
    // Silent past the bound: closed, and the page asked for a new one; calls meanwhile take the channel.
    expect(host.send({ kind: 'timeout', timer: 'broker' })).toEqual([{ kind: 'close-port', port: first }, { kind: 'to-page', message: { kind: 'broker' } }]);
    expect(host.owner()).toMatchObject({ via: 'channel' });
    // The next one answers: the forwarder asks it for a link, and a late timer changes nothing.
    const second = port('live');
    expect(host.send({ kind: 'broker-port', port: second })).toEqual([
      { kind: 'listen-broker', port: second },
      { kind: 'set-timer', timer: 'broker', ms: BROKER_TIMEOUT_MS },
      { kind: 'to-broker', port: second, message: { kind: 'connect', from: 'me', to: 'o' } },
    ]);
    host.send({ kind: 'broker', port: second, message: { kind: 'alive', lock: 'b' } });
    expect(host.send({ kind: 'timeout', timer: 'broker' })).toEqual([]);
    expect(host.state).toMatchObject({ broker: second, brokerAlive: true, brokerMisses: 0 });

    // Where every broker stays silent, the host stops asking after BROKER_ATTEMPTS of them…
    const stubborn = new Host();
    stubborn.send({ kind: 'open', options: OPFS, env: ENV, broker: port('s0') });
    const asks: number[] = [];
    let retry: HostEffect<Port>[] = [];
    for (let i = 1; i <= BROKER_ATTEMPTS + 1; i++) {
      const effects = stubborn.send({ kind: 'timeout', timer: 'broker' });
      asks.push(toPage(effects).length);
      if (toPage(effects).length > 0) stubborn.send({ kind: 'broker-port', port: port(`s${i}`) });
      else retry.push(...effects.filter((e) => e.kind === 'set-timer'));
    }
    expect(asks).toEqual([...Array<number>(BROKER_ATTEMPTS - 1).fill(1), 0, 0]);
    expect(stubborn.state).toMatchObject({ broker: undefined });
    // …for BROKER_RETRY_MS, then tries one more; a silent one waits for the next retry, a live one stays.
    expect(retry).toEqual([{ kind: 'set-timer', timer: 'broker-retry', ms: BROKER_RETRY_MS }]);
    expect(toPage(stubborn.send({ kind: 'timeout', timer: 'broker-retry' }))).toHaveLength(1);
    const silent = port('late-silent');
    stubborn.send({ kind: 'broker-port', port: silent });
    retry = stubborn.send({ kind: 'timeout', timer: 'broker' });
    expect(retry).toEqual([{ kind: 'close-port', port: silent }, { kind: 'set-timer', timer: 'broker-retry', ms: BROKER_RETRY_MS }]);
    expect(toPage(stubborn.send({ kind: 'timeout', timer: 'broker-retry' }))).toHaveLength(1);
    const live = port('late-live');
    stubborn.send({ kind: 'broker-port', port: live });
    stubborn.send({ kind: 'broker', port: live, message: { kind: 'alive', lock: 'b' } });
    expect(stubborn.state).toMatchObject({ broker: live, brokerAlive: true, brokerMisses: 0 });
    // A retry timer that fires once a broker is live again asks for nothing.
    expect(stubborn.send({ kind: 'timeout', timer: 'broker-retry' })).toEqual([]);
  });

  it('re-attached: an owner serves there, a forwarder without a link asks for one, one with a link does not', () => {
    const b2 = port('b2');
    const listen = [{ kind: 'listen-broker', port: b2 }, { kind: 'set-timer', timer: 'broker', ms: BROKER_TIMEOUT_MS }];
    const ownerWithout = seeking();
    ownerWithout.send({ kind: 'lock-granted' });
    ownerWithout.send({ kind: 'database-opened' });
    expect(ownerWithout.send({ kind: 'broker-port', port: b2 })).toEqual([...listen, { kind: 'to-broker', port: b2, message: { kind: 'serve', hostId: 'me' } }]);
    const unattached = seeking();
    unattached.send(announce('o'));
    expect(unattached.send({ kind: 'broker-port', port: b2 })).toEqual([...listen, { kind: 'to-broker', port: b2, message: { kind: 'connect', from: 'me', to: 'o' } }]);
    // A broker port the host had not heard from yet is replaced, and its wait with it.
    expect(forwarder({ owner: 'o', link: port('l') }).send({ kind: 'broker-port', port: b2 })).toEqual([{ kind: 'clear-timer', timer: 'broker' }, ...listen]);
    expect(seeking().send({ kind: 'broker-port', port: b2 })).toEqual(listen);
  });

  it('a host whose page starts no broker forwards over the channel and is told of no broker', () => {
    const host = seeking();
    expect(kinds(host.send(announce('o')))).not.toContain('to-broker');
    const c = call();
    expect(sent(host.send({ kind: 'page-call', call: c }))[0]!.via).toBe('channel');
  });
});

describe('closing', () => {
  it('a forwarder closes at once: drops its waiting calls, lets the lock request go, closes channel and ports', () => {
    const p = port('link');
    const broker = port('broker');
    const host = forwarder({ link: p, broker });
    const c = call();
    host.send({ kind: 'page-call', call: c });
    expect(host.send({ kind: 'close' })).toEqual([
      { kind: 'clear-timer', timer: `call:${c.id}` },
      { kind: 'release-lock' },
      { kind: 'close-channel' },
      { kind: 'close-port', port: p },
      { kind: 'close-port', port: broker },
      { kind: 'to-page', message: { kind: 'closed' } },
    ]);
    // A lock granted after all is let go at once; late messages change nothing.
    expect(host.send({ kind: 'lock-granted' })).toEqual([{ kind: 'release-lock' }]);
    expect(host.send(answerFrom(ok(c.id)))).toEqual([]);
    expect(host.send({ kind: 'close' })).toEqual([]);
  });

  it('closing while the database opens: closes it once open, announcing nothing', () => {
    const host = seeking();
    host.send({ kind: 'lock-granted' });
    expect(host.send({ kind: 'close' })).toEqual([]);
    expect(host.send({ kind: 'database-opened' })).toEqual([{ kind: 'close-database' }]);
    expect(host.send({ kind: 'database-closed' })).toEqual([{ kind: 'release-lock' }, { kind: 'close-channel' }, { kind: 'to-page', message: { kind: 'closed' } }]);
  });

  it('a closing host closes links paired now, ignores its broker and announcements, and passes change notices on', () => {
    const host = owner();
    host.send({ kind: 'close' });
    const p = port('p');
    expect(host.send(link('owner', 'x', p))).toEqual([{ kind: 'close-port', port: p }]);
    expect(host.send({ kind: 'broker', port: port('broker'), message: { kind: 'alive', lock: 'l' } })).toEqual([]);
    expect(host.send({ kind: 'broker-gone', port: port('broker') })).toEqual([]);
    const b2 = port('b2');
    expect(host.send({ kind: 'broker-port', port: b2 })).toEqual([{ kind: 'close-port', port: b2 }]);
    expect(host.send(announce('next'))).toEqual([]);
    expect(host.send({ kind: 'changed', queue: 'q' })).toHaveLength(2);
    expect(host.owner()).toEqual({ ownerId: 'me', isThisTab: true, via: 'self' });
  });

  it('a host closed before it opened anything just says so', () => {
    const host = new Host();
    expect(host.send({ kind: 'close' })).toEqual([{ kind: 'to-page', message: { kind: 'closed' } }]);
    const [answer] = toPage(host.send({ kind: 'page-call', call: call() }));
    expect(answer).toMatchObject({ ok: false, error: { name: 'ClosedError' } });
  });

  it('a page call before open is told the database is not open', () => {
    const [answer] = toPage(new Host().send({ kind: 'page-call', call: call() }));
    expect(answer).toMatchObject({ ok: false, error: { code: 'STORAGE_UNAVAILABLE', message: 'the database is not open' } });
  });
});

describe('builds', () => {
  const V1 = version(13);
  const V2 = version(14);
  /** A host of build `v` that opened with OPFS and is seeking. */
  const seekingAs = (v: HostVersion, broker?: Port) => {
    const host = new Host();
    host.send({ kind: 'open', options: OPFS, env: ENV, version: v, ...(broker ? { broker } : {}) });
    return host;
  };
  const ownerAs = (v: HostVersion, broker?: Port) => {
    const host = seekingAs(v, broker);
    host.send({ kind: 'lock-granted' });
    host.send({ kind: 'database-opened' });
    return host;
  };
  const whoFrom = (from: string, v: HostVersion) => fromHost({ kind: 'who', from, version: v });
  const announceAs = (hostId: string, v: HostVersion) => fromHost({ kind: 'owner', hostId, version: v });

  it('orders builds by core schema, then host schema; builds of other protocols, or that announce none, do not compare', () => {
    expect(compareVersions(version(14), version(13))).toBe(1);
    expect(compareVersions(version(13), version(14))).toBe(-1);
    expect(compareVersions({ ...V1, host: 2 }, V1)).toBe(1);
    expect(compareVersions({ ...V1, build: 'a' }, { ...V1, build: 'b' })).toBe(0);
    expect(compareVersions(V2, { ...V1, protocol: PROTOCOL_VERSION + 1 })).toBeUndefined();
    expect(compareVersions(V2, undefined)).toBeUndefined();
  });

  it('a host announces its build when it asks who owns the database and when it owns it', () => {
    const host = seekingAs(V1);
    const fresh = new Host();
    expect(sent(fresh.send({ kind: 'open', options: OPFS, env: ENV, version: V1 }))).toEqual([{ via: 'channel', message: { kind: 'who', from: 'me', version: V1 } }]);
    host.send({ kind: 'lock-granted' });
    expect(sent(host.send({ kind: 'database-opened' }))).toEqual([{ via: 'channel', message: { kind: 'owner', hostId: 'me', version: V1 } }]);
    expect(sent(host.send(whoFrom('same', V1)))).toEqual([{ via: 'channel', message: { kind: 'owner', hostId: 'me', version: V1 } }]);
  });

  it('an owner asked by a newer build hands over between batches: its page\'s calls wait and follow, other tabs\' are left to the next owner', () => {
    const broker = port('broker');
    const host = ownerAs(V1, broker);
    const link = port('from-x');
    host.send({ kind: 'broker', port: broker, message: { kind: 'link', side: 'owner', peer: 'x', port: link } });
    const running = call();
    host.send({ kind: 'page-call', call: running });
    const effects = host.send(whoFrom('newer', V2));
    expect(effects).toEqual([{ kind: 'to-broker', port: broker, message: { kind: 'leave', hostId: 'me' } }, { kind: 'close-database' }]);
    expect(host.phase).toBe('yielding');
    // Other tabs' calls are not served now; their hosts send them again to the next owner.
    expect(host.send(fromHost({ kind: 'call', from: 'x', call: call() }))).toEqual([]);
    // A call the closing database refused unapplied waits for the next owner; one it answered is answered.
    const closed = { kind: 'answer' as const, id: running.id, ok: false as const, error: errorToWire(new ClosedError('database')) };
    expect(host.send({ kind: 'served', answer: closed, reply: { to: 'page' }, call: running })).toEqual([{ kind: 'set-timer', timer: `call:${running.id}`, ms: CALL_TIMEOUT_MS }]);
    const done = call();
    expect(host.send({ kind: 'served', answer: ok(done.id), reply: { to: 'page' }, call: done })).toEqual([{ kind: 'to-page', message: ok(done.id) }]);
    expect(host.send({ kind: 'served', answer: ok('theirs'), reply: { to: 'host', host: 'x', via: { port: link } } })).toEqual([]);
    const later = call();
    expect(host.send({ kind: 'page-call', call: later })).toEqual([{ kind: 'set-timer', timer: `call:${later.id}`, ms: CALL_TIMEOUT_MS }]);
    // Closed: the lock goes to the newer host; this one asks again behind it. A refusal that
    // comes only now still waits for the next owner, as its own call would.
    const closedEffects = host.send({ kind: 'database-closed' });
    const lateRefused = call();
    const refusedLate = { kind: 'answer' as const, id: lateRefused.id, ok: false as const, error: errorToWire(new ClosedError('database')) };
    expect(host.send({ kind: 'served', answer: refusedLate, reply: { to: 'page' }, call: lateRefused })).toEqual([
      { kind: 'set-timer', timer: `call:${lateRefused.id}`, ms: CALL_TIMEOUT_MS },
      { kind: 'to-host', via: 'channel', message: { kind: 'call', from: 'me', call: lateRefused } },
    ]);
    expect(kinds(closedEffects)).toEqual(['release-lock', 'close-port', 'request-lock', 'to-page']);
    expect(host.phase).toBe('seeking');
    // The newer host announces itself: this tab is outdated, and its waiting calls go there.
    const followed = host.send(announceAs('newer', V2));
    expect(toPage(followed)).toContainEqual({ kind: 'outdated', newer: V2 });
    expect(sent(followed).map((m) => m.message)).toEqual([
      { kind: 'call', from: 'me', call: running },
      { kind: 'call', from: 'me', call: later },
      { kind: 'call', from: 'me', call: lateRefused },
    ]);
    expect(host.owner()).toEqual({ ownerId: 'newer', isThisTab: false, via: 'channel' });
    // Told once: the same owner, or another of that build, says nothing new.
    expect(toPage(host.send(announceAs('newer2', V2))).filter((m) => m.kind === 'outdated')).toEqual([]);
  });

  it('an outdated tab granted the lock (the newer owner went) does not open: it fails with SCHEMA_TOO_NEW, named from the versions', () => {
    const host = seekingAs(V1);
    host.send(announceAs('newer', V2));
    const effects = host.send({ kind: 'lock-granted' });
    expect(effects).toEqual([
      { kind: 'release-lock' },
      { kind: 'set-timer', timer: 'takeover', ms: TAKEOVER_MS },
      { kind: 'to-page', message: { kind: 'owner', owner: { ownerId: null, isThisTab: false, via: 'channel' } } },
    ]);
    const c = call();
    host.send({ kind: 'page-call', call: c });
    const [answer] = toPage(host.send({ kind: 'timeout', timer: 'takeover' }));
    expect(errorFromWire((answer as { error: WireError }).error)).toMatchObject({ code: 'SCHEMA_TOO_NEW', component: 'core', found: 14, supported: 13 });
  });

  it('a newer host does not forward to an older owner: it asks again, and waits for the handover', () => {
    const host = seekingAs(V2);
    const effects = host.send(announceAs('old', V1));
    expect(effects).toEqual([{ kind: 'to-host', via: 'channel', message: { kind: 'who', from: 'me', version: V2 } }]);
    expect(host.phase).toBe('seeking');
    expect(host.state).toMatchObject({ openSettled: false, outdated: undefined });
  });

  it('hosts of one rank, and hosts that announce no build, are followed as before and never handed over to', () => {
    const host = seekingAs(V1);
    host.send(announceAs('same', { ...V1, build: 'other' }));
    expect(host.phase).toBe('forwarding');
    expect(host.state).toMatchObject({ outdated: undefined });
    const old = seekingAs(V2);
    old.send(announce('unversioned'));
    expect(old.phase).toBe('forwarding');
    expect(ownerAs(V2).send(fromHost({ kind: 'who' }))).toEqual([{ kind: 'to-host', via: 'channel', message: { kind: 'owner', hostId: 'me', version: V2 } }]);
    expect(ownerAs(V2).send(whoFrom('older', V1))[0]).toMatchObject({ kind: 'to-host', message: { kind: 'owner' } });
  });

  it('two tabs that claim one app build id with different schemas: the joining one fails its open with a RangeError, the owner keeps the database', () => {
    const owner = ownerAs({ ...V1, build: 'x' });
    // The owner does not hand over to a tab whose build id it cannot trust; it answers as to any other.
    expect(owner.send(whoFrom('joiner', { ...V2, build: 'x' }))).toEqual([{ kind: 'to-host', via: 'channel', message: { kind: 'owner', hostId: 'me', version: { ...V1, build: 'x' } } }]);
    expect(owner.phase).toBe('owner');
    const joiner = seekingAs({ ...V2, build: 'x' });
    const [failed] = toPage(joiner.send(announceAs('owner', { ...V1, build: 'x' })));
    const error = errorFromWire((failed as { kind: 'open-failed'; error: WireError }).error);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toMatch(/options\.build "x" is announced by another tab .* schema 13.* schema 14.*Give each build its own id/);
    // Different ids, or none, are no conflict.
    expect(toPage(seekingAs({ ...V2, build: 'y' }).send(announceAs('owner', { ...V1, build: 'x' })))).toEqual([]);
  });

  it('a host asked by a newer build while it opened hands the database over as soon as it is open, announcing nothing', () => {
    const host = seekingAs(V1, port('broker'));
    const mine = call();
    host.send({ kind: 'page-call', call: mine });
    host.send({ kind: 'lock-granted' });
    host.send(whoFrom('newer', V2));
    const effects = host.send({ kind: 'database-opened' });
    expect(kinds(effects)).toEqual(['to-broker', 'close-database']);
    expect(host.phase).toBe('yielding');
    expect(host.forwarded).toEqual([mine.id]);
  });
});

describe('ownerInfo', () => {
  it('reports the last owner heard of while this host takes over', () => {
    const host = forwarder({ owner: 'old' });
    host.send({ kind: 'lock-granted' });
    expect(ownerInfo(host.state)).toEqual({ ownerId: 'old', isThisTab: false, via: 'channel' });
  });
});

/**
 * Several hosts of one database, each stepping its own machine, joined the way browsers join
 * them: a channel that reaches every other live host, a Web Lock granted in request order and
 * let go when its holder closes or dies, and one database file (sqlite-wasm, MEMFS) that each
 * owner opens with a real HostCore. Messages are delivered a task later, as postMessage does.
 * No broker: links and the broker are covered event by event above.
 */
class World {
  readonly file = `/election-${++worlds}.db`;
  readonly hosts: SimHost[] = [];
  readonly #lockQueue: SimHost[] = [];
  readonly #pending = new Set<Promise<unknown>>();

  /** The core schema the file is at, as the builds that opened it left it (hosts with a `schema` only). */
  schema = 0;

  /**
   * `tooOld`: the host runs a build older than the database's schema, so its open fails as a real
   * one does. `schema`: the host announces that build (schema `schema`) and opens the file as such
   * a build would: it migrates an older file up, and fails on a newer one.
   */
  add(id: string, { tooOld = false, schema }: { tooOld?: boolean; schema?: number } = {}): SimHost {
    const host: SimHost = { id, state: initialHostState(id), page: [], alive: true, mute: false, channel: false, tooOld, grants: 0, schema };
    this.hosts.push(host);
    this.dispatch(host, { kind: 'open', options: OPFS, env: ENV, ...(schema === undefined ? {} : { version: version(schema) }) });
    return host;
  }

  /** The page of `host` makes a call; resolves with its answer once one reaches the page. */
  call(host: SimHost, c: CallMessage): void {
    this.dispatch(host, { kind: 'page-call', call: c });
  }

  /** The page of `host` closes the database, and everything settles. */
  async close(host: SimHost): Promise<void> {
    this.dispatch(host, { kind: 'close' });
    await this.settle();
  }

  /** The page of `host` makes a call and everything settles: the answer, if one reached the page. */
  async round(host: SimHost, c: CallMessage): Promise<AnswerMessage | undefined> {
    this.call(host, c);
    await this.settle();
    return this.answer(host, c.id);
  }

  answer(host: SimHost, id: string): AnswerMessage | undefined {
    return host.page.find((m): m is AnswerMessage => m.kind === 'answer' && m.id === id);
  }

  /** The tab dies: nothing more from it, and the browser lets its lock go. */
  crash(host: SimHost): void {
    host.alive = false;
    this.#release(host);
  }

  /** Hosts whose takeover wait runs (the only timer the world lets pass: once nothing else is left to happen). */
  readonly #takeovers = new Set<SimHost>();

  async settle(): Promise<void> {
    for (;;) {
      while (this.#pending.size > 0) await Promise.all([...this.#pending]);
      const [host] = this.#takeovers;
      if (!host) return;
      this.#takeovers.delete(host);
      this.dispatch(host, { kind: 'timeout', timer: 'takeover' });
    }
  }

  dispatch(host: SimHost, event: HostEvent<Port>): void {
    if (!host.alive) return;
    if (event.kind === 'lock-granted') host.grants++;
    const result = step(host.state, event);
    host.state = result.state;
    for (const effect of result.effects) this.#perform(host, effect);
  }

  #later(fn: () => unknown): void {
    const task = new Promise((resolve) => setTimeout(resolve, 0)).then(fn);
    this.#pending.add(task);
    void task.finally(() => this.#pending.delete(task));
  }

  #perform(host: SimHost, effect: HostEffect<Port>): void {
    switch (effect.kind) {
      case 'to-page':
        host.page.push(effect.message);
        return;
      case 'to-host':
        if (host.mute) return;
        for (const other of this.hosts) {
          if (other !== host && other.channel) this.#later(() => this.dispatch(other, { kind: 'host', message: effect.message, via: 'channel' }));
        }
        return;
      case 'open-channel':
        host.channel = true;
        return;
      case 'close-channel':
        host.channel = false;
        return;
      case 'request-lock':
        if (this.#lockQueue.includes(host)) throw new Error(`${host.id} asked for the lock twice`);
        this.#lockQueue.push(host);
        if (this.#lockQueue.length === 1) this.#later(() => this.dispatch(host, { kind: 'lock-granted' }));
        return;
      case 'release-lock':
        this.#release(host);
        return;
      case 'open-database':
        this.#later(async () => {
          const db = await openWasmDatabase({ filename: this.file });
          try {
            if (host.schema !== undefined && this.schema > host.schema) throw new SchemaTooNewError(`database "${this.file}"`, 'core', this.schema, host.schema);
            if (host.schema !== undefined) this.schema = host.schema;
            // An older build meets the schema the newer one wrote: the check HostCore makes on open.
            if (host.tooOld) db.exec(`PRAGMA user_version = ${db.schemaVersion('core') + 1}`);
            host.core = new HostCore(db, { onChange: (queue) => this.#later(() => this.dispatch(host, { kind: 'changed', queue })) });
          } catch (error) {
            if (host.tooOld) db.exec(`PRAGMA user_version = ${db.schemaVersion('core') - 1}`);
            db.close();
            this.dispatch(host, { kind: 'database-failed', error });
            return;
          }
          this.dispatch(host, { kind: 'database-opened' });
        });
        return;
      case 'serve':
        this.#later(async () => {
          let answer: AnswerMessage;
          try {
            answer = { kind: 'answer', id: effect.call.id, ok: true, value: await host.core!.serve(effect.call, effect.journaled, effect.caller) };
          } catch (error) {
            answer = { kind: 'answer', id: effect.call.id, ok: false, error: errorToWire(error) };
          }
          this.dispatch(host, { kind: 'served', answer, reply: effect.reply, call: effect.call });
        });
        return;
      case 'close-database':
        this.#later(async () => {
          await host.core?.close();
          this.dispatch(host, { kind: 'database-closed' });
        });
        return;
      case 'set-timer':
        if (effect.timer === 'takeover') this.#takeovers.add(host);
        return;
      case 'clear-timer':
        if (effect.timer === 'takeover') this.#takeovers.delete(host);
        return;
      default:
        // Other timers never fire here; no ports exist without a broker.
        return;
    }
  }

  #release(host: SimHost): void {
    const index = this.#lockQueue.indexOf(host);
    if (index === -1) return;
    this.#lockQueue.splice(index, 1);
    const next = this.#lockQueue[0];
    if (index === 0 && next) this.#later(() => this.dispatch(next, { kind: 'lock-granted' }));
  }
}
let worlds = 0;

interface SimHost {
  id: string;
  state: HostState<Port>;
  page: HostToPage[];
  alive: boolean;
  /** Its messages to other hosts are lost (it dies right after it commits). */
  mute: boolean;
  channel: boolean;
  core?: HostCore;
  tooOld: boolean;
  /** How many times the lock was granted to it. */
  grants: number;
  /** The core schema of its build, announced; undefined: it announces none (a leasehold from before builds). */
  schema: number | undefined;
}

const version = (schema: number): HostVersion => ({ schema, host: 1, protocol: PROTOCOL_VERSION });

const publish = (event: unknown): CallMessage => ({ kind: 'call', id: `p${++ids}`, target: 'transport', method: 'publish', args: ['g', event, undefined], now: 1000 });
const inspect = (): CallMessage => ({ kind: 'call', id: `i${++ids}`, target: 'transport', method: 'inspect', args: [], now: 1000 });

describe('hosts together, over a real HostCore', () => {
  it('the first host owns the database; the others forward to it and are answered', async () => {
    const world = new World();
    const [a, b, c] = [world.add('a'), world.add('b'), world.add('c')];
    await world.settle();
    expect([a, b, c].map((h) => ownerInfo(h.state).ownerId)).toEqual(['a', 'a', 'a']);
    expect([a, b, c].map((h) => h.page.find((m) => m.kind === 'opened'))).toEqual([expect.anything(), expect.anything(), expect.anything()]);
    const p = publish('x');
    world.call(b, p);
    await world.settle();
    expect(world.answer(b, p.id)).toEqual({ kind: 'answer', id: p.id, ok: true, value: 1 });
    // The owner's commit told every tab.
    expect(c.page).toContainEqual({ kind: 'changed', queue: 'default' });
  });

  it('calls whose answers died with the owner are answered by the next owner from its journal: applied once', async () => {
    const world = new World();
    const [a, b, c] = [world.add('a'), world.add('b'), world.add('c')];
    await world.settle();
    // The owner applies both forwarded calls, then dies before its answers leave.
    a.mute = true;
    const [fromB, fromC] = [publish('b'), publish('c')];
    world.call(b, fromB);
    world.call(c, fromC);
    await world.settle();
    expect(world.answer(b, fromB.id)).toBeUndefined();
    world.crash(a);
    await world.settle();
    // b was next in line for the lock: it serves its own call itself, c sends its call again to b.
    expect(ownerInfo(b.state)).toMatchObject({ ownerId: 'b', isThisTab: true });
    expect(ownerInfo(c.state)).toMatchObject({ ownerId: 'b', isThisTab: false });
    const seqs = [world.answer(b, fromB.id), world.answer(c, fromC.id)].map((m) => (m as { value: unknown }).value);
    expect(new Set(seqs)).toEqual(new Set([1, 2]));
    const check = inspect();
    world.call(c, check);
    await world.settle();
    const snapshot = (world.answer(c, check.id) as { value: { groups: { messages: unknown[] }[] } }).value;
    expect(snapshot.groups[0]!.messages).toHaveLength(2);
  });

  it('new tab first, old tab second: when the new one closes the old one never owns, says SCHEMA_TOO_NEW, and forwards to the next new tab', async () => {
    const world = new World();
    const newer = world.add('new');
    await world.settle();
    const older = world.add('old', { tooOld: true });
    await world.settle();
    expect(ownerInfo(older.state)).toMatchObject({ ownerId: 'new', isThisTab: false });
    expect(await world.round(older, publish('before'))).toMatchObject({ ok: true, value: 1 });

    await world.close(newer);
    // The old tab got the lock, could not open the database and let the lock go.
    expect([older.grants, older.state.phase]).toEqual([1, 'seeking']);
    expect(ownerInfo(older.state)).toEqual({ ownerId: null, isThisTab: false, via: 'channel' });
    const refused = (await world.round(older, publish('meanwhile'))) as AnswerMessage & { ok: false };
    expect(errorFromWire(refused.error)).toMatchObject({ name: 'SchemaTooNewError', code: 'SCHEMA_TOO_NEW', component: 'core' });

    // A fresh new tab takes the free lock at once and owns; the old tab forwards to it again.
    const fresh = world.add('fresh');
    await world.settle();
    expect(ownerInfo(fresh.state)).toMatchObject({ ownerId: 'fresh', isThisTab: true });
    expect(ownerInfo(older.state)).toMatchObject({ ownerId: 'fresh', isThisTab: false });
    expect(await world.round(older, publish('after'))).toMatchObject({ ok: true, value: 2 });

    // That owner closes too: the old tab is granted the lock once more, lets it go, and stops asking.
    await world.close(fresh);
    expect([older.grants, older.state.phase]).toEqual([2, 'seeking']);
    expect(older.page.filter((m) => m.kind === 'open-failed')).toEqual([]);
  });

  it('old tab first, new tab second: the old owner hands over once, the new one migrates and serves, the old tab forwards and is outdated', async () => {
    const world = new World();
    const old = world.add('old', { schema: 13 });
    await world.settle();
    const before = publish('before');
    await world.round(old, before);
    const newer = world.add('new', { schema: 14 });
    // The old tab's page keeps calling while the database changes hands.
    const during = publish('during');
    world.call(old, during);
    await world.settle();
    expect(ownerInfo(newer.state)).toMatchObject({ ownerId: 'new', isThisTab: true });
    expect(ownerInfo(old.state)).toMatchObject({ ownerId: 'new', isThisTab: false });
    expect(world.schema).toBe(14);
    expect(old.page).toContainEqual({ kind: 'outdated', newer: version(14) });
    expect([world.answer(old, before.id), world.answer(old, during.id)]).toMatchObject([{ ok: true, value: 1 }, { ok: true, value: 2 }]);
    expect(newer.page.find((m) => m.kind === 'opened')).toBeDefined();
    expect([old.grants, newer.grants]).toEqual([1, 1]);

    // The new tab closes: the old one, outdated, does not open the migrated file.
    await world.close(newer);
    expect(old.grants).toBe(2);
    expect(errorFromWire(((await world.round(old, publish('alone'))) as { error: WireError }).error)).toMatchObject({ code: 'SCHEMA_TOO_NEW' });
  });

  it('tabs of two builds joining and leaving at random: the newest open build owns, ownership moves at most once per join or owner leaving, every call is answered once', async () => {
    // A small deterministic generator: the same run every time.
    let seed = 43;
    // The high bits: an LCG's low bits repeat with a short period.
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), Math.floor((seed / 2 ** 31) * n));
    const stats: { changes: number; events: number; builds: string }[] = [];
    for (let run = 0; run < 6; run++) {
      const world = new World();
      const live: SimHost[] = [];
      const calls: { host: SimHost; call: CallMessage }[] = [];
      let changes = 0;
      let events = 0;
      let lastOwner: string | null = null;
      let next = 0;
      for (let action = 0; action < 24; action++) {
        const roll = random(10);
        if (live.length < 4 && (live.length === 0 || roll < 3)) {
          live.push(world.add(`h${run}-${next++}`, { schema: random(2) === 0 ? 13 : 14 }));
          events++;
        } else if (live.length > 1 && roll < 5) {
          const [gone] = live.splice(random(live.length), 1);
          if (gone!.state.phase === 'owner') events++;
          world.dispatch(gone!, { kind: 'close' });
        } else {
          const host = live[random(live.length)]!;
          const c = publish(`e${action}`);
          calls.push({ host, call: c });
          world.call(host, c);
        }
        await world.settle();
        const owners = live.filter((h) => h.state.phase === 'owner');
        expect(owners.length).toBeLessThanOrEqual(1);
        const newest = Math.max(...live.map((h) => h.schema!));
        // Whenever a tab of the newest build present can open the file, one such tab owns it.
        if (newest >= world.schema) expect(owners.map((h) => h.schema)).toEqual([newest]);
        const owner = owners[0]?.id ?? null;
        if (owner !== null && owner !== lastOwner) changes++;
        if (owner !== null) lastOwner = owner;
      }
      expect(changes).toBeLessThanOrEqual(events);
      stats.push({ changes, events, builds: world.hosts.map((h) => h.schema).join('') });
      // Every call settled: applied (a seq) or refused saying why; no seq was given twice.
      const answers = calls.filter(({ host }) => host.alive && live.includes(host)).map(({ host, call }) => world.answer(host, call.id));
      for (const answer of answers) expect(answer === undefined ? 'unanswered' : answer.ok || (answer.error as WireError).code).not.toBe('unanswered');
      const seqs = answers.flatMap((a) => (a?.ok ? [a.value] : []));
      expect(new Set(seqs).size).toBe(seqs.length);
    }
    // The runs mixed the builds (an old tab after a new one, and the reverse) and moved ownership.
    expect(stats.filter((s) => s.builds.includes('1314') && s.builds.includes('1413'))).not.toHaveLength(0);
    expect(stats.reduce((sum, s) => sum + s.changes, 0)).toBeGreaterThan(6);
  });

  it('an owner that closes with a forwarded call not yet served leaves it to the next owner', async () => {
    const world = new World();
    const [a, b] = [world.add('a'), world.add('b')];
    await world.settle();
    const p = publish('late');
    world.call(b, p);
    world.dispatch(a, { kind: 'close' });
    await world.settle();
    expect(a.page.at(-1)).toEqual({ kind: 'closed' });
    expect(ownerInfo(b.state)).toMatchObject({ ownerId: 'b', isThisTab: true });
    expect(world.answer(b, p.id)).toEqual({ kind: 'answer', id: p.id, ok: true, value: 1 });
  });
});
