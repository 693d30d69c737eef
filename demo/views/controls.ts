/**
 * The header's controls: time (play/pause, step, speed) and storage (OPFS or memory, and which
 * tab owns the database file). Space toggles play; the right arrow steps (outside form fields).
 */
import { type DemoClock, SPEEDS, seconds } from '../clock.ts';
import type { Storage } from '../database.ts';
import { h, setAttr, setText } from './dom.ts';

export class TimeControls {
  readonly el: HTMLElement;
  readonly #clock: DemoClock;
  readonly #time = h('output', { class: 'time', attrs: { 'data-testid': 'clock', 'aria-label': 'demo time' } });
  readonly #play: HTMLButtonElement;
  readonly #speeds: HTMLButtonElement[];

  constructor(clock: DemoClock, onControl: () => void) {
    this.#clock = clock;
    this.#play = h('button', { class: 'play', attrs: { type: 'button', 'data-testid': 'play' }, on: { click: () => this.toggle() } });
    const step = (ms: number) =>
      h('button', { text: `+${seconds(ms)}`, attrs: { type: 'button', 'data-testid': `step-${ms}`, 'aria-label': `step ${seconds(ms)} (pauses)` }, on: { click: () => this.step(ms) } });
    this.#speeds = SPEEDS.map((speed) =>
      h('button', {
        text: `${speed}×`,
        attrs: { type: 'button', 'data-testid': `speed-${speed}`, 'aria-label': `speed ${speed}×` },
        on: {
          click: () => {
            clock.setSpeed(speed);
            onControl();
          },
        },
      }),
    );
    this.#onControl = onControl;
    this.el = h(
      'div',
      { class: 'time-controls', attrs: { role: 'group', 'aria-label': 'Time' } },
      this.#time,
      this.#play,
      step(100),
      step(1000),
      h('span', { class: 'speeds', attrs: { role: 'group', 'aria-label': 'Speed' } }, ...this.#speeds),
    );
    document.addEventListener('keydown', (event) => {
      const target = event.target as HTMLElement;
      if (target.closest('input, select, textarea, button') || event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key === ' ') {
        event.preventDefault();
        this.toggle();
      } else if (event.key === 'ArrowRight') {
        event.preventDefault();
        this.step(event.shiftKey ? 1000 : 100);
      }
    });
  }

  readonly #onControl: () => void;

  toggle(): void {
    this.#clock.setPaused(!this.#clock.paused);
    this.#onControl();
  }

  step(ms: number): void {
    if (!this.#clock.paused) this.#clock.setPaused(true);
    this.#clock.advance(ms);
    this.#onControl();
  }

  render(): void {
    const clock = this.#clock;
    setText(this.#time, seconds(clock.now()));
    setAttr(this.#time, 'data-ms', String(clock.now()));
    setText(this.#play, clock.paused ? '▶ Play' : '❚❚ Pause');
    setAttr(this.#play, 'aria-pressed', String(!clock.paused));
    setAttr(this.#play, 'aria-label', clock.paused ? 'play' : 'pause');
    for (const [i, button] of this.#speeds.entries()) setAttr(button, 'aria-pressed', String(SPEEDS[i] === clock.speed));
  }
}

export class StorageControls {
  readonly el: HTMLElement;
  readonly #owner = h('p', { class: 'owner', attrs: { 'data-testid': 'owner', 'aria-live': 'polite' } });
  readonly #radios: HTMLInputElement[];
  readonly #note = h('p', { class: 'storage-note', attrs: { 'data-testid': 'storage-note' } });

  constructor(current: Storage, onSwitch: (storage: Storage) => void) {
    this.#radios = (['opfs', 'memory'] as const).map((storage) => {
      const input = h('input', { attrs: { type: 'radio', name: 'storage', value: storage, 'data-testid': `storage-${storage}` } });
      input.checked = storage === current;
      input.addEventListener('change', () => input.checked && onSwitch(storage));
      return input;
    });
    const [opfs, memory] = this.#radios as [HTMLInputElement, HTMLInputElement];
    this.el = h(
      'div',
      { class: 'storage' },
      h('fieldset', {}, h('legend', { text: 'Storage' }), h('label', {}, opfs, ' OPFS (kept)'), h('label', {}, memory, ' memory (this tab)')),
      this.#note,
      this.#owner,
    );
    this.show(current, 'opening…');
  }

  #shown: Storage | undefined;

  show(storage: Storage, owner: string): void {
    // Only when the storage really changed: rewriting the radios every frame would undo a click.
    if (this.#shown !== storage) for (const radio of this.#radios) radio.checked = radio.value === storage;
    this.#shown = storage;
    setText(
      this.#note,
      storage === 'opfs'
        ? 'SQLite in the origin private file system: a reload keeps every group, message and lease. Reloading crashes this tab’s workers, so their leases run out like any crash’s.'
        : 'SQLite in memory, in this tab only: a reload loses everything.',
    );
    setText(this.#owner, owner);
  }
}
