/**
 * The page's settings, remembered across reloads with idb-keyval: storage, speed, lesson, which
 * panels are open, the demo time (so leases stored in OPFS keep their meaning after a reload)
 * and the executions this page knows about (the store has no "list all").
 */
import { createStore, get, set } from 'idb-keyval';
import type { Storage } from './database.ts';

export interface Settings {
  storage: Storage;
  speed: number;
  paused: boolean;
  /** 0: free play; 1–11: a lesson. */
  lesson: number;
  /** Panel id → open. */
  panels: Record<string, boolean>;
  /** Demo time per storage: each database has its own timeline. */
  time: Record<Storage, number>;
  executions: Record<Storage, string[]>;
}

const DEFAULTS: Settings = {
  storage: 'opfs',
  speed: 1,
  paused: false,
  lesson: 0,
  panels: {},
  time: { opfs: 0, memory: 0 },
  executions: { opfs: [], memory: [] },
};

const store = createStore('leasehold-demo', 'settings');
const KEY = 'settings';

export async function loadSettings(): Promise<Settings> {
  try {
    const saved = await get<Partial<Settings>>(KEY, store);
    return { ...DEFAULTS, ...saved, time: { ...DEFAULTS.time, ...saved?.time }, executions: { ...DEFAULTS.executions, ...saved?.executions } };
  } catch {
    // IndexedDB can be unavailable (private modes of some browsers): the page still works.
    return structuredClone(DEFAULTS);
  }
}

let queued: Settings | undefined;
let writing = false;

/** Saves `settings`, coalescing bursts (the time is saved every second while playing). */
export function saveSettings(settings: Settings): void {
  queued = structuredClone(settings);
  if (writing) return;
  writing = true;
  void (async () => {
    while (queued) {
      const next = queued;
      queued = undefined;
      await set(KEY, next, store).catch(() => {});
    }
    writing = false;
  })();
}
