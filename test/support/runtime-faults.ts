/**
 * Fault injection for the model check: wraps a real store or transport so that the next call of
 * one chosen method throws a {@link Crash} instead of running — the worker "dies" at exactly that
 * point of a step, with everything before it done and nothing after it. Every other call goes
 * straight to the real backend.
 */

/** What a worker that died mid-step throws. */
export class Crash extends Error {
  override name = 'Crash';
}

export interface Faulty<T extends object> {
  /** The wrapped backend, to hand to one worker. */
  target: T;
  /** The next call of `method` throws a Crash without reaching the backend. */
  crashAt(method: keyof T & string): void;
}

export function withFaults<T extends object>(real: T): Faulty<T> {
  let armed: string | undefined;
  const target = new Proxy(real, {
    get(inner, property) {
      const value = Reflect.get(inner, property) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === armed) {
          armed = undefined;
          return Promise.reject(new Crash(`crashed at ${String(property)}`));
        }
        // Bound to the real object: the backends keep their state in private fields.
        return (value as (...a: unknown[]) => unknown).apply(inner, args);
      };
    },
  });
  return { target, crashAt: (method) => void (armed = method) };
}
