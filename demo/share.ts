/**
 * The address holds the scene — lesson, speed and time (`#lesson=5&speed=1&t=4.0`) — so a link
 * opens the same scene: the lesson is set up from an empty queue and played, paused, to that
 * time. A reload of the page's own address must not do that (it would empty a queue the reload
 * is meant to keep), so the last address written is remembered in sessionStorage, which a
 * reload keeps and a link opened elsewhere does not have.
 */
export interface Scene {
  lesson: number;
  speed: number;
  /** Demo milliseconds, a multiple of 100. */
  time: number;
  /** A lesson's second tab (7, 10): joins the queue as it is instead of setting the lesson up. */
  join: boolean;
}

const KEY = 'leasehold-demo-address';

/** The scene in the address, and whether it is this tab's own (a reload) rather than a link. */
export function readScene(): { scene: Scene; own: boolean } | null {
  const params = new URLSearchParams(location.hash.slice(1));
  const lesson = Number(params.get('lesson'));
  if (!params.has('lesson') || !Number.isInteger(lesson) || lesson < 0) return null;
  const speed = Number(params.get('speed') ?? 1);
  const time = Math.round(Number(params.get('t') ?? 0) * 10) * 100;
  let own = false;
  try {
    own = sessionStorage.getItem(KEY) === location.hash;
  } catch {
    // No sessionStorage (some private modes): every address counts as a link.
  }
  return { scene: { lesson, speed: Number.isFinite(speed) && speed > 0 ? speed : 1, time: Number.isFinite(time) && time > 0 ? time : 0, join: params.get('tab') === '2' }, own };
}

/** Writes the scene into the address (replacing, so Back is not flooded). Free play has no scene. */
export function writeScene(scene: Scene): void {
  const params = new URLSearchParams();
  if (scene.lesson > 0) {
    params.set('lesson', String(scene.lesson));
    params.set('speed', String(scene.speed));
    params.set('t', (Math.floor(scene.time / 100) / 10).toFixed(1));
    if (scene.join) params.set('tab', '2');
  }
  const hash = params.size ? `#${params.toString()}` : '';
  if (hash === location.hash) return;
  history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
  try {
    sessionStorage.setItem(KEY, location.hash);
  } catch {
    // See readScene.
  }
}
