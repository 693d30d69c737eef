/**
 * `<leasehold-inspector>` in real Chromium, on an in-memory transport in the page: what it draws
 * in its shadow root, that it follows change notices, that it writes user text as text, and that
 * it changes nothing unless the page allows actions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryTransport } from '../../src/index.js';
import { reorder } from '../../src/inspector/dom.js';
import { defineInspector, type LeaseholdInspectorElement } from '../../src/inspector/index.js';
import { byLane, drawLane } from '../../src/inspector/timeline/draw.js';
import { TimelineModel } from '../../src/inspector/timeline/model.js';

const mounted: HTMLElement[] = [];
afterEach(() => mounted.splice(0).forEach((el) => el.remove()));

function mount(transport: InMemoryTransport, setup: (el: LeaseholdInspectorElement) => void = () => {}): ShadowRoot {
  defineInspector();
  const el = document.createElement('leasehold-inspector');
  el.pollMs = null; // notices only: what shows came through one
  setup(el);
  el.transport = transport;
  document.body.append(el);
  mounted.push(el);
  return el.shadowRoot!;
}

const groups = (root: ShadowRoot) => [...root.querySelectorAll('[data-testid="group"]')].map((el) => el.getAttribute('data-group'));

async function deadLetter(transport: InMemoryTransport): Promise<number> {
  const seq = await transport.publish('note-1', { label: 'save' });
  await transport.reject((await transport.claim('w', 1_000))!, 'refused');
  return seq;
}

describe('<leasehold-inspector>', () => {
  it('draws the queue in its shadow root and follows publishes by change notice', async () => {
    const transport = new InMemoryTransport();
    await transport.publish('order-1', { label: 'pay' });
    const root = mount(transport);
    await expect.poll(() => groups(root)).toEqual(['order-1']);
    await transport.publish('order-2', { label: 'ship' }, { delayMs: 60_000 });
    await expect.poll(() => groups(root)).toEqual(['order-1', 'order-2']);
    const delayed = root.querySelector('[data-group="order-2"] [data-testid="message"]');
    expect(delayed?.getAttribute('data-state')).toBe('delayed');
    expect(root.querySelector('[data-testid="inspector-counts"]')?.textContent).toContain('queued 2');
    // Styled inside its own root: the page's document has none of its rules.
    expect(document.querySelector('.chip')).toBeNull();
  });

  it('writes group ids and events as text, never as HTML', async () => {
    const transport = new InMemoryTransport();
    const hostile = '<img src=x onerror="window.__pwned=1">';
    await transport.publish(hostile, { label: hostile });
    const root = mount(transport);
    await expect.poll(() => groups(root)).toEqual([hostile]);
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('.group-name')?.textContent).toBe(hostile);
  });

  it("shows why a parked message failed, from its nack's reason", async () => {
    const transport = new InMemoryTransport();
    await transport.publish('note-1', { label: 'save' });
    await transport.nack((await transport.claim('w', 1_000))!, 60_000, 'HTTP 503');
    const root = mount(transport);
    const chip = () => root.querySelector('[data-group="note-1"] [data-testid="message"]');
    await expect.poll(() => chip()?.getAttribute('data-state')).toBe('parked');
    expect(chip()?.textContent).toContain('HTTP 503 · retry in');
    expect(chip()?.getAttribute('title')).toContain('last error: HTTP 503');
  });

  it('shows dead letters read-only unless the page allows actions', async () => {
    const transport = new InMemoryTransport();
    await deadLetter(transport);
    const root = mount(transport);
    await expect.poll(() => root.querySelectorAll('[data-testid="dead-letter"]').length).toBe(1);
    expect(root.querySelector('[data-testid="dead-letter"]')?.textContent).toContain('1 try: refused');
    expect(root.querySelectorAll('[data-testid="dead-letter"] button')).toHaveLength(0);
  });

  it('redrives and discards a dead letter when actions are allowed', async () => {
    const transport = new InMemoryTransport();
    await deadLetter(transport);
    const second = await deadLetter(transport);
    const root = mount(transport, (el) => (el.actions = true));
    await expect.poll(() => root.querySelectorAll('[data-testid="dead-letter"]').length).toBe(2);
    root.querySelector<HTMLButtonElement>('[aria-label^="redrive"]')!.click();
    await expect.poll(() => groups(root)).toEqual(['note-1']);
    root.querySelector<HTMLButtonElement>(`[data-seq="${second}"] [aria-label^="discard"]`)!.click();
    await expect.poll(() => root.querySelectorAll('[data-testid="dead-letter"]').length).toBe(0);
    expect(await transport.deadLetters()).toEqual([]);
  });

  it('discards a dead letter with what depends on it from its own button', async () => {
    const transport = new InMemoryTransport({ onDeadLetter: 'hold' });
    const seq = await deadLetter(transport);
    await transport.publish('note-1', { label: 'edit' });
    await transport.publish('task-1', { label: 'create' }, { after: seq });
    await transport.publish('other', { label: 'other' });
    const root = mount(transport, (el) => (el.actions = true));
    await expect.poll(() => groups(root)).toEqual(['task-1', 'other', 'note-1']); // note-1 was claimed: last in claim order
    root.querySelector<HTMLButtonElement>(`[aria-label="discard note-1#${seq} with dependents"]`)!.click();
    await expect.poll(() => groups(root)).toEqual(['other']);
    expect(await transport.deadLetters()).toEqual([]);
  });

  it("writes events with the page's preview, and the default again after null", async () => {
    const transport = new InMemoryTransport();
    await transport.publish('note-1', { id: '3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b', op: 'update', text: 'buy oat milk and bread for the weekend' });
    const root = mount(transport);
    const label = () => root.querySelector('[data-testid="message"] .label');
    // The default: the operation and text first, though the uuid is the event's first field.
    await expect.poll(() => label()?.textContent).toMatch(/^#1 op: update · text: buy oat milk/);
    expect(label()?.getAttribute('title')).toContain('"id":"3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b"');
    const el = root.host as LeaseholdInspectorElement;
    el.preview = (event) => `${(event as { op: string }).op}!`;
    await expect.poll(() => label()?.textContent).toBe('#1 update!');
    el.preview = null;
    await expect.poll(() => label()?.textContent).toMatch(/^#1 op: update/);
  });

  it("names each group's state in the words of stats(), a leased one by its worker's short label", async () => {
    const transport = new InMemoryTransport({ onDeadLetter: 'hold' });
    await transport.publish('order-1', { op: 'pay' });
    await transport.claim('consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b', 60_000);
    await deadLetter(transport);
    await transport.publish('note-1', { op: 'edit' });
    await transport.publish('task-1', { op: 'create' }, { after: { group: 'note-1' } });
    const root = mount(transport);
    const state = (group: string) => [root.querySelector(`[data-group="${group}"] [data-testid="group-state"]`)?.textContent, root.querySelector(`[data-group="${group}"] .group-why`)?.textContent];
    await expect.poll(() => state('task-1')[0]).toBe('blocked');
    expect(state('order-1')).toEqual(['leased', 'by consume-3f2a']);
    expect(state('note-1')).toEqual(['held', 'at dead letter #2']);
    expect(state('task-1')[1]).toMatch(/^after #2, #3$/);
    expect(root.querySelector('[data-testid="inspector-counts"]')?.textContent).toBe('queued 3 · groups 3 · ready 0 · leased 1 · waiting 0 · blocked 1 · held 1 · dead 1');
    const chip = root.querySelector('[data-group="order-1"] [data-testid="message"]');
    expect(chip?.querySelector('.state')?.textContent).toBe('leased');
    expect(chip?.querySelector('.detail')?.textContent).toMatch(/^consume-3f2a · \d+\.\d s left$/);
    expect(chip?.getAttribute('title')).toContain('held by consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b');
  });

  it('reads nothing while it is out of the document', async () => {
    const transport = new InMemoryTransport();
    let reads = 0;
    const inspect = transport.inspect.bind(transport);
    transport.inspect = () => (reads++, inspect());
    defineInspector();
    const el = document.createElement('leasehold-inspector');
    el.transport = transport;
    await transport.publish('g', {});
    await new Promise((resolve) => requestAnimationFrame(resolve));
    expect(reads).toBe(0);
    document.body.append(el);
    mounted.push(el);
    await expect.poll(() => reads).toBeGreaterThan(0);
  });

  it('draws a timeline lane per group, with the leases snapshots saw', async () => {
    const transport = new InMemoryTransport();
    await transport.publish('upload-1', { label: 'put' });
    await transport.claim('tab-worker', 30_000);
    const root = mount(transport);
    await expect.poll(() => root.querySelectorAll('[data-testid="tl-lane"][data-lane="upload-1"]').length).toBe(1);
    expect(root.querySelector('[data-testid="timeline"] svg')?.getAttribute('aria-label')).toContain('last minute');
  });

  it('refuses what is not a transport, and defines itself once', () => {
    const Element = defineInspector();
    expect(defineInspector()).toBe(Element);
    const el = document.createElement('leasehold-inspector');
    expect(() => (el.transport = {} as never)).toThrow(TypeError);
    expect(() => (el.pollMs = 0)).toThrow(RangeError);
    expect(() => (el.preview = 'label' as never)).toThrow(TypeError);
    expect(() => defineInspector(3 as unknown as string)).toThrow(TypeError);
  });
});

describe('the timeline', () => {
  it("labels a lease and a worker's lane by the worker's short label, the full id in the tooltip", () => {
    const worker = 'consume-3f2a9c1e-7b4d-4e1f-9a2b-0c1d2e3f4a5b';
    const model = new TimelineModel();
    model.claimed({ seq: 1, groupId: 'note-1', attempt: 1, workerId: worker, expiresAt: 60_000, event: null }, 60_000);
    const scale = { from: 0, to: 60_000, x0: 112, x1: 712 };
    const texts = (g: SVGGElement) => [...g.querySelectorAll('text')].map((t) => t.firstChild?.textContent);
    const group = drawLane(model, 'group', 'note-1', byLane(model, 'group').get('note-1')!, 0, 0, scale, 30_000);
    expect(texts(group)).toContain('consume-3f2a · try 1');
    expect(group.querySelector('[data-testid="tl-lease"] > title')?.textContent).toContain(worker);
    const lane = drawLane(model, 'worker', worker, byLane(model, 'worker').get(worker)!, 0, 0, scale, 30_000);
    expect(texts(lane)[0]).toBe('consume-3f2a');
    expect(lane.querySelector('text > title')?.textContent).toBe(worker);
  });
});

describe('reorder (how the queue view moves rows)', () => {
  /** How many elements `reorder(list, want)` moved: each move removes a node from the list. */
  function movesFor(list: HTMLElement, want: Element[]): number {
    const observer = new MutationObserver(() => {});
    observer.observe(list, { childList: true });
    reorder(list, want);
    const moved = observer.takeRecords().reduce((n, r) => n + r.removedNodes.length, 0);
    observer.disconnect();
    return moved;
  }

  const items = (n: number) => Array.from({ length: n }, (_, i) => Object.assign(document.createElement('li'), { id: `i${i}` }));

  it('moves one row when the front group goes to the back, as a claim does', () => {
    const list = document.createElement('ol');
    const rows = items(200);
    list.append(...rows);
    const want = [...rows.slice(1), rows[0]!];
    expect(movesFor(list, want)).toBe(1);
    expect([...list.children]).toEqual(want);
  });

  it('reaches any order, keeping the nodes, inserting new ones and leaving extra ones for the caller', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let run = 0; run < 300; run++) {
      const list = document.createElement('ol');
      const pool = items(1 + Math.floor(random() * 30));
      const shown = pool.filter(() => random() < 0.7);
      list.append(...shown);
      const want: Element[] = pool.filter(() => random() < 0.8).sort(() => random() - 0.5);
      reorder(list, want);
      const left = [...list.children].filter((el) => want.includes(el));
      expect(left).toEqual(want);
      expect(list.children.length).toBe(new Set([...want, ...shown]).size);
    }
  });
});
