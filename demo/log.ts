/**
 * What happened and why, in words: every claim, ack, park, refusal and crash the page's workers
 * see, stamped with demo time. Tests read it through the `data-*` fields of each entry.
 */
import type { MessageSnapshot } from 'leasehold';
import { seconds } from './clock.ts';
import { defaultPreview } from '../src/inspector/format.js';

export type LogKind = 'claim' | 'ack' | 'park' | 'retry' | 'refused' | 'late-ack' | 'crash' | 'stall' | 'pause' | 'handled' | 'step' | 'dead' | 'reject' | 'redrive' | 'discard' | 'owner' | 'lost' | 'repeat' | 'edit' | 'info';

export interface LogEntry {
  id: number;
  at: number;
  kind: LogKind;
  text: string;
  worker?: string;
  group?: string;
  seq?: number;
  attempt?: number;
}

/** Kept entries; older ones drop off so a long session stays light. */
const MAX_ENTRIES = 300;

export class EventLog {
  readonly entries: LogEntry[] = [];
  #next = 0;
  readonly #listeners = new Set<() => void>();

  add(entry: Omit<LogEntry, 'id'>): void {
    this.entries.push({ ...entry, id: ++this.#next });
    if (this.entries.length > MAX_ENTRIES) this.entries.splice(0, this.entries.length - MAX_ENTRIES);
    for (const listener of this.#listeners) listener();
  }

  clear(): void {
    this.entries.length = 0;
    for (const listener of this.#listeners) listener();
  }

  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }
}

/** How a lease ended when its worker did not ack it: the "why" of the next claim of its message. */
export interface LeaseEnding {
  holder: string;
  expiresAt: number;
  /** `unanswered`: released by a delivery worker whose request got no answer, until `expiresAt`. */
  end: 'abandoned' | 'parked' | 'released' | 'unanswered';
}

/**
 * Why a claim got this message: the first delivery follows the round-robin order; a later one
 * follows whatever ended the previous lease — ours (`endings`, from this tab's workers) or, for
 * another tab's workers, the message as the last snapshot showed it.
 */
export function claimReason(groupId: string, attempt: number, ending: LeaseEnding | undefined, seen: MessageSnapshot | undefined): string {
  // A release gives the attempt back, so a message sent again after one is still on attempt 1.
  if (ending?.end === 'unanswered') return `no answer came to ${ending.holder}’s request, so it released the message until ${seconds(ending.expiresAt)} to send it again`;
  if (attempt === 1) return `first delivery; ${groupId} was next in round-robin order`;
  if (ending?.end === 'parked') return `its park ended at ${seconds(ending.expiresAt)}`;
  if (ending?.end === 'released') return `${ending.holder} gave it back (nack)`;
  if (ending) return `the lease of ${ending.holder} expired at ${seconds(ending.expiresAt)}`;
  if (seen?.state === 'parked' && seen.expiresAt !== null) return `its park ended at ${seconds(seen.expiresAt)}`;
  if (seen?.holder && seen.expiresAt !== null) return `the lease of ${seen.holder} expired at ${seconds(seen.expiresAt)}`;
  return `delivery ${attempt}: an earlier lease ended`;
}

/**
 * An event in a word or two for the log and the trace rings: its `label` (every lesson's event
 * has one), else the inspector's default preview, from the source tree.
 */
export function eventLabel(event: unknown): string {
  const label = event && typeof event === 'object' ? (event as { label?: unknown }).label : undefined;
  return typeof label === 'string' ? label : defaultPreview(event);
}
