/**
 * The inspector's look. VIEW_CSS styles the views (groups, message chips, dead letters) through
 * custom properties, so a page can theme them; THEME_CSS gives those properties their values and
 * the base look inside the element's shadow root. Text wraps at word ends and is never cut: a
 * card has a fixed width and grows in height for a long label (a 150 px card cut "held at a dead
 * let…"); what updates while time runs (countdowns) keeps its width with tabular digits. Every
 * state has a colour AND an icon and a word.
 */

/** The views' rules, for a page that places the views itself (the demo does). */
export const VIEW_CSS = `
.groups { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.4rem; max-height: 70vh; overflow-y: auto; }
.group {
  display: grid;
  grid-template-columns: 10.5rem minmax(0, 1fr);
  gap: 0.6rem;
  align-items: center;
  padding: 0.35rem 0.4rem;
  border-radius: 8px;
  border: 1px solid var(--line);
  /* Off-screen rows of a long queue skip style, layout and paint entirely. */
  content-visibility: auto;
  contain-intrinsic-size: auto 4.9rem;
}
.group[data-status='next'] { border-color: var(--accent); box-shadow: inset 3px 0 0 var(--accent); }
.group-head { min-width: 0; }
.group-title { display: flex; gap: 0.3rem; font-weight: 600; min-width: 0; }
.position { color: var(--muted); font-variant-numeric: tabular-nums; min-width: 1.8rem; }
.group-name { min-width: 0; overflow-wrap: anywhere; }
.group-meta { display: flex; flex-wrap: wrap; gap: 0 0.4rem; font-size: 0.75rem; color: var(--muted); }
.priority { font-weight: 700; color: var(--ink); background: var(--ready-bg); border-radius: 4px; padding: 0 0.3rem; }
.group-word { font-weight: 700; }
.group-why { min-width: 0; overflow-wrap: anywhere; }
.group[data-state='leased'] .group-word { color: var(--leased); }
.group[data-status='parked'] .group-word { color: var(--parked); }
.group[data-status='delayed'] .group-word, .group[data-status='debouncing'] .group-word { color: var(--delayed); }
.group[data-state='held'] .group-word { color: var(--held); }
.group[data-status='next'] .group-word, .group[data-status='next'] .group-why { color: var(--accent); font-weight: 600; }
/* Cards wrap onto another line rather than run off the row's edge. */
.chips { list-style: none; display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.35rem; padding: 0; margin: 0; }
.chip {
  flex: none;
  width: 9.6rem;
  min-height: 4.1rem;
  padding: 0.25rem 0.4rem;
  border-radius: 6px;
  border-left: 4px solid var(--ready);
  background: var(--ready-bg);
  font-size: 0.75rem;
  display: grid;
  grid-template-rows: auto auto auto;
  align-content: start;
}
/* At word ends; inside a word only when it alone is wider than the card (a long id). */
.chip > span { min-width: 0; overflow-wrap: anywhere; }
.chip-top { display: flex; gap: 0.25rem; align-items: center; font-weight: 700; }
.attempt { margin-left: auto; font-weight: 500; color: var(--muted); font-variant-numeric: tabular-nums; }
.detail { font-variant-numeric: tabular-nums; color: var(--muted); }
.chip[data-state='ready'] .chip-top { color: var(--ready); }
.chip[data-state='leased'] { border-color: var(--leased); background: var(--leased-bg); }
.chip[data-state='leased'] .chip-top, .chip[data-state='leased'] .detail { color: var(--leased); }
.chip[data-state='expired'] { border-color: var(--expired); background: var(--expired-bg); border-left-style: dashed; }
.chip[data-state='expired'] .chip-top, .chip[data-state='expired'] .detail { color: var(--expired); }
.chip[data-state='parked'] { border-color: var(--parked); background: var(--parked-bg); }
.chip[data-state='parked'] .chip-top, .chip[data-state='parked'] .detail { color: var(--parked); }
.chip[data-state='delayed'] { border-color: var(--delayed); background: var(--delayed-bg); border-left-style: dotted; }
.chip[data-state='delayed'] .chip-top, .chip[data-state='delayed'] .detail { color: var(--delayed); }
.chip[data-state='held'] { border-color: var(--held); background: var(--held-bg); border-left-style: double; }
.chip[data-state='held'] .chip-top, .chip[data-state='held'] .detail { color: var(--held); }
.more { flex: none; align-self: center; color: var(--muted); font-size: 0.8rem; white-space: nowrap; }
.dead { list-style: none; padding: 0; margin: 0; display: grid; gap: 0.3rem; }
.dead-letter { font-size: 0.85rem; background: var(--dead-bg); border-radius: 6px; padding: 0.25rem 0.5rem; overflow-wrap: anywhere; }
.state-dead { color: var(--dead); font-weight: 700; }
@media (max-width: 560px) {
  .group { grid-template-columns: minmax(0, 1fr); gap: 0.3rem; }
  /* A phone scrolls a group's cards sideways: whole cards, one row per group. */
  .chips { flex-wrap: nowrap; overflow-x: auto; padding-bottom: 0.2rem; }
}
`;

/** The custom properties and base rules of `<leasehold-inspector>`'s shadow root. */
export const THEME_CSS = `
:host {
  display: block;
  --bg: #f6f7f9; --panel: #fff; --ink: #17202c; --muted: #5b6676; --line: #dde2e8; --accent: #1f6feb;
  --ready: #475569; --ready-bg: #f1f5f9; --leased: #1d4ed8; --leased-bg: #dbeafe;
  --expired: #a14b06; --expired-bg: #fef3c7; --parked: #6d28d9; --parked-bg: #ede9fe;
  --dead: #b91c1c; --dead-bg: #fee2e2; --delayed: #0f766e; --delayed-bg: #ccfbf1; --held: #9f1239; --held-bg: #ffe4e6;
  font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  font-size: 15px; line-height: 1.45; color: var(--ink); background: var(--panel);
  border: 1px solid var(--line); border-radius: 10px; padding: 0.5rem 0.9rem 0.8rem;
}
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
h2 { font-size: 1rem; margin: 0.6rem 0 0.3rem; }
button { font: inherit; border: 1px solid var(--line); background: var(--panel); color: var(--ink); border-radius: 6px; padding: 0.15rem 0.5rem; cursor: pointer; margin-left: 0.3rem; }
button:hover:not(:disabled) { border-color: var(--accent); }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.hint, .empty { color: var(--muted); font-size: 0.85rem; }
.icon { flex: none; vertical-align: -2px; }
.summary { margin: 0.2rem 0 0.4rem; color: var(--muted); font-size: 0.85rem; font-variant-numeric: tabular-nums; }
.counts { display: flex; flex-wrap: wrap; gap: 0.3rem 0.9rem; margin: 0; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
.counts b { font-weight: 700; }
.error { color: var(--dead); font-weight: 600; font-size: 0.85rem; }
`;
