/**
 * Playing a lesson to a given time, for a shared link: the clock moves in 100 ms steps and each
 * step waits until every call it set off has answered, as the step button does. Jumping straight
 * to the time would let the workers act late (a claim due at 1 s made at 4 s), a different scene.
 */
import type { DemoClock } from './clock.ts';
import type { Activity } from './database.ts';

const STEP_MS = 100;

export async function playTo(clock: DemoClock, activity: Activity, time: number): Promise<void> {
  while (clock.now() < time) {
    clock.advance(Math.min(STEP_MS, time - clock.now()));
    await quiet(activity);
  }
}

/** Resolves once no call is in flight across a full task turn (a worker's next call starts in a microtask after its last one answers). */
async function quiet(activity: Activity): Promise<void> {
  do await new Promise((resolve) => setTimeout(resolve, 0));
  while (activity.pending > 0);
  await new Promise((resolve) => setTimeout(resolve, 0));
  if (activity.pending > 0) return quiet(activity);
}
