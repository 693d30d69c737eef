/**
 * One timeline for all tabs of the demo. Every tab drives its own clock, but they share one OPFS
 * database, whose leases must mean the same time everywhere: so tabs tell each other their time,
 * speed and pause over a BroadcastChannel and follow the latest. A lesson restart (time back to
 * 0 on an emptied queue) starts a new epoch, which every tab adopts.
 */
import type { DemoClock } from './clock.ts';

interface ClockMessage {
  epoch: number;
  time: number;
  speed: number;
  paused: boolean;
}

export interface Tabs {
  /** Tells the other tabs this tab's clock; `restart` after a lesson reset time to 0. */
  announce(restart?: boolean): void;
}

export function joinTabs(clock: DemoClock, enabled: () => boolean): Tabs {
  if (typeof BroadcastChannel !== 'function') return { announce: () => {} };
  const channel = new BroadcastChannel('leasehold-demo-clock');
  let epoch = 0;
  const announce = (restart = false): void => {
    if (!enabled()) return;
    if (restart) epoch++;
    channel.postMessage({ epoch, time: clock.now(), speed: clock.speed, paused: clock.paused } satisfies ClockMessage);
  };
  channel.onmessage = (event: MessageEvent<ClockMessage | 'hello'>) => {
    if (!enabled()) return;
    const message = event.data;
    // A tab that just opened asks for the timeline, so its first control is not from an old epoch.
    if (message === 'hello') return announce();
    if (message.epoch < epoch) return;
    if (message.epoch > epoch) {
      epoch = message.epoch;
      clock.set(message.time);
    } else if (message.time > clock.now()) {
      clock.advance(message.time - clock.now());
    }
    if (clock.speed !== message.speed) clock.setSpeed(message.speed);
    if (clock.paused !== message.paused) clock.setPaused(message.paused);
  };
  channel.postMessage('hello');
  return { announce };
}
