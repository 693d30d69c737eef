/**
 * `LeaseholdObject`: a ready Durable Object class holding one leasehold database (transport and
 * execution store on the object's SQLite storage). An app exports it, or a subclass, from its
 * Worker and reaches it three ways:
 * - Workers RPC: `env.QUEUE.get(id).publish(...)`, every transport and store method, or
 *   `objectTransport(stub)` / `objectStore(stub)` for the exact contracts (error classes intact);
 * - HTTP: `POST /call` with a JSON call, for clients outside Workers (`leasehold/durable-object/client`);
 * - WebSocket: `GET /changes` upgrades to a socket that receives a notice after every change and
 *   whenever a lease, park or timer runs out, and carries calls too (the client's
 *   `calls: 'websocket'`): one message a call and one its answer, without the cost of an HTTP
 *   request each. Sockets use the hibernation API: an idle socket keeps no object in memory and
 *   costs nothing.
 * The object's alarm is kept at the next lease expiry, park end or timer, and wakes subscribers
 * then: a runtime waiting on `onChange` claims the expired lease or fires the due timer (with its
 * own relay) at once, with no polling. The store stays passive (it never fires a timer itself).
 */
import { DurableObject } from 'cloudflare:workers';
import { decodeValue } from '../remote/codec.js';
import { SqlHost } from '../remote/host.js';
import { METHODS, type StoreMethod, type Target, type TransportMethod } from '../remote/methods.js';
import { errorFromWire, errorToWire } from '../remote/wire.js';
import type { CommitChanges, Execution, ExecutionStore } from '../store/contract.js';
import type { Transport } from '../transport/contract.js';
import type { SqlDatabase } from '../sqlite/driver.js';
import { checkObjectOptions, type ObjectOptions } from './core.js';
import { ANY_QUEUE, type CallAnswer, type CallBody, type SocketAnswer, type SocketCall } from './protocol.js';
import { fromDurableObjectStorage } from './driver.js';
import type { DurableObjectStateLike, WebSocketLike } from './types.js';

/** Bindings a leasehold object reads. All optional. */
export interface LeaseholdEnv {
  LEASEHOLD_MAX_ATTEMPTS?: string;
  /** The largest event, in bytes of its JSON (default 1 MiB). */
  LEASEHOLD_MAX_EVENT_BYTES?: string;
  LEASEHOLD_TRACE_MAX?: string;
  /** The queues' `onDeadLetter`: `continue` or `hold`. */
  LEASEHOLD_ON_DEAD_LETTER?: string;
}

/**
 * The Durable Object class. Subclass it to set options in code (`override options()`), or set
 * `LEASEHOLD_MAX_ATTEMPTS` / `LEASEHOLD_MAX_EVENT_BYTES` / `LEASEHOLD_TRACE_MAX` /
 * `LEASEHOLD_ON_DEAD_LETTER` bindings. Declare it with SQLite storage
 * (wrangler: `new_sqlite_classes`).
 *
 * Every transport and store method is also a method of the object (Workers RPC). Over raw RPC a
 * thrown leasehold error arrives as a plain `Error` whose message starts with its class name
 * (RPC keeps only built-in error classes); use `objectTransport`/`objectStore` to get the classes
 * back. `save` and `commit` resolve the new version (the caller's object cannot be bumped remotely).
 */
export class LeaseholdObject<Env extends LeaseholdEnv = LeaseholdEnv> extends DurableObject<Env> {
  readonly #db: SqlDatabase & { readonly rowsWritten: number };
  /** Built at the first call or alarm, from {@link options} as they are then. */
  #sqlHost: SqlHost | undefined;
  /** When the alarm is set for (wall time), as far as this instance knows. */
  #alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectStateLike, env: Env) {
    super(ctx, env);
    this.#db = fromDurableObjectStorage(ctx.storage);
  }

  /** The object's options; the default reads the `LEASEHOLD_*` bindings. Override to set them in code. */
  options(): ObjectOptions {
    const number = (text: string | undefined) => (text === undefined || text === '' ? undefined : Number(text));
    const maxAttempts = number(this.env?.LEASEHOLD_MAX_ATTEMPTS);
    const maxEventBytes = number(this.env?.LEASEHOLD_MAX_EVENT_BYTES);
    const traceMax = number(this.env?.LEASEHOLD_TRACE_MAX);
    const onDeadLetter = this.env?.LEASEHOLD_ON_DEAD_LETTER || undefined;
    return {
      ...(maxAttempts === undefined ? {} : { maxAttempts }),
      ...(maxEventBytes === undefined ? {} : { maxEventBytes }),
      ...(traceMax === undefined ? {} : { traceMax }),
      ...(onDeadLetter === undefined ? {} : { onDeadLetter: onDeadLetter as ObjectOptions['onDeadLetter'] }),
    };
  }

  /**
   * The clock leases, parks, delays and timers are measured by, read once per call: `Date.now`
   * unless a subclass overrides it (to run the object on a clock of its own: a simulation, a
   * test). An object on its own clock arms no alarm, since its deadlines are not wall times:
   * whoever moves that clock wakes the consumers.
   */
  protected clock(): number {
    return Date.now();
  }

  /**
   * One call with its answer as data (never throws): what the HTTP endpoint and the RPC
   * wrappers use. `args` are plain values (RPC) unless `encoded` (HTTP's JSON codec).
   */
  async call(target: Target, method: string, args: unknown, extra: { client?: string; queue?: string; encoded?: boolean } = {}): Promise<CallAnswer> {
    try {
      const host = this.#host();
      const decoded = (extra.encoded ? decodeValue(args) : args) as unknown[];
      const rowsBefore = this.#db.rowsWritten;
      const settled = host.apply({ target, method, args: decoded, now: this.clock(), ...(extra.queue === undefined ? {} : { queue: extra.queue }) });
      if (!settled.ok) throw settled.error;
      if (settled.changed !== null) this.#broadcast(settled.changed, extra.client);
      const rowsWritten = this.#db.rowsWritten - rowsBefore;
      await this.#armAlarm();
      const changed = settled.changed !== null;
      return settled.value === undefined ? { ok: true, changed, rowsWritten } : { ok: true, value: settled.value, changed, rowsWritten };
    } catch (error) {
      return { ok: false, error: errorToWire(error) };
    }
  }

  /** The SQL host, built on first use: options() may read state a subclass sets up first. */
  #host(): SqlHost {
    return (this.#sqlHost ??= new SqlHost(this.#db, checkObjectOptions(this.options())));
  }

  /** HTTP: `POST …/call` (JSON {@link CallBody}) and `GET …/changes` (WebSocket upgrade); the last path segment decides. */
  async fetch(request: Request): Promise<Response> {
    const action = new URL(request.url).pathname.split('/').pop();
    if (action === 'call' && request.method === 'POST') {
      let body: CallBody;
      try {
        body = (await request.json()) as CallBody;
      } catch {
        return Response.json({ ok: false, error: { name: 'TypeError', message: 'the request body must be JSON' } } satisfies CallAnswer, { status: 400 });
      }
      const { target, method, args, client, queue } = body ?? ({} as CallBody);
      return Response.json(await this.call(target, method, args, { client, queue, encoded: true }));
    }
    if (action === 'changes' && request.headers.get('Upgrade')?.toLowerCase() === 'websocket') {
      const pair = new WebSocketPair();
      const [client, server] = Object.values(pair) as [WebSocket, WebSocket];
      const id = new URL(request.url).searchParams.get('client') ?? '';
      this.ctx.acceptWebSocket(server as unknown as WebSocketLike, [`client:${id}`]);
      return new Response(null, { status: 101, webSocket: client } as ResponseInit);
    }
    return new Response('leasehold: POST …/call or GET …/changes (WebSocket)', { status: 404 });
  }

  /** Wakes subscribers (a lease or park ran out, or a timer came due) and re-arms. */
  async alarm(): Promise<void> {
    this.#alarmAt = null;
    this.#broadcast(ANY_QUEUE);
    await this.#armAlarm();
  }

  /**
   * A call over the socket ({@link SocketCall}), answered on the same socket with its id. Like
   * the answer of `POST /call`, the answer leaves only once the call's writes are durable (the
   * output gate holds every outgoing message until then). Calls from one socket run in the order
   * they arrive: `call` awaits only storage, which holds the next event back. Anything else a
   * socket sends is ignored.
   */
  async webSocketMessage(socket: WebSocketLike, message: string | ArrayBuffer): Promise<void> {
    let call: SocketCall;
    try {
      call = JSON.parse(typeof message === 'string' ? message : new TextDecoder().decode(message)) as SocketCall;
    } catch {
      return;
    }
    if (typeof call !== 'object' || call === null || typeof call.id !== 'number') return;
    const client = this.ctx.getTags(socket).find((tag) => tag.startsWith('client:'))?.slice('client:'.length);
    const answer = await this.call(call.target, call.method, call.args, { client, queue: call.queue, encoded: true });
    try {
      socket.send(JSON.stringify({ ...answer, id: call.id } satisfies SocketAnswer));
    } catch {
      // The socket closed meanwhile: its caller gets STORAGE_UNAVAILABLE ("may have been applied").
    }
  }

  async webSocketClose(socket: WebSocketLike, code: number): Promise<void> {
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, 'closing');
    } catch {
      // Already closed by the other side.
    }
  }

  /** Sends `{"changed": queue}` to every socket but those of connection `caller`, which learns of its own changes from its answer. */
  #broadcast(queue: string, caller?: string): void {
    const skip = caller ? new Set(this.ctx.getWebSockets(`client:${caller}`)) : undefined;
    const notice = JSON.stringify({ changed: queue });
    for (const socket of this.ctx.getWebSockets()) {
      if (skip?.has(socket)) continue;
      try {
        socket.send(notice);
      } catch {
        // A socket closing right now: its close handler cleans up.
      }
    }
  }

  /**
   * Keeps the alarm at the next deadline. An object on a clock of its own (see {@link clock})
   * sets none: its deadlines are not wall times.
   */
  async #armAlarm(): Promise<void> {
    if (this.clock !== LeaseholdObject.prototype.clock) return;
    const storage = this.ctx.storage;
    if (this.#alarmAt === undefined) this.#alarmAt = await storage.getAlarm();
    const next = this.#host().nextDeadline(Date.now());
    // An earlier alarm than needed is harmless (it fires once, wakes subscribers for nothing and
    // re-arms); a missing one would strand timers. So an alarm no longer needed stays set:
    // deleting it after an ack and setting it again at the next claim cost a durable write per
    // call (RPC claim+ack 1,863 -> 1,237 µs a message without them, docs/BENCHMARKS.md).
    if (next === null || next === this.#alarmAt) return;
    if (this.#alarmAt !== null && this.#alarmAt <= next && this.#alarmAt >= Date.now()) return;
    await storage.setAlarm(next);
    this.#alarmAt = next;
  }
}

/** The RPC surface: every method of the method table, as the contracts type it. */
type RpcMethods = Pick<Transport, TransportMethod> & Pick<ExecutionStore, Exclude<StoreMethod, 'save' | 'commit'>>;

/** The RPC surface: every forwarded method, as the class's own (installed below). */
export interface LeaseholdObject<Env extends LeaseholdEnv = LeaseholdEnv> extends RpcMethods {
  /** `ExecutionStore.save`, resolving the new version. */
  save(exe: Execution): Promise<number>;
  /** `ExecutionStore.commit`, resolving the new version. */
  commit(exe: Execution, changes?: CommitChanges): Promise<number>;
}

for (const [target, table] of Object.entries(METHODS) as [Target, object][]) {
  for (const name of Object.keys(table)) {
    if (name in LeaseholdObject.prototype) throw new Error(`leasehold: ${target}.${name} clashes with another forwarded method`);
    Object.defineProperty(LeaseholdObject.prototype, name, {
      configurable: true,
      writable: true,
      async value(this: LeaseholdObject, ...args: unknown[]) {
        const answer = await this.call(target, name, args);
        if (answer.ok) return answer.value;
        // TypeError and RangeError cross RPC as themselves; leasehold's classes become an Error
        // whose message starts with the class name.
        throw errorFromWire(answer.error);
      },
    });
  }
}
