/**
 * What crosses between a caller and a host, whatever carries it (postMessage between a page and
 * the browser's host workers, an HTTP body or Workers RPC to a Durable Object): the call, the
 * answer, errors flattened to plain data and rebuilt as the same classes on the other side
 * (`instanceof` survives neither postMessage nor JSON), and the leases of a batch ack sent as
 * their fences and given back as the caller's own objects. Types and small functions only; no
 * queue logic lives here.
 * @internal
 */
import type { AckManyResult, Lease } from '../transport/contract.js';
import { ClosedError, LeaseholdError, type LeaseholdErrorCode, LeaseLostError, SchemaTooNewError, StorageError, StoreConflictError } from '../errors.js';
import type { Target } from './methods.js';

/** One contract call, as the method table describes it. */
export interface RemoteCall {
  target: Target;
  method: string;
  args: unknown[];
  /** For the transport: the named queue (absent: the default queue). */
  queue?: string;
}

/** A call's answer: its value, or its error as data. */
export type Answer = { ok: true; value?: unknown } | { ok: false; error: WireError };

/** An error as plain data. */
export interface WireError {
  name: string;
  message: string;
  code?: LeaseholdErrorCode;
  fields?: Record<string, unknown>;
}

/** Flattens an error for postMessage, keeping what callers branch on. */
export function errorToWire(error: unknown): WireError {
  if (error instanceof LeaseLostError) {
    return { name: error.name, message: error.message, code: error.code, fields: { seq: error.seq, attempt: error.attempt, groupId: error.groupId } };
  }
  if (error instanceof StoreConflictError) {
    return { name: error.name, message: error.message, code: error.code, fields: { executionId: error.executionId, expected: error.expected, found: error.found } };
  }
  if (error instanceof SchemaTooNewError) {
    return { name: error.name, message: error.message, code: error.code, fields: { database: error.database, component: error.component, found: error.found, supported: error.supported } };
  }
  if (error instanceof LeaseholdError) return { name: error.name, message: error.message, code: error.code };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

/** Rebuilds the error `errorToWire` flattened, as the same class. */
export function errorFromWire(wire: WireError): Error {
  const f = wire.fields ?? {};
  switch (wire.name) {
    case 'LeaseLostError':
      return new LeaseLostError(f.seq as number, f.attempt as number, f.groupId as string);
    case 'StoreConflictError':
      return new StoreConflictError(f.executionId as string, f.expected as number, f.found as number);
    case 'SchemaTooNewError':
      return new SchemaTooNewError(f.database as string, f.component as string, f.found as number, f.supported as number);
    case 'ClosedError': {
      const closed = new ClosedError('database');
      closed.message = wire.message;
      return closed;
    }
    case 'TypeError':
      return new TypeError(wire.message);
    case 'RangeError':
      return new RangeError(wire.message);
    case 'StorageError':
      return new StorageError(wire.code ?? 'STORAGE_FAILED', wire.message);
    default:
      if (wire.code?.startsWith('STORAGE_')) return new StorageError(wire.code, wire.message);
      if (wire.code) return new LeaseholdError(wire.code, wire.message);
      return Object.assign(new Error(wire.message), { name: wire.name });
  }
}

/**
 * `ackMany` answers with the caller's own lease objects; the other side sent back copies. Both
 * arrays are in input order and split it, so one pass puts the originals back.
 */
export function sameLeases<E>(given: readonly Lease<E>[], answer: AckManyResult): AckManyResult<E> {
  const result: AckManyResult<E> = { acked: [], lost: [] };
  let next = 0;
  for (const lease of given) {
    const acked = answer.acked[next];
    if (acked && acked.seq === lease.seq && acked.attempt === lease.attempt && acked.groupId === lease.groupId && acked.workerId === lease.workerId) {
      result.acked.push(lease);
      next++;
    } else {
      result.lost.push(lease);
    }
  }
  return result;
}

/**
 * What of each lease `ackMany` sends: the fields the owner checks and fences with (and its queue). The
 * event stays on the page: cloning it there and back (the answer carries the leases it was sent)
 * cost more than the rest of the message. Anything that is not an object is sent as it is, so
 * the owner refuses it with the error it always gave.
 */
export function leaseFences(leases: unknown): unknown {
  if (!Array.isArray(leases)) return leases;
  return leases.map((lease: unknown) => {
    if (typeof lease !== 'object' || lease === null) return lease;
    const { seq, attempt, workerId, groupId, queue } = lease as Record<string, unknown>;
    return queue === undefined ? { seq, attempt, workerId, groupId } : { seq, attempt, workerId, groupId, queue };
  });
}
