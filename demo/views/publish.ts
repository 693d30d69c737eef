/**
 * Publishing by hand (any group name and label, rendered as text wherever they appear) and a
 * bulk load for the 200-group stress view. The dead letters are leasehold/inspector's view.
 */
import type { DemoEvent } from '../workers.ts';
import { h } from './dom.ts';

export interface PublishRequest {
  groupId: string;
  event: DemoEvent;
  priority: number;
  delayMs: number;
}

export class PublishForm {
  readonly el: HTMLElement;

  constructor(onPublish: (request: PublishRequest) => void, onBulk: () => void) {
    const group = h('input', { attrs: { name: 'group', required: '', value: 'order-1', 'data-testid': 'publish-group', autocomplete: 'off' } });
    const label = h('input', { attrs: { name: 'label', required: '', value: 'pay', 'data-testid': 'publish-label', autocomplete: 'off' } });
    const priority = h('select', { attrs: { name: 'priority', 'data-testid': 'publish-priority' } }, ...[0, 1, 2, 3, 4].map((p) => h('option', { text: `P${p}`, attrs: { value: String(p) } })));
    const delay = h('select', { attrs: { name: 'delay', 'data-testid': 'publish-delay' } }, ...[0, 2_000, 5_000].map((ms) => h('option', { text: ms ? `${ms / 1000} s` : 'none', attrs: { value: String(ms) } })));
    const behaviour = h(
      'select',
      { attrs: { name: 'behaviour', 'data-testid': 'publish-behaviour' } },
      h('option', { text: 'works', attrs: { value: 'ok' } }),
      h('option', { text: 'asks to be parked 5 s once', attrs: { value: 'park' } }),
      h('option', { text: 'always fails (poison)', attrs: { value: 'poison' } }),
    );
    const form = h(
      'form',
      { class: 'publish', attrs: { 'aria-label': 'Publish a message' } },
      h('label', {}, h('span', { text: 'Group' }), group),
      h('label', {}, h('span', { text: 'Label' }), label),
      h('label', {}, h('span', { text: 'Priority' }), priority),
      h('label', {}, h('span', { text: 'Delay' }), delay),
      h('label', {}, h('span', { text: 'Behaviour' }), behaviour),
      h('button', { text: 'Publish', attrs: { type: 'submit', 'data-testid': 'publish' } }),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const ev: DemoEvent = { label: label.value };
      if (behaviour.value === 'park') ev.parkMs = 5_000;
      if (behaviour.value === 'poison') ev.poison = true;
      onPublish({ groupId: group.value, event: ev, priority: Number(priority.value), delayMs: Number(delay.value) });
    });
    const bulk = h('button', { text: 'Load 200 groups × 10 messages', attrs: { type: 'button', 'data-testid': 'bulk' }, on: { click: onBulk } });
    this.el = h('div', {}, form, h('p', { class: 'hint' }, bulk, ' — to see the page keep up with a big backlog.'));
  }
}
