/**
 * The transport conformance suite on spreadTransport, a combinator over any transports: over one
 * and three InMemoryTransports, and over three SqliteTransports sharing one sqlite-wasm database
 * (different queue names). What spreadTransport documents as holding only within a part is
 * declared in `caps.limits`; everything else runs as on any backend. The workerd run over
 * LeaseholdObjects (concurrency, routing) is test/durable-object-spread.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import { openWasmDatabase } from '../src/sqlite/wasm.js';
import type { Transport, TransportOptions } from '../src/transport/contract.js';
import { InMemoryTransport } from '../src/transport/memory.js';
import { SqliteTransport } from '../src/transport/sqlite.js';
import { groupHash, spreadTransport } from '../src/transport/spread.js';
import { describeTransport, type TransportCaps } from './conformance/transport.js';

/** What spreadTransport's module comment says holds only within one part. */
const spreadLimits: TransportCaps['limits'] = { roundRobinPerPart: true };
/** Over parts with their own queue names, a lease names its part's queue. */
const namedParts: TransportCaps['limits'] = { ...spreadLimits, partQueues: true };

const overMemory = (n: number) => async (options: Omit<TransportOptions, 'clock'>) => {
  const clock = new ManualClock(1_000_000);
  const parts = Array.from({ length: n }, () => new InMemoryTransport({ ...options, clock: clock.now }));
  return { transport: spreadTransport(parts), clock, dispose: async () => {} };
};

describeTransport('spreadTransport over 1 InMemoryTransport', { json: true, persistent: false, limits: { eventsByIdentity: true } }, overMemory(1));
describeTransport('spreadTransport over 3 InMemoryTransports', { json: true, persistent: false, limits: { ...spreadLimits, eventsByIdentity: true } }, overMemory(3));

describeTransport(
  'spreadTransport over 3 SqliteTransports (one sqlite-wasm database, three queue names)',
  { json: true, persistent: false, namedQueues: true, limits: namedParts },
  async (options) => {
    const clock = new ManualClock(1_000_000);
    const db = await openWasmDatabase();
    // Another spread queue of the same database is three more queue names: `<name>-0` to `<name>-2`.
    const spread = (name: string): Transport<any> =>
      spreadTransport(Array.from({ length: 3 }, (_, i) => new SqliteTransport(db, { ...options, queue: `${name}-${i}`, clock: clock.now })));
    return {
      transport: spread('spread'),
      clock,
      queue: async (name) => spread(name),
      async dispose() {
        db.close();
      },
    };
  },
);

describe('groupHash and spreadTransport arguments', () => {
  it('hashes a group id with 32-bit FNV-1a, so a group keeps its part across releases', () => {
    // Published FNV-1a test vectors: a changed hash would move stored groups to other parts.
    expect(groupHash('')).toBe(0x811c9dc5);
    expect(groupHash('a')).toBe(0xe40c292c);
    expect(groupHash('foobar')).toBe(0xbf9cf968);
  });

  it('refuses a group id that is not a string, and parts that are not a non-empty array of transports', () => {
    expect(() => groupHash(7 as never)).toThrow(TypeError);
    for (const parts of [[], undefined, [{}], 'x']) expect(() => spreadTransport(parts as never)).toThrow(TypeError);
  });
});
