/**
 * Messages between a page and its host worker, between the host workers of one database (over a
 * BroadcastChannel, or a MessagePort the link broker paired), and between a host and the broker.
 * Types only.
 * @internal
 */
import type { Target } from '../remote/methods.js';
import type { DeadLetterPolicy } from '../transport/contract.js';
import type { Answer, WireError } from '../remote/wire.js';

/**
 * A call from a page. `id` is unique per database across tabs and reused when the call is
 * retried; `now` is the page's clock reading (every lease and park is measured on the page's
 * clock). Target `'host'` addresses the host worker itself (`owner`, `sqlTrace`).
 */
export interface CallMessage {
  kind: 'call';
  id: string;
  target: Target | 'host';
  method: string;
  args: unknown[];
  /** For the transport: the named queue (absent: the default queue). */
  queue?: string;
  now: number;
}

/** The answer to the call `id`. */
export type AnswerMessage = { kind: 'answer'; id: string } & Answer;

/** How the page asks its host to open a database. */
export interface HostOptions {
  name: string;
  storage: 'opfs' | 'memory';
  durability: 'normal' | 'full';
  maxAttempts?: number;
  maxEventBytes?: number;
  onDeadLetter?: DeadLetterPolicy;
  traceMax?: number;
  /** Record the SQL of claims and acks (see trace.ts). */
  traceSql?: boolean;
  /** The app's build id, announced to the other tabs (see BrowserDatabaseOptions.build). */
  build?: string;
}

/**
 * What a host announces of its build. Hosts order by `schema`, then `host` (the schema versions
 * of the core tables and of the host's journal that the build writes): the newest owns. Only
 * hosts of one `protocol` (the messages in this file) compare at all; a host of a build from
 * before versions were announced sends none, and is neither yielded to nor asked to yield.
 */
export interface HostVersion {
  schema: number;
  host: number;
  protocol: number;
  /** The app's build id, when the app gave one: for reports only, never ordered. */
  build?: string;
}

/** Who owns a database: the id of the owning host, and whether it is this tab's. */
export interface OwnerInfo {
  ownerId: string | null;
  isThisTab: boolean;
  /**
   * How this tab's calls reach the owner: `'self'` (this tab is the owner), `'port'` (a
   * MessagePort straight to the owner's worker) or `'channel'` (the BroadcastChannel: while the
   * port is being set up, or where the browser has no SharedWorker). For diagnostics.
   */
  via?: 'self' | 'port' | 'channel';
}

/**
 * `broker`: a port to the link broker (a SharedWorker the page started), when the page has one;
 * sent again (kind `broker`) when the host asks for one because the broker went away.
 */
export type PageToHost = { kind: 'open'; options: HostOptions; broker?: MessagePort } | { kind: 'broker'; port: MessagePort } | CallMessage | { kind: 'close' };

export type HostToPage =
  | { kind: 'opened'; owner: OwnerInfo }
  | { kind: 'open-failed'; error: WireError }
  | AnswerMessage
  | { kind: 'changed'; queue: string }
  | { kind: 'owner'; owner: OwnerInfo }
  /** A tab of a newer build owns the database now: this tab's build is outdated (its calls are forwarded there while the wire allows). */
  | { kind: 'outdated'; newer: HostVersion }
  /** The broker went away (its tab crashed, which released its Web Lock): start or join a broker again and send its port. */
  | { kind: 'broker' }
  | { kind: 'closed' };

/** Between the host workers of one database. `to`/`from` are host ids. Over a link port only `call` and `answer`. */
export type HostToHost =
  | { kind: 'call'; from: string; call: CallMessage }
  | { kind: 'answer'; to: string; answer: AnswerMessage }
  /** `version`: absent from hosts of a leasehold that did not announce builds. */
  | { kind: 'owner'; hostId: string; version?: HostVersion }
  /** `from` and `version`: who asks, and its build (absent as above); an owner of an older build hands the database over to it. */
  | { kind: 'who'; from?: string; version?: HostVersion }
  | { kind: 'changed'; queue: string };

/** From a host to the link broker: `serve` (this host owns a database), `connect` (link me to owner `to`), `leave`. */
export type HostToBroker = { kind: 'serve'; hostId: string } | { kind: 'connect'; from: string; to: string } | { kind: 'leave'; hostId: string };

/**
 * From the broker: `link`, a port whose other end is host `peer` (`side: 'owner'` goes to an owner,
 * whom `peer` forwards to; `'caller'` to a forwarding host, `peer` being the owner it asked for);
 * `alive`, the Web Lock the broker holds while it lives.
 */
export type BrokerToHost = { kind: 'link'; side: 'owner' | 'caller'; peer: string; port: MessagePort } | { kind: 'alive'; lock: string };
