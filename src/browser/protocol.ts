/**
 * Messages between a page and its host worker, and between the host workers of one database
 * (over a BroadcastChannel). Types only.
 * @internal
 */
import type { AnswerMessage, CallMessage, WireError } from './wire.js';

/** How the page asks its host to open a database. */
export interface HostOptions {
  name: string;
  storage: 'opfs' | 'memory';
  durability: 'normal' | 'full';
  maxAttempts?: number;
  traceMax?: number;
  /** Record the SQL of claims and acks (see trace.ts). */
  traceSql?: boolean;
}

/** Who owns a database: the id of the owning host, and whether it is this tab's. */
export interface OwnerInfo {
  ownerId: string | null;
  isThisTab: boolean;
}

export type PageToHost = { kind: 'open'; options: HostOptions } | CallMessage | { kind: 'close' };

export type HostToPage =
  | { kind: 'opened'; owner: OwnerInfo }
  | { kind: 'open-failed'; error: WireError }
  | AnswerMessage
  | { kind: 'changed'; queue: string }
  | { kind: 'owner'; owner: OwnerInfo }
  | { kind: 'closed' };

/** Between the host workers of one database. `to`/`from` are host ids. */
export type HostToHost =
  | { kind: 'call'; from: string; call: CallMessage }
  | { kind: 'answer'; to: string; answer: AnswerMessage }
  | { kind: 'owner'; hostId: string }
  | { kind: 'who' }
  | { kind: 'changed'; queue: string };
