/** The lesson picker: free play or one of the lessons, with what to watch, the lesson's own action and a replay button. */
import type { Lesson } from '../lessons.ts';
import { h, setAttr, setText } from './dom.ts';

const FREE_PLAY = 'Free play: publish messages, add workers, and crash, stall or pause them to see what the queue does. Or pick a lesson above: each starts from an empty queue at 0.0 s.';

export class LessonBar {
  readonly el: HTMLElement;
  readonly #buttons: HTMLButtonElement[];
  readonly #text = h('p', { class: 'lesson-text', attrs: { 'data-testid': 'lesson-text', 'aria-live': 'polite' } });
  readonly #title = h('h2', { class: 'lesson-title', attrs: { 'data-testid': 'lesson-title' } });
  readonly #lessons: readonly Lesson[];

  constructor(lessons: readonly Lesson[], onPick: (id: number) => void) {
    this.#lessons = lessons;
    const pick = (id: number, text: string) =>
      h('button', { text, attrs: { type: 'button', 'data-testid': `lesson-${id}`, 'aria-pressed': 'false' }, on: { click: () => onPick(id) } });
    this.#buttons = [pick(0, 'Free play'), ...lessons.map((lesson) => pick(lesson.id, `${lesson.id}. ${lesson.title}`))];
    this.#action.addEventListener('click', () => this.#lessons.find((l) => l.id === this.#current)?.action?.run());
    const replay = h('button', { class: 'replay', text: '↺ Restart lesson', attrs: { type: 'button', 'data-testid': 'replay' }, on: { click: () => this.#current > 0 && onPick(this.#current) } });
    this.el = h(
      'section',
      { class: 'lessons', attrs: { 'aria-label': 'Lessons' } },
      h('nav', { class: 'lesson-picker', attrs: { 'aria-label': 'Pick a lesson' } }, ...this.#buttons),
      h('div', { class: 'lesson-body' }, h('div', {}, this.#title, this.#text), h('div', { class: 'lesson-buttons' }, this.#action, replay)),
    );
  }

  #current = 0;
  readonly #action = h('button', { class: 'lesson-action', attrs: { type: 'button', 'data-testid': 'lesson-action' } });

  /** `joined`: this tab joined the lesson another tab set up (lessons 7 and 10's second tab). */
  show(id: number, joined = false): void {
    this.#current = id;
    this.#buttons.forEach((button, i) => setAttr(button, 'aria-pressed', String(i === id)));
    const lesson = this.#lessons.find((l) => l.id === id);
    setText(this.#title, lesson ? `Lesson ${lesson.id}: ${lesson.title}` : 'Free play');
    setText(this.#text, lesson ? (joined && lesson.joinText) || lesson.text : FREE_PLAY);
    this.#action.hidden = !lesson?.action || joined;
    setText(this.#action, lesson?.action?.label ?? '');
    this.el.dataset.lesson = String(id);
  }
}
